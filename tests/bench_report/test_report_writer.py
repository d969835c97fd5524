"""bench/report's writer (bench/reporting/writer.py) on canned results: the met/not-met
decision, latest.json's shape, the generated markdown table and its replacement between
the markers of docs/performance.md. No benchmark runs here."""
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from reporting import writer  # noqa: E402

MACHINE = {"cpu": "Test CPU", "cores": 2, "kernel": "6.1", "load_start": [1.0, 0.5, 0.2],
           "load_end": [1.5, 0.6, 0.2], "date": "2026-12-01 18:00 UTC"}
VERSIONS = {"reference SDK (PyPI cachekit)": "0.24.1", "hiredis": "0.14.1"}
CANNED = [
    {"case": "B3", "figure": 30.0, "anchor": 27.0, "unit": "ns", "ratio": 1.111, "target": 1.2, "better": "lower",
     "anchor_desc": "raw L1 hit"},
    {"case": "B8-100", "figure": 60.0, "anchor": 50.0, "unit": "us", "ratio": 1.2, "target": 1.15, "better": "lower",
     "anchor_desc": "raw hiredis GET"},
    {"case": "C2", "figure": 300000.0, "anchor": 100000.0, "unit": "keys/s", "ratio": 3.0, "target": 2.0,
     "better": "higher", "anchor_desc": "one node"},
    {"case": "H2-zipf", "figure": 0.41, "anchor": 0.40, "unit": "ratio", "ratio": 1.025, "target": None,
     "better": "higher", "anchor_desc": "exact LRU"},
    {"case": "Z1", "figure": 47.7, "anchor": 136.2, "unit": "us", "ratio": 0.35, "target": None, "better": "lower",
     "calls": 10000,
     "ours": {"l1": {"share": 0.712, "p50_us": 10.4, "p90_us": 15.0, "p99_us": 33.7, "p99.9_us": 59.0},
              "l2": {"share": 0.144, "p50_us": 41.6, "p90_us": 64.6, "p99_us": 3604.2, "p99.9_us": 5054.1},
              "miss": {"share": 0.144, "p50_us": 80.7, "p90_us": 128.5, "p99_us": 3131.4, "p99.9_us": 5285.6}},
     "reference": {"l1": {"share": 0.712, "p50_us": 34.7, "p90_us": 56.5, "p99_us": 102.3, "p99.9_us": 295.7},
                   "l2": {"share": 0.144, "p50_us": 110.6, "p90_us": 153.2, "p99_us": 3839.0, "p99.9_us": 5643.3},
                   "miss": {"share": 0.144, "p50_us": None, "p90_us": 452.2, "p99_us": 5540.8, "p99.9_us": 6043.6}}},
    {"case": "B9", "skipped": "netem (sch_netem) is not available in this kernel", "target": 0.9,
     "better": "higher"},
    {"case": "R1", "error": "bench/run exited 101 without a result: cargo | boom"},
]


def doc():
    return writer.document(CANNED, MACHINE, VERSIONS, "bench/report --quick")


def test_met_follows_the_better_direction():
    assert writer.met(CANNED[0]) is True       # lower, 1.111 <= 1.2
    assert writer.met(CANNED[1]) is False      # lower, 1.2 > 1.15
    assert writer.met(CANNED[2]) is True       # higher, 3.0 >= 2.0
    assert writer.met(CANNED[3]) is None       # no target: report only
    assert writer.met(CANNED[4]) is None       # skipped


def test_document_has_every_case_with_status_machine_and_versions(tmp_path):
    d = doc()
    assert [c["case"] for c in d["cases"]] == [c["case"] for c in CANNED]
    assert [c["status"] for c in d["cases"]] == ["met", "not met", "met", "report only", "report only",
                                                  "skipped", "error"]
    assert d["summary"] == {"met": 2, "not met": 1, "report only": 2, "skipped": 1, "error": 1}
    path = tmp_path / "latest.json"
    writer.write_json(d, str(path))
    back = json.loads(path.read_text())
    assert back["machine"]["cpu"] == "Test CPU" and back["machine"]["load_end"] == [1.5, 0.6, 0.2]
    assert back["versions"]["reference SDK (PyPI cachekit)"] == "0.24.1"
    assert back["cases"][1]["met"] is False and back["cases"][1]["target"] == 1.15


def test_summary_table_rows():
    md = writer.summary_table(doc())
    assert md.startswith(writer.BEGIN) and md.endswith(writer.END)
    assert "| B3 | 30 | 27 | ns | 1.111 | <= 1.2 | met |" in md
    assert "| B8-100 | 60 | 50 | us | 1.2 | <= 1.15 | not met |" in md
    assert "| C2 | 300,000 | 100,000 | keys/s | 3 | >= 2 | met |" in md
    assert "| H2-zipf | 0.41 | 0.4 | ratio | 1.025 | report only | report only |" in md
    assert "| B9 | | | | | >= 0.9 | skipped: netem (sch_netem) is not available in this kernel |" in md
    assert "| R1 | | | | | report only | error: bench/run exited 101 without a result: cargo / boom |" in md
    assert "| Z1 | 47.7 | 136.2 | us | 0.35 | report only | report only |" in md
    assert "Test CPU, 2 cores, kernel 6.1" in md and "hiredis 0.14.1" in md


def test_z1_layer_table():
    md = writer.summary_table(doc())
    assert "Z1 per layer (10000 calls per process, two processes per side), us:" in md
    assert "| L1 hit | 71.2% | 10.4 | 15 | 33.7 | 59 | 34.7 | 56.5 | 102.3 | 295.7 |" in md
    assert "| L2 hit | 14.4% | 41.6 | 64.6 | 3,604 | 5,054 | 110.6 | 153.2 | 3,839 | 5,643 |" in md
    assert "| miss | 14.4% | 80.7 | 128.5 | 3,131 | 5,286 |  | 452.2 | 5,541 | 6,044 |" in md
    no_z1 = writer.document([c for c in CANNED if c["case"] != "Z1"], MACHINE, VERSIONS, "x")
    assert "Z1 per layer" not in writer.summary_table(no_z1)


def test_replace_section_keeps_hand_written_text():
    section = writer.summary_table(doc())
    before = "# Performance\n\nhand-written intro\n\n" + writer.BEGIN + "\nold table\n" + writer.END + "\n\n## E1\nkept\n"
    after = writer.replace_section(before, section)
    assert after.startswith("# Performance\n\nhand-written intro\n\n")
    assert after.endswith("\n\n## E1\nkept\n")
    assert "old table" not in after and section in after
    assert writer.replace_section(after, section) == after  # idempotent


def test_replace_section_appends_when_markers_are_absent():
    after = writer.replace_section("# Performance\n\ntext\n", "SECTION")
    assert after == "# Performance\n\ntext\n\nSECTION\n"


def test_merge_keeps_cases_not_rerun():
    old = [{"case": "B3", "figure": 1.0}, {"case": "B9", "skipped": "x"}]
    new = [{"case": "B9", "figure": 2.0}, {"case": "Z1", "figure": 3.0}]
    assert writer.merge(old, new) == [{"case": "B3", "figure": 1.0}, {"case": "B9", "figure": 2.0},
                                      {"case": "Z1", "figure": 3.0}]
