"""A key= function that raises: logged on the "cachekit" logger and the call runs
uncached, as cachekit-py 0.24.1 does (its cache.local lets the exception through, and
so does invalidate_cache there and here). Issue 28."""
from __future__ import annotations

import asyncio
import logging

import pytest

from cachekit import cache


def bad_key(x):
    if x < 0:
        raise ValueError("secret-argument-text")
    return f"k{x}"


MODES = [{"backend": None}, {"backend": "memory://"}]
IDS = ["object-mode", "l2-mode"]


@pytest.mark.parametrize("opts", MODES, ids=IDS)
def test_sync_call_runs_uncached_and_logs(opts, caplog):
    calls = []

    @cache(ttl=60, key=bad_key, **opts)
    def f(x):
        calls.append(x)
        return x * 2

    with caplog.at_level(logging.WARNING, logger="cachekit"):
        assert f(-1) == -2 and f(-1) == -2
        assert f(3) == f(3) == 6
    assert calls == [-1, -1, 3]  # the failing key never caches; a good one does
    logged = [r for r in caplog.records if r.name == "cachekit" and "key function raised ValueError" in r.getMessage()]
    assert len(logged) == 2 and all("secret-argument-text" not in r.getMessage() for r in logged)
    with pytest.raises(ValueError):
        f.invalidate_cache(-1)  # the reference's invalidation derives the key and raises too


@pytest.mark.parametrize("opts", MODES, ids=IDS)
def test_async_call_runs_uncached_and_logs(opts, caplog):
    calls = []

    @cache(ttl=60, key=bad_key, **opts)
    async def f(x):
        calls.append(x)
        return x * 2

    async def run():
        return [await f(-1), await f(-1), await f(2), await f(2)]

    with caplog.at_level(logging.WARNING, logger="cachekit"):
        assert asyncio.run(run()) == [-2, -2, 4, 4]
    assert calls == [-1, -1, 2]
    assert any("key function raised ValueError" in r.getMessage() for r in caplog.records)


def test_a_key_function_returning_a_non_str_still_runs_uncached():
    calls = []
    f = cache(backend="memory://", ttl=60, key=lambda x: x)(lambda x: calls.append(x) or x)
    assert f(1) == f(1) == 1 and calls == [1, 1]


def test_cache_local_lets_it_through_as_the_reference():
    @cache.local(ttl=60, key=bad_key)
    def f(x):
        return x

    with pytest.raises(ValueError, match="secret-argument-text"):
        f(-1)
