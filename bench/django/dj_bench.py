#!/usr/bin/env python3
"""The DJ benchmarks (issue 30): cachekit.django.CacheKitCache beside Django's own
RedisCache and django-redis, on one private redis-server, in one run.

    CACHEKIT_BUILD=<meson builddir> /usr/bin/python3 bench/django/dj_bench.py [DJ-sync DJ-async DJ-async50 DJ-l1 DJ-conns]

(bench/run DJ-... does this.) Steps: a venv under <builddir>/bench/venv-django-bench with
bench/django/requirements.txt (skipped, with why, when PyPI cannot be reached); our
wrapper's extension built against the build tree; a private redis-server; the build's
bench/netem/delay_relay in front of it (250 us more per round trip, as for B9) when it is
built. Then, for each link (+250 us, loopback) and each backend, one process of
dj_worker.py (so memory is per backend), all on the same server, one after another.

Phases (dj_worker.py): get, get-miss, set, mget, mset, incr, delete; CACHEKIT_DJ_CALLS
calls each (default 1,000; mget/mset a tenth of that, of 10 keys each), a value that
pickles to about 150 B, one warm-up run and CACHEKIT_DJ_RUNS timed runs (default 10),
the median run per column. One JSON line per (ID, column, link) on stdout:
{"case": "DJ-sync:get:+250us", "id", "column", "link", "figure": ours, "anchor": the
best anchor, "unit": "calls/s", "ratio", "target", "better": "higher", "anchor_desc",
"backends": calls/s of all three, "memory_mib": VmRSS of each backend's process},
then one line per ID with "case": the ID (what bench/report keeps): its worst column's
ratio, since the target holds for every column; a human table on stderr.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path[:0] = [os.path.join(ROOT, "tests", "interop"), os.path.join(ROOT, "wrappers", "python", "tests"),
                os.path.join(ROOT, "bench", "netem"), os.path.join(ROOT, "bench")]

ANCHORS = ["django", "django-redis"]
BACKENDS = ANCHORS + ["ours"]
COLUMNS = ["get", "get-miss", "set", "mget", "mset", "incr", "delete"]
# ID -> (the worker's result key, target ratio against the best anchor)
THROUGHPUT = {"DJ-sync": ("sync", 1.0), "DJ-async": ("async", 1.0), "DJ-async50": ("async50", 1.2)}
IDS = [*THROUGHPUT, "DJ-l1", "DJ-conns"]
DESC = {"sync": "direct sync calls", "async": "one awaited call at a time",
        "async50": "asyncio.gather of 50 calls in flight"}
NAMES = {"django": "Django's RedisCache", "django-redis": "django-redis", "ours": "cachekit.django"}
L1_MISSING = "not available (no L1 in the Django backend yet)"


def skip_all(wanted: list[str], why: str) -> int:
    for i in wanted:
        print(json.dumps({"case": i, "skipped": why}), flush=True)
    return 0


def run_worker(python: str, env: dict, backend: str, url: str, calls: int, runs: int, extra: list[str]) -> dict:
    r = subprocess.run([python, os.path.join(HERE, "dj_worker.py"), backend, url, str(calls), str(runs), *extra],
                       env=env, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"dj_bench: the {backend} worker failed:\n{r.stdout}{r.stderr}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def measure(python: str, env: dict, server, links: dict[str, str], calls: int, runs: int) -> dict:
    """{link: {backend: the worker's result}}; FLUSHALL between workers, so each starts empty."""
    out = {}
    for link, url in links.items():
        out[link] = {}
        for backend in BACKENDS:
            extra = ["--conns", str(server.port), "--incr-commands", str(server.port)] if link == "loopback" else []
            server.command("FLUSHALL")
            out[link][backend] = run_worker(python, env, backend, url, calls, runs, extra)
    return out


def mib(kib: int) -> float:
    return round(kib / 1024, 1)


def rows(results: dict, wanted: list[str], calls: int, runs: int, relay_sched: str | None) -> list[dict]:
    out = []
    for link, by_backend in results.items():
        memory = {b: mib(r["vmrss_kib"]) for b, r in by_backend.items()}
        common = {"link": link, "calls": calls, "runs": runs, "memory_mib": memory,
                  "payload_bytes": by_backend["ours"]["payload_bytes"]}
        if link != "loopback":
            common["relay_sched"] = relay_sched
        for case, (key, target) in THROUGHPUT.items():
            if case not in wanted:
                continue
            for col in COLUMNS:
                values = {b: by_backend[b][key][col] for b in BACKENDS}
                best = max(ANCHORS, key=lambda b: values[b])
                row = {"case": f"{case}:{col}:{link}", "id": case, "column": col, "figure": values["ours"],
                       "anchor": values[best], "unit": "calls/s", "ratio": round(values["ours"] / values[best], 3),
                       "target": target, "better": "higher",
                       "anchor_desc": f"{NAMES[best]}, the best anchor of this column, {DESC[key]}, "
                                      "same run and server",
                       "backends": values, **common}
                if case == "DJ-async50":
                    row["note"] = "report only until the multiplexed-I/O issue"
                if col == "incr" and link != "loopback":
                    # a get is one round trip: 250 us dominate both, so this ratio counts an incr's round trips
                    row["incr_round_trips"] = {b: round(by_backend[b][key]["get"] / values[b], 2) for b in BACKENDS}
                if col == "incr" and "incr_commands" in by_backend["ours"]:
                    # the server's count: a script's inner calls count too, so this is not round trips
                    row["incr_server_commands"] = {b: by_backend[b]["incr_commands"] for b in BACKENDS}
                out.append(row)
    for case, (_, target) in THROUGHPUT.items():
        mine = [r for r in out if r.get("id") == case]
        if mine:  # bench/report keeps a line whose case is the ID: the worst column, as the target is for every one
            worst = min(mine, key=lambda r: r["ratio"])
            out.append({"case": case, "figure": worst["figure"], "anchor": worst["anchor"], "unit": "calls/s",
                        "ratio": worst["ratio"], "target": target, "better": "higher",
                        "anchor_desc": f"the worst column and link ({worst['column']}, {worst['link']}) of "
                                       f"{case}: " + worst["anchor_desc"],
                        "ratios": {f"{r['column']}:{r['link']}": r["ratio"] for r in mine},
                        **({"note": worst["note"]} if "note" in worst else {})})
    if "DJ-l1" in wanted:
        lag = results.get("+250us")
        out.append({"case": "DJ-l1", "skipped": L1_MISSING, "target": 20.0, "better": "higher",
                    **({"anchor_get_per_s_at_250us": max(lag[b]["sync"]["get"] for b in ANCHORS)} if lag else {})})
    if "DJ-conns" in wanted and "loopback" in results:
        by_backend = results["loopback"]
        values = {b: by_backend[b]["conns"] for b in BACKENDS}
        best = min(ANCHORS, key=lambda b: values[b])
        out.append({"case": "DJ-conns", "id": "DJ-conns", "figure": values["ours"], "anchor": values[best],
                    "unit": "connections", "ratio": round(values["ours"] / values[best], 3) if values[best] else None,
                    "target": None, "target_abs": 2, "met": values["ours"] <= 2, "better": "lower",
                    "anchor_desc": f"{NAMES[best]}, the anchor with the fewest connections (50 threads, each with its own "
                                   "cache instance, one get each, all at once; CLIENT LIST)",
                    "backends": values, "link": "loopback",
                    "memory_mib": {b: mib(r["vmrss_kib"]) for b, r in by_backend.items()}})
    return out


def table(lines: list[dict]) -> str:
    """The human view: one row per (ID, link), the columns' ratios, ours' calls/s beside."""
    text = ["", "| ID | link | " + " | ".join(COLUMNS) + " | memory MiB (django / django-redis / ours) |",
            "|---|---|" + "---|" * len(COLUMNS) + "---|"]
    grouped: dict[tuple, dict] = {}
    for r in lines:
        if r.get("id") in THROUGHPUT:
            grouped.setdefault((r["id"], r["link"]), {})[r["column"]] = r
    for (case, link), cols in grouped.items():
        m = next(iter(cols.values()))["memory_mib"]
        cells = [f"{cols[c]['figure']:.0f} ({cols[c]['ratio']:.2f}x)" for c in COLUMNS]
        text.append(f"| {case} | {link} | " + " | ".join(cells) + f" | {m['django']} / {m['django-redis']} / {m['ours']} |")
    for r in lines:
        if r["case"] == "DJ-l1":
            text.append(f"| DJ-l1 | | {r['skipped']} |")
        elif r["case"] == "DJ-conns":
            b, m = r["backends"], r["memory_mib"]
            text.append(f"| DJ-conns | loopback | connections: django {b['django']}, django-redis "
                        f"{b['django-redis']}, ours {b['ours']} (target <= 2) | "
                        f"{m['django']} / {m['django-redis']} / {m['ours']} |")
    text.append("(cells: ours in calls/s, and ours / the best anchor)")
    return "\n".join(text)


def main(argv: list[str]) -> int:
    wanted = argv or IDS
    for w in wanted:
        if w not in IDS:
            print(f"dj_bench: unknown case {w!r}; known: {', '.join(IDS)}", file=sys.stderr)
            return 2
    import pyvenv
    from redis_procs import RedisServer
    import shutil
    build = os.environ.get("CACHEKIT_BUILD", "build-bench")
    if not os.path.isabs(build):
        build = os.path.join(ROOT, build)
    try:
        calls = int(os.environ.get("CACHEKIT_DJ_CALLS", "1000"))
        runs = int(os.environ.get("CACHEKIT_DJ_RUNS", "10"))
    except ValueError:
        calls = runs = 0
    if calls < 10 or runs < 1:
        raise SystemExit("dj_bench: CACHEKIT_DJ_CALLS must be an integer of at least 10 and CACHEKIT_DJ_RUNS one of at least 1")
    if not shutil.which("redis-server"):
        return skip_all(wanted, "redis-server is not installed")
    if wanted == ["DJ-l1"]:  # nothing to measure: the line rows() prints, without the anchor's get
        print(json.dumps(rows({}, wanted, calls, runs, None)[0]), flush=True)
        return 0
    try:
        python = pyvenv.ensure(os.path.join(build, "bench", "venv-django-bench"), os.path.join(HERE, "requirements.txt"))
    except SystemExit as exc:
        if exc.code == pyvenv.SKIP:
            return skip_all(wanted, "the package index cannot be reached: cannot install bench/django/requirements.txt")
        raise
    from python_interop import build_ours
    env = build_ours(build, ROOT, os.path.join(build, "bench", "django"))
    env["PYTHONPATH"] += os.pathsep + os.path.join(ROOT, "wrappers", "python", "tests")  # redis_procs
    relay = os.path.join(build, "bench", "netem", "delay_relay")
    with tempfile.TemporaryDirectory(prefix="ck-dj-") as tmp:
        server = RedisServer(tmp)
        try:
            if os.path.exists(relay):
                from b9 import delay_relay
                with delay_relay(relay, f"127.0.0.1:{server.port}") as (where, sched):
                    lagged = measure(python, env, server, {"+250us": f"redis://{where}/0"}, calls, runs)
            else:
                lagged, sched = {}, None
                print("dj_bench: bench/netem/delay_relay is not built: the +250us link is left out", file=sys.stderr)
            results = {**lagged, **measure(python, env, server, {"loopback": server.url}, calls, runs)}
        finally:
            server.stop()
    lines = rows(results, wanted, calls, runs, sched)
    for r in lines:
        print(json.dumps(r), flush=True)
    print(table(lines), file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
