"""One side of a P1-P5 pair (bench/python/sdk_compare.py): `python sdk_worker.py SIDE CASE URL`.

Runs under ours (Debian's python3, the bench build's wrapper) or the reference SDK (its
venv). Sets the case up (the same decorated function and payload on both sides), prints
`ready`, then for each line `N` on stdin runs N calls and prints the elapsed ns and
the process's CPU ns over them (redis-server's work is in neither).
"""
from __future__ import annotations

import gc
import itertools
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from payload import users_payload  # noqa: E402

from cachekit import cache  # noqa: E402

SIDE, CASE, URL = sys.argv[1], sys.argv[2], sys.argv[3]
VALUE = users_payload()
KEY_HEX = "ab" * 32


def backend() -> dict:
    if SIDE == "ours":
        return {"backend": URL}
    from cachekit.backends.redis import RedisBackend
    return {"backend": RedisBackend(URL)}


def setup():
    if CASE == "P1":
        @cache(backend=None)
        def f(x):
            return x * 2
        f(42)
        return lambda: f(42)
    opts: dict = {"ttl": 3600, "namespace": CASE.lower(), **backend()}
    if CASE in ("P3", "P5"):
        opts["l1_enabled"] = False
    if CASE == "P5":
        opts.update(encryption=True, master_key=KEY_HEX)
        if SIDE == "ref":
            opts["single_tenant_mode"] = True

    @cache(**opts)
    def get_users(page):
        return VALUE

    if CASE == "P4":  # every call a new argument: a miss, a store
        counter = itertools.count(int(time.time() * 1000) * 1000 + (0 if SIDE == "ours" else 500_000_000))
        return lambda: get_users(next(counter))
    get_users(1)
    assert get_users(1) == VALUE
    return lambda: get_users(1)


def main() -> None:
    call = setup()
    for _ in range(20):
        call()
    gc.collect()
    print("ready", flush=True)
    for line in sys.stdin:
        n = int(line)
        t0, c0 = time.perf_counter_ns(), time.process_time_ns()
        for _ in range(n):
            call()
        print(time.perf_counter_ns() - t0, time.process_time_ns() - c0, flush=True)


if __name__ == "__main__":
    main()
