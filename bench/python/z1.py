#!/usr/bin/env python3
"""Z1 (issue 18): a Zipf workload (exponent 0.99 over 10,000 keys) through our Python
decorator with L1 and Redis, beside the reference SDK (cachekit==0.24.1 from PyPI, as in
sdk_compare.py) on the same trace, each side on its own namespace of one private
redis-server; each side replays the trace twice, in two processes (the second one
starts with an empty L1 and a warm Redis, as after a restart). Prints one JSON line: figure = our mean us per call, anchor = the
reference's, and per side each layer's (l1, l2, miss) share of calls and p50/p90/p99/p99.9.

    CACHEKIT_BUILD=<builddir> /usr/bin/python3 bench/python/z1.py
    CACHEKIT_BENCH_Z1_CALLS (default 100000) sets the trace length.
"""
from __future__ import annotations

import bisect
import json
import os
import random
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run  # noqa: E402
import sdk_compare  # noqa: E402

KEYS, EXPONENT, SEED = 10_000, 0.99, 18


def zipf_trace(calls: int) -> list[int]:
    """Zipf ranks over KEYS, shuffled onto key numbers so the hot keys are not 0, 1, 2..."""
    rng = random.Random(SEED)
    cdf, total = [], 0.0
    for rank in range(1, KEYS + 1):
        total += rank ** -EXPONENT
        cdf.append(total)
    perm = list(range(KEYS))
    rng.shuffle(perm)
    return [perm[min(bisect.bisect_left(cdf, rng.random() * total), KEYS - 1)] for _ in range(calls)]


def percentile(sorted_ns: list[int], q: float) -> float:
    return round(sorted_ns[min(len(sorted_ns) - 1, int(q * len(sorted_ns)))] / 1000, 2) if sorted_ns else None


def summarise(layers: dict[str, list[int]]) -> dict:
    calls = sum(len(v) for v in layers.values())
    out = {"mean_us": round(sum(sum(v) for v in layers.values()) / calls / 1000, 3)}
    for name, ns in layers.items():
        ns = sorted(ns)
        out[name] = {"share": round(len(ns) / calls, 4), "calls": len(ns),
                     **{f"p{str(q * 100).rstrip('0').rstrip('.')}_us": percentile(ns, q)
                        for q in (0.5, 0.9, 0.99, 0.999)}}
    return out


def side(python: str, name: str, url: str, trace_file: str, env: dict) -> dict:
    """The trace replayed by two processes in turn on one namespace: the first starts with
    both layers empty, the second (a restart) with an empty L1 and a warm Redis."""
    layers: dict[str, list[int]] = {"l1": [], "l2": [], "miss": []}
    namespace = f"z1-{name}-{os.getpid()}"
    for _ in range(2):
        r = subprocess.run([python, os.path.join(HERE, "z1_worker.py"), name, url, trace_file, namespace],
                           capture_output=True, text=True, env=env, check=True)
        for layer, ns in json.loads(r.stdout.strip().splitlines()[-1]).items():
            layers[layer] += ns
    return summarise(layers)


def main() -> int:
    calls = int(os.environ.get("CACHEKIT_BENCH_Z1_CALLS", "100000"))
    run.setup_import()
    build, out = run.build_paths()
    ref_py = sdk_compare.reference_python(build)
    if ref_py is None:
        print(json.dumps({"case": "Z1", "skipped": "PyPI unreachable: cannot install the reference SDK"}))
        return 0
    with tempfile.NamedTemporaryFile("w", prefix="ck-z1-", suffix=".trace", delete=False) as f:
        f.write("\n".join(map(str, zipf_trace(calls))) + "\n")
        trace_file = f.name
    try:
        with run.bench_redis() as url:
            if url is None:
                print(json.dumps({"case": "Z1", "skipped": "no redis-server and no CACHEKIT_BENCH_REDIS_URL"}))
                return 0
            ours = side("/usr/bin/python3", "ours", url, trace_file, sdk_compare.ours_env(out))
            ref = side(ref_py, "ref", url, trace_file, sdk_compare.pyvenv.clean_env())
    finally:
        os.unlink(trace_file)
    print(json.dumps({"case": "Z1", "figure": ours["mean_us"], "anchor": ref["mean_us"], "unit": "us",
                      "ratio": round(ours["mean_us"] / ref["mean_us"], 3), "target": None, "better": "lower",
                      "anchor_desc": f"the reference SDK (cachekit==0.24.1) on the same trace: Zipf {EXPONENT} over "
                                     f"{KEYS} keys, {calls} calls replayed by two processes in turn, L1 + Redis, mean per call "
                                     "(report only)",
                      "calls": calls, "ours": ours, "reference": ref}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
