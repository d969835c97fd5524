"""The L1 hit-ratio curve for bench/report's plot: H1's trace shape (Zipf 1.0) at several
byte budgets, the L1 beside exact LRU (and beside the L1 with TinyLFU admission), from bench/h2_bench's
H1curve benchmarks."""
from __future__ import annotations

import json
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def h1_curve(env: dict) -> list[dict]:
    build = env.get("CACHEKIT_BENCH_BUILD", os.path.join(ROOT, "build-bench"))
    binary = os.path.join(build, "bench", "h2_bench")
    if not os.path.exists(binary):
        return []
    r = subprocess.run([binary, "--benchmark_format=json", "--benchmark_filter=^H1curve/"],
                       capture_output=True, text=True, env=env)
    if r.returncode != 0:
        return []
    points = []
    for b in json.loads(r.stdout)["benchmarks"]:
        points.append({"budget_mib": int(b["name"].split("/")[1]), "l1": b["hit_ratio_l1"],
                       "lru": b["hit_ratio_lru"], "wtinylfu": b["hit_ratio_wtinylfu"]})
    return points
