"""cachekit.django's async methods (docs/django.md "Async"): the same results as the
sync ones, on the module's own threads ("cachekit-django"), never through asgiref's
sync_to_async, and concurrently (calls do not queue behind one thread)."""
from __future__ import annotations

import asyncio
import threading

import pytest

import django.core.cache.backends.base as django_base


@pytest.fixture
def no_sync_to_async(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("BaseCache's sync_to_async fallback was used")
    monkeypatch.setattr(django_base, "sync_to_async", refuse)


def test_every_async_method(cache, no_sync_to_async):
    async def scenario():
        assert await cache.aget("k") is None
        assert await cache.aget("k", "dflt") == "dflt"
        await cache.aset("k", {"v": 1})
        assert await cache.aget("k") == {"v": 1}
        assert await cache.ahas_key("k") is True
        assert await cache.aadd("k", "other") is False
        assert await cache.aadd("n", 10) is True
        assert await cache.aincr("n") == 11
        assert await cache.adecr("n", 5) == 6
        with pytest.raises(ValueError):
            await cache.aincr("missing")
        assert await cache.atouch("n", 100) is True
        assert await cache.atouch("missing", 100) is False
        assert await cache.aset_many({"a": 1, "b": 2}) == []
        assert await cache.aget_many(iter(["a", "b", "zz"])) == {"a": 1, "b": 2}
        await cache.adelete_many(iter(["a", "b"]))
        assert await cache.aget_many(["a", "b"]) == {}
        assert await cache.aget_or_set("gos", lambda: "made") == "made"
        assert await cache.aget_or_set("gos", "again") == "made"
        assert await cache.adelete("k") is True
        assert await cache.adelete("k") is False
        assert await cache.aincr_version("n") == 2  # BaseCache's, on the methods above
        await cache.aclear()
        assert await cache.aget("gos") is None
    asyncio.run(scenario())


def test_async_calls_run_on_the_modules_threads_concurrently(cache, monkeypatch, no_sync_to_async):
    """Eight aget calls are in flight at once (a barrier of eight inside the blocking
    call would never open on asgiref's single thread), all on cachekit-django threads."""
    barrier = threading.Barrier(8, timeout=30)
    seen: list[str] = []
    real_get = type(cache).get

    def get(self, key, default=None, version=None):
        seen.append(threading.current_thread().name)
        barrier.wait()  # every call waits for the seven others: they must run in parallel
        return real_get(self, key, default, version)

    monkeypatch.setattr(type(cache), "get", get)
    cache.set("shared", "v")

    async def scenario():
        return await asyncio.gather(*(cache.aget("shared") for _ in range(8)))

    assert asyncio.run(scenario()) == ["v"] * 8
    assert len(seen) == 8 and all(name.startswith("cachekit-django") for name in seen)
