"""One side of Z1 (bench/python/z1.py): `python z1_worker.py SIDE URL TRACE_FILE NAMESPACE`.

Runs under ours (Debian's python3, the bench build's wrapper) or the reference SDK (its
venv). Replays the trace (one key index a line) through one decorated function with L1
and Redis, timing each call, and classifies it by the decorator's cache_info() delta
(read after the timed call): l1 hit, l2 hit or miss. Prints one JSON object:
{"l1": [ns, ...], "l2": [...], "miss": [...]}.
"""
from __future__ import annotations

import gc
import json
import sys
import time

from cachekit import cache

SIDE, URL, TRACE, NAMESPACE = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]


def backend() -> dict:
    if SIDE == "ours":
        return {"backend": URL}
    from cachekit.backends.redis import RedisBackend
    return {"backend": RedisBackend(URL)}


@cache(ttl=3600, namespace=NAMESPACE, **backend())
def lookup(k):
    return {"key": k, "name": f"user-{k}", "tags": ["a", "b", "c"], "body": "x" * 512}


def main() -> None:
    with open(TRACE) as f:
        trace = [int(line) for line in f]
    layers: dict[str, list[int]] = {"l1": [], "l2": [], "miss": []}
    before = lookup.cache_info()
    gc.collect()
    clock = time.perf_counter_ns
    for k in trace:
        t0 = clock()
        lookup(k)
        t1 = clock()
        after = lookup.cache_info()
        if after.l1_hits > before.l1_hits:
            layers["l1"].append(t1 - t0)
        elif after.l2_hits > before.l2_hits:
            layers["l2"].append(t1 - t0)
        else:
            layers["miss"].append(t1 - t0)
        before = after
    print(json.dumps(layers))


if __name__ == "__main__":
    main()
