#!/usr/bin/env python3
"""bench/compare_builds.py BEFORE_BUILD AFTER_BUILD [ROUNDS]: B3, E3 and B8c
ratios of two release build trees (each configured as bench/run does), run
alternately so both sides see the same moments of a noisy machine."""
import json
import subprocess
import sys

PAIRS = {"B3": ("B3/cachekit", "B3/anchor"), "E3": ("E3/encrypted", "E3/plain"),
         "B8c-100": ("B8c-100/cachekit", "B8c-100/anchor"), "B8c-14k": ("B8c-14k/cachekit", "B8c-14k/anchor")}


def run(build, binary, pattern, metric):
    out = subprocess.run([f"{build}/bench/cache/{binary}", "--benchmark_format=json",
                          "--benchmark_filter=" + pattern, "--benchmark_repetitions=5",
                          "--benchmark_min_time=0.1", "--benchmark_enable_random_interleaving=true"],
                         capture_output=True, text=True, check=True).stdout
    times = {}
    for e in json.loads(out)["benchmarks"]:
        if e.get("run_type") == "iteration":
            times.setdefault("/".join(e["name"].split("/")[:2]), []).append(e[metric])
    return times


def ratios(build):
    t = run(build, "cache_bench", "^(B3|E3)/", "cpu_time")
    t.update(run(build, "cache_redis_bench", "^(B8c-100|B8c-14k)", "real_time"))
    return {case: round(min(t[a]) / min(t[b]), 3) for case, (a, b) in PAIRS.items()}


def main(argv):
    before, after = argv[1], argv[2]
    for _ in range(int(argv[3]) if len(argv) > 3 else 3):
        for side, build in (("before", before), ("after", after)):
            print(side, json.dumps(ratios(build)), flush=True)


if __name__ == "__main__":
    main(sys.argv)
