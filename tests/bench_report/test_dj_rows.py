"""bench/django/dj_bench.py's result lines from canned worker results: figure = ours,
anchor = the best anchor per column, the per-ID line bench/report keeps (the worst
column), DJ-l1 skipped and DJ-conns. No benchmark runs here."""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench", "django"))
import dj_bench  # noqa: E402

COLUMNS = dj_bench.COLUMNS


def worker(base: float, conns: int, rss_kib: int, incr_commands: float) -> dict:
    speeds = {c: base + i for i, c in enumerate(COLUMNS)}
    return {"payload_bytes": 150, "sync": dict(speeds), "async": {c: v / 2 for c, v in speeds.items()},
            "async50": {c: v * 2 for c, v in speeds.items()}, "vmrss_kib": rss_kib, "conns": conns,
            "incr_commands": incr_commands}


RESULTS = {"loopback": {"django": worker(100.0, 51, 40960, 2.0), "django-redis": worker(200.0, 49, 51200, 3.0),
                        "ours": worker(300.0, 2, 30720, 1.0)}}
RESULTS["loopback"]["ours"]["sync"]["get"] = 150.0  # below django-redis's 200: the worst column


def lines(wanted=dj_bench.IDS):
    return {r["case"]: r for r in dj_bench.rows(RESULTS, list(wanted), 50, 2, None)}


def test_column_against_the_best_anchor():
    r = lines()["DJ-sync:set:loopback"]
    assert (r["figure"], r["anchor"], r["ratio"]) == (302.0, 202.0, round(302 / 202, 3))
    assert r["backends"] == {"django": 102.0, "django-redis": 202.0, "ours": 302.0}
    assert r["memory_mib"] == {"django": 40.0, "django-redis": 50.0, "ours": 30.0}
    assert lines()["DJ-sync:incr:loopback"]["incr_server_commands"] == {"django": 2.0, "django-redis": 3.0, "ours": 1.0}


def test_incr_round_trips_on_the_lagged_link():
    lagged = {b: dict(w, sync=dict(w["sync"], get=2 * w["sync"]["incr"])) for b, w in RESULTS["loopback"].items()}
    r = {x["case"]: x for x in dj_bench.rows({"+250us": lagged}, ["DJ-sync"], 50, 2, "fifo")}["DJ-sync:incr:+250us"]
    assert r["incr_round_trips"] == {"django": 2.0, "django-redis": 2.0, "ours": 2.0} and r["relay_sched"] == "fifo"


def test_per_id_line_is_the_worst_column():
    r = lines()["DJ-sync"]
    assert r["ratio"] == 0.75 and r["target"] == 1.0 and "get, loopback" in r["anchor_desc"]
    assert lines()["DJ-async50"]["target"] == 1.2 and "note" in lines()["DJ-async50"]


def test_l1_is_skipped_and_conns_counted():
    got = lines()
    assert got["DJ-l1"]["skipped"] == dj_bench.L1_MISSING
    c = got["DJ-conns"]
    assert (c["figure"], c["anchor"], c["met"], c["better"]) == (2, 49, True, "lower")


def test_only_the_wanted_ids():
    got = lines(["DJ-conns"])
    assert list(got) == ["DJ-conns"]
    assert "| DJ-sync" not in dj_bench.table(list(got.values()))
