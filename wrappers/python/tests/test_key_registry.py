"""The reference SDK's server-side key registry (docs/redis.md "Key registry"),
kept by the core for zero-configuration Redis (t:default:), as the reference's
provider keeps it: invalidate_cache() / cache_clear() with no arguments remove
the entries every process wrote, and the registry."""
from __future__ import annotations

import os
import subprocess
import sys

from cachekit import cache

from conftest import define



def redis_cli(port: int, *args: str) -> list[str]:
    out = subprocess.run(["redis-cli", "-p", str(port), "--raw", *args], capture_output=True, text=True, check=True)
    return [line for line in out.stdout.splitlines() if line]


def write_from_another_process(url: str, arg: int) -> None:
    code = ("import sys; sys.path[:0] = %r\n"
            "from cachekit import cache\n"
            "from conftest import define\n"
            "f = cache(namespace='regns', ttl=300)(define('fetch', module='tests.reg'))\n"
            "f(%d)\n") % (sys.path, arg)
    subprocess.run([sys.executable, "-c", code], check=True, env={**os.environ, "CACHEKIT_REDIS_URL": url},
                   cwd=os.path.dirname(__file__))


def test_invalidate_cache_reaches_every_process(redis_server, monkeypatch):
    redis_cli(redis_server.port, "FLUSHALL")
    monkeypatch.setenv("CACHEKIT_REDIS_URL", redis_server.url)
    f = cache(namespace="regns", ttl=300)(define("fetch", module="tests.reg"))
    f(1)
    write_from_another_process(redis_server.url, 2)
    registry = [k for k in redis_cli(redis_server.port, "KEYS", "t:default:ck:reg:*")]
    assert len(registry) == 1 and registry[0].startswith("t:default:ck:reg:regns:")
    members = sorted(redis_cli(redis_server.port, "SMEMBERS", registry[0]))
    assert members == sorted([f._cachekit.key_for((1,), {}), f._cachekit.key_for((2,), {})])
    assert 604000 < int(redis_cli(redis_server.port, "TTL", registry[0])[0]) <= 604800
    assert f._cachekit.written == set()  # no per-process list where a registry exists

    f.invalidate_cache()
    assert redis_cli(redis_server.port, "KEYS", "*") == []  # both entries and the registry
    n = len(f.calls)
    f(1)
    f(2)
    assert len(f.calls) == n + 2  # recomputed, L1 included


def test_cache_clear_uses_the_registry_in_a_fresh_process(redis_server, monkeypatch):
    redis_cli(redis_server.port, "FLUSHALL")
    monkeypatch.setenv("CACHEKIT_REDIS_URL", redis_server.url)
    write_from_another_process(redis_server.url, 3)
    assert len(redis_cli(redis_server.port, "KEYS", "*")) == 2
    f = cache(namespace="regns", ttl=300)(define("fetch", module="tests.reg"))
    f.cache_clear()  # this process never wrote: the registry alone reaches the entry
    assert redis_cli(redis_server.port, "KEYS", "*") == []


def test_explicit_redis_url_keeps_no_registry(redis_server):
    """The reference keeps none on a plain RedisBackend: neither does this wrapper
    (the Redis key lists stay equal); its per-process list is used."""
    redis_cli(redis_server.port, "FLUSHALL")
    f = cache(backend=redis_server.url, namespace="regns", ttl=300)(define("fetch", module="tests.reg"))
    f(1)
    assert redis_cli(redis_server.port, "KEYS", "*ck:reg:*") == []
    f.invalidate_cache()
    assert redis_cli(redis_server.port, "KEYS", "*") == []


def test_async_functions_list_and_drain_too(redis_server, monkeypatch):
    import asyncio

    redis_cli(redis_server.port, "FLUSHALL")
    monkeypatch.setenv("CACHEKIT_REDIS_URL", redis_server.url)
    calls = []

    async def afetch(x):
        calls.append(x)
        return {"x": x}

    afetch.__module__ = "tests.reg"
    f = cache(namespace="regns", ttl=300)(afetch)

    async def main():
        await f(1)
        await f(2)
        registry = redis_cli(redis_server.port, "KEYS", "t:default:ck:reg:*")
        assert len(registry) == 1 and len(redis_cli(redis_server.port, "SMEMBERS", registry[0])) == 2
        await f.invalidate_cache()
        assert redis_cli(redis_server.port, "KEYS", "*") == []
        await f(1)
        assert calls == [1, 2, 1]

    asyncio.run(main())
