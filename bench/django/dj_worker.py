"""One backend's DJ phases in a process of its own (bench/django/dj_bench.py starts it
under the bench venv's python), so that its memory is its own.

    python dj_worker.py BACKEND URL CALLS RUNS [--conns ADMIN_PORT] [--incr-commands ADMIN_PORT]

BACKEND is an alias of CACHES below (django, django-redis, ours). Prints one JSON object:
{"backend", "sync": {column: calls/s}, "async": {...}, "async50": {...}, "payload_bytes",
"vmrss_kib", "vmhwm_kib", and with the flags "conns" and "incr_commands"}.
Each column's calls/s is the median of RUNS timed runs after one untimed warm-up run.
"""
from __future__ import annotations

import asyncio
import json
import pickle
import statistics
import sys
import threading
import time

BACKENDS = {
    "django": "django.core.cache.backends.redis.RedisCache",
    "django-redis": "django_redis.cache.RedisCache",
    "ours": "cachekit.django.CacheKitCache",
}
COLUMNS = ["get", "get-miss", "set", "mget", "mset", "incr", "delete"]
BATCH = 10  # keys per get_many / set_many call
IN_FLIGHT = 50  # DJ-async50: calls awaited together by one asyncio.gather


def configure(url: str) -> None:
    from django.conf import settings
    caches = {alias: {"BACKEND": cls, "LOCATION": url, "TIMEOUT": 3600} for alias, cls in BACKENDS.items()}
    caches["django-redis"]["OPTIONS"] = {"CLIENT_CLASS": "django_redis.client.DefaultClient"}
    caches["default"] = caches["ours"]
    settings.configure(CACHES=caches, USE_TZ=True)
    import django
    django.setup()


def payload() -> dict:
    """A value whose pickle (highest protocol, as all three store it) is about 150 bytes."""
    base = len(pickle.dumps({"id": 12345, "name": ""}, pickle.HIGHEST_PROTOCOL))
    return {"id": 12345, "name": "x" * (150 - base)}


