"""Threads (single-flight through the core) and asyncio."""
from __future__ import annotations

import asyncio
import threading
import time

import pytest

from cachekit import cache


@pytest.mark.parametrize("backend", ["memory://", "file"])
def test_one_compute_for_32_threads(backend, tmp_path):
    calls = []
    lock = threading.Lock()

    @cache(backend=str(tmp_path) if backend == "file" else backend, namespace="sf")
    def slow(x):
        with lock:
            calls.append(x)
        time.sleep(0.3)
        return {"x": x}

    barrier = threading.Barrier(32)
    results = []

    def run():
        barrier.wait()
        results.append(slow(5))

    threads = [threading.Thread(target=run) for _ in range(32)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert len(calls) == 1
    assert results == [{"x": 5}] * 32
    info = slow.cache_info()
    assert info.misses == 1 and info.hits == 31


def test_loader_exception_reaches_every_caller_thread():
    calls = []

    @cache(backend="memory://")
    def bad(x):
        calls.append(x)
        time.sleep(0.1)
        raise RuntimeError("nope")

    errors = []

    def run():
        try:
            bad(1)
        except RuntimeError as e:
            errors.append(e)

    ts = [threading.Thread(target=run) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(10)
    assert len(errors) == 4


def test_async_basic_and_invalidate():
    calls = []

    @cache(backend="memory://", namespace="async")
    async def get(x):
        calls.append(x)
        await asyncio.sleep(0.01)
        return {"x": x}

    async def main():
        assert await get(1) == {"x": 1}
        assert await get(1) == {"x": 1}
        assert len(calls) == 1
        await get.ainvalidate_cache(1)
        await get(1)
        assert len(calls) == 2
        await get.invalidate_cache(1)
        await get(1)
        assert len(calls) == 3

    asyncio.run(main())
    assert get.cache_info().hits == 1


def test_async_single_flight_and_loop_not_blocked():
    calls = []

    @cache(backend="memory://", namespace="async-sf")
    async def slow(x):
        calls.append(x)
        await asyncio.sleep(0.3)
        return x * 2

    async def main():
        ticks = 0
        stop = False

        async def ticker():
            nonlocal ticks
            while not stop:
                ticks += 1
                await asyncio.sleep(0.01)

        t = asyncio.create_task(ticker())
        res = await asyncio.gather(*[slow(21) for _ in range(4)])
        stop = True
        await t
        return res, ticks

    res, ticks = asyncio.run(main())
    assert res == [42] * 4
    assert len(calls) == 1
    assert ticks >= 10  # the loop kept running while the load was in flight


def test_async_object_mode():
    calls = []

    @cache(backend=None)
    async def get(x):
        calls.append(x)
        return [x]

    async def main():
        a = await get(1)
        b = await get(1)
        return a, b

    a, b = asyncio.run(main())
    assert a is b and len(calls) == 1


def test_async_exception():
    @cache(backend="memory://")
    async def bad():
        raise ValueError("x")

    async def main():
        with pytest.raises(ValueError):
            await bad()

    asyncio.run(main())