class Keys:
    def __init__(self, calls: int) -> None:
        self.calls = calls
        self.hit = [f"dj:k{i}" for i in range(calls)]
        self.miss = [f"dj:miss{i}" for i in range(calls)]
        many = max(1, calls // BATCH)
        self.mget = [self.hit[(i * BATCH) % calls:(i * BATCH) % calls + BATCH] for i in range(many)]
        self.mset = [[f"dj:m{i * BATCH + j}" for j in range(BATCH)] for i in range(many)]


def sync_run(cache, keys: Keys, value) -> dict[str, float]:
    """One run of every phase, in an order that leaves each phase its keys (the sets make
    the gets hit and the deletes delete); calls/s per column."""
    out = {}

    def timed(column, calls, body):
        t = time.perf_counter()
        body()
        out[column] = calls / (time.perf_counter() - t)

    timed("set", keys.calls, lambda: [cache.set(k, value) for k in keys.hit])
    timed("get", keys.calls, lambda: [cache.get(k) for k in keys.hit])
    timed("get-miss", keys.calls, lambda: [cache.get(k) for k in keys.miss])
    timed("mget", len(keys.mget), lambda: [cache.get_many(b) for b in keys.mget])
    timed("mset", len(keys.mset), lambda: [cache.set_many({k: value for k in b}) for b in keys.mset])
    cache.set("dj:ctr", 0)
    timed("incr", keys.calls, lambda: [cache.incr("dj:ctr") for _ in range(keys.calls)])
    timed("delete", keys.calls, lambda: [cache.delete(k) for k in keys.hit])
    return out


async def async_run(cache, keys: Keys, value, in_flight: int) -> dict[str, float]:
    """As sync_run with the a* methods: `in_flight` calls awaited together (1: one at a time)."""
    out = {}

    async def timed(column, calls):
        t = time.perf_counter()
        for i in range(0, len(calls), in_flight):
            await asyncio.gather(*(c() for c in calls[i:i + in_flight]))
        out[column] = len(calls) / (time.perf_counter() - t)

    await timed("set", [lambda k=k: cache.aset(k, value) for k in keys.hit])
    await timed("get", [lambda k=k: cache.aget(k) for k in keys.hit])
    await timed("get-miss", [lambda k=k: cache.aget(k) for k in keys.miss])
    await timed("mget", [lambda b=b: cache.aget_many(b) for b in keys.mget])
    await timed("mset", [lambda b=b: cache.aset_many({k: value for k in b}) for b in keys.mset])
    await cache.aset("dj:ctr", 0)
    await timed("incr", [lambda: cache.aincr("dj:ctr") for _ in range(keys.calls)])
    await timed("delete", [lambda k=k: cache.adelete(k) for k in keys.hit])
    return out


def medians(runs: list[dict[str, float]]) -> dict[str, float]:
    return {c: round(statistics.median(r[c] for r in runs), 1) for c in COLUMNS}


def check(cache, keys: Keys, value) -> None:
    """The phases did what they say: a set key reads back, a missing one is None."""
    cache.set(keys.hit[0], value)
    if cache.get(keys.hit[0]) != value or cache.get(keys.miss[0]) is not None:
        raise SystemExit("dj_worker: the cache does not read back what it stored")
    cache.delete(keys.hit[0])


def conns(alias: str, admin_port: int) -> int:
    """DJ-conns: 50 threads, each with its own cache instance (caches[alias] is per thread,
    as per request under ASGI), one get each, all at once; then the server's client count
    without the counting connection itself."""
    from django.core.cache import caches
    from redis_procs import redis_command
    start = threading.Barrier(IN_FLIGHT)
    held, errors = [], []

    def one():
        try:
            c = caches[alias]
            held.append(c)  # kept alive (and its pool with it) until the count
            start.wait(10)
            c.get("dj:conns")
        except Exception as e:  # noqa: BLE001 - reported, not hidden
            errors.append(repr(e))

    threads = [threading.Thread(target=one) for _ in range(IN_FLIGHT)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise SystemExit(f"dj_worker: DJ-conns: {errors[0]}")
    listed = redis_command(admin_port, "CLIENT", "LIST").decode().strip().splitlines()
    return len(listed) - 1


def incr_commands(cache, admin_port: int) -> float:
    """Commands the server runs per incr (a guide to its round trips): 100 incrs between
    two counts of total_commands_processed (each count is one command of its own)."""
    from redis_procs import redis_command

    def processed() -> int:
        info = redis_command(admin_port, "INFO", "stats").decode()
        return int(next(ln for ln in info.splitlines() if ln.startswith("total_commands_processed:")).split(":")[1])

    cache.set("dj:ctr", 0)
    cache.incr("dj:ctr")  # a first call may load a script
    before = processed()
    for _ in range(100):
        cache.incr("dj:ctr")
    return round((processed() - before - 1) / 100, 2)


def memory() -> dict[str, int]:
    with open("/proc/self/status") as f:
        fields = dict(ln.split(":", 1) for ln in f if ln.startswith(("VmRSS", "VmHWM")))
    return {"vmrss_kib": int(fields["VmRSS"].split()[0]), "vmhwm_kib": int(fields["VmHWM"].split()[0])}


def main(argv: list[str]) -> int:
    alias, url, calls, runs = argv[0], argv[1], int(argv[2]), int(argv[3])
    flags = dict(zip(argv[4::2], argv[5::2]))
    if alias not in BACKENDS:
        raise SystemExit(f"dj_worker: unknown backend {alias!r}; known: {', '.join(BACKENDS)}")
    configure(url)
    from django.core.cache import caches
    cache = caches[alias]
    value = payload()
    keys = Keys(calls)
    check(cache, keys, value)
    out = {"backend": alias, "payload_bytes": len(pickle.dumps(value, pickle.HIGHEST_PROTOCOL))}
    sync_run(cache, keys, value)  # warm-up
    out["sync"] = medians([sync_run(cache, keys, value) for _ in range(runs)])

    async def both() -> None:
        acache = caches[alias]  # this context's instance
        for key, in_flight in (("async", 1), ("async50", IN_FLIGHT)):
            await async_run(acache, keys, value, in_flight)  # warm-up
            out[key] = medians([await async_run(acache, keys, value, in_flight) for _ in range(runs)])

    asyncio.run(both())
    if "--incr-commands" in flags:
        out["incr_commands"] = incr_commands(cache, int(flags["--incr-commands"]))
    out.update(memory())  # after the phases, before DJ-conns' 50 instances
    if "--conns" in flags:
        out["conns"] = conns(alias, int(flags["--conns"]))
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
