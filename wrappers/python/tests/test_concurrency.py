"""Threads (single-flight through the core) and asyncio."""
from __future__ import annotations

import asyncio
import threading
import time

import pytest
from thread_helpers import join as _join, run_threads as _run_threads, until as _until

from cachekit import CacheKitError, cache
from cachekit._core import lib


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


# ---------------------------------------------------------------------------
# Object mode (backend=None): single-flight in the wrapper. The loaders are held
# on events until every other caller is seen waiting on the flight, so nothing
# depends on timing; the polling limits only turn a hang into a failure.
# ---------------------------------------------------------------------------


def _waiters(fn):
    objects = fn._cachekit.objects
    with objects.lock:
        return sum(f.waiters for f in objects.flights.values())


@pytest.mark.parametrize("call", [lambda f: f(7), lambda f: f(7, "b"), lambda f: f(7, y=[1])],
                         ids=["one-int", "two-scalars", "kwargs"])
def test_object_mode_one_compute_for_32_threads(call):
    calls = []
    started, release = threading.Event(), threading.Event()

    @cache(backend=None)
    def load(x, y=None):
        calls.append(x)
        started.set()
        assert release.wait(30)
        return {"x": x, "token": object()}

    threads, results, errors = _run_threads(32, lambda: call(load))
    _until(lambda: started.is_set() and _waiters(load) == 31, "31 waiters")
    release.set()
    _join(threads)
    assert errors == [None] * 32
    assert len(calls) == 1
    assert all(r is results[0] for r in results)  # the very same object
    assert call(load) is results[0]
    info = load.cache_info()
    assert info.misses == 1 and info.hits == 32
    assert load._cachekit.objects.flights == {}


def test_object_mode_loader_exception_reaches_every_waiter_and_is_not_cached():
    calls = []
    started, release = threading.Event(), threading.Event()

    @cache(backend=None)
    def load(x):
        calls.append(x)
        if len(calls) == 1:
            started.set()
            assert release.wait(30)
            raise RuntimeError("loader failed")
        return [x]

    threads, results, errors = _run_threads(32, lambda: load(1))
    _until(lambda: started.is_set() and _waiters(load) == 31, "31 waiters")
    release.set()
    _join(threads)
    assert len(calls) == 1
    assert results == [None] * 32
    assert all(isinstance(e, RuntimeError) and e is errors[0] for e in errors)
    assert len(load._cachekit.objects) == 0 and load._cachekit.objects.flights == {}
    assert load.cache_info().misses == 32
    assert load(1) == [1]  # not cached: the next call loads again
    assert len(calls) == 2


@pytest.mark.parametrize("backend", [None, "memory://"], ids=["object", "core"])
def test_recursion_on_the_same_key_does_not_deadlock(backend):
    calls = []

    @cache(backend=backend)
    def rec(x):
        calls.append(x)
        if x > 0:
            return rec(x - 1) + 1  # other keys are fine
        return rec(x)  # its own key: the core's EDEADLOCK, not a hang

    with pytest.raises(CacheKitError) as ei:
        rec(2)
    assert ei.value.code == lib.CACHEKIT_EDEADLOCK
    assert calls == [2, 1, 0]
    if backend is None:
        assert len(rec._cachekit.objects) == 0 and rec._cachekit.objects.flights == {}


def test_object_mode_recursion_caught_by_the_function_computes_uncached():
    @cache(backend=None)
    def rec(x, inner=False):
        if inner:
            return "inner"
        try:
            return rec(x, inner=False)
        except CacheKitError:
            return rec(x, inner=True)

    assert rec(1) == "inner"


@pytest.mark.parametrize("invalidate", [lambda f: f.invalidate_cache(1), lambda f: f.invalidate_cache(),
                                        lambda f: f.cache_clear()], ids=["key", "all", "cache_clear"])
def test_object_mode_invalidate_during_compute_drops_the_result(invalidate):
    calls = []
    started, release = threading.Event(), threading.Event()

    @cache(backend=None)
    def load(x):
        calls.append(x)
        if len(calls) == 1:
            started.set()
            assert release.wait(30)
        return [len(calls)]

    threads, results, errors = _run_threads(2, lambda: load(1))
    _until(lambda: started.is_set() and _waiters(load) == 1, "a waiter")
    invalidate(load)
    release.set()
    _join(threads)
    assert errors == [None, None]
    assert results[0] is results[1] and results[0] == [1]  # callers from before the invalidation share it
    assert len(load._cachekit.objects) == 0  # ... but it was not stored
    again = load(1)
    assert again == [2] and load(1) is again


def test_object_mode_caller_after_invalidation_does_not_join_the_old_compute():
    calls = []
    started, release = threading.Event(), threading.Event()

    @cache(backend=None)
    def load(x):
        calls.append(x)
        n = len(calls)
        if n == 1:
            started.set()
            assert release.wait(30)
        return [n]

    threads, results, _ = _run_threads(1, lambda: load(1))
    _until(started.is_set, "the first load")
    load.invalidate_cache(1)
    fresh = load(1)  # leads a new flight while the first one is still running
    assert fresh == [2]
    release.set()
    _join(threads)
    assert results == [[1]]
    assert load(1) is fresh  # the stale compute did not overwrite it


def test_object_mode_waiter_times_out_and_computes_itself():
    calls = []
    started, release = threading.Event(), threading.Event()

    @cache(backend=None)
    def load(x):
        calls.append(x)
        n = len(calls)
        if n == 1:
            started.set()
            assert release.wait(30)
        return [n]

    load._cachekit.load_timeout = 0.05  # the default is the core's load_timeout_ms (30 s)
    threads, results, _ = _run_threads(1, lambda: load(1))
    _until(started.is_set, "the first load")
    assert load(1) == [2]  # gave up waiting for the leader
    release.set()
    _join(threads)
    assert results == [[1]] and len(calls) == 2
    assert load(1) == [1]  # the leader's value landed last


def test_object_mode_interrupted_leader_lets_a_waiter_take_over():
    calls = []
    started, release = threading.Event(), threading.Event()

    class Interrupt(BaseException):
        pass

    @cache(backend=None)
    def load(x):
        calls.append(x)
        if len(calls) == 1:
            started.set()
            assert release.wait(30)
            raise Interrupt()
        return [len(calls)]

    leader_out = []

    def lead():
        try:
            load(1)
        except Interrupt:
            leader_out.append("interrupted")

    t = threading.Thread(target=lead, daemon=True)
    t.start()
    _until(started.is_set, "the first load")
    threads, results, errors = _run_threads(1, lambda: load(1))
    _until(lambda: _waiters(load) == 1, "a waiter")
    release.set()
    _join([t] + threads)
    assert leader_out == ["interrupted"]
    assert errors == [None] and results == [[2]]
    assert load(1) is results[0]


def test_async_object_mode_one_compute_for_32_tasks():
    calls = []
    release = asyncio.Event()  # binds to the loop on first use

    @cache(backend=None)
    async def load(x):
        calls.append(x)
        await release.wait()
        return {"x": x, "token": object()}

    async def main():
        tasks = [asyncio.create_task(load(3)) for _ in range(32)]
        for _ in range(10_000):  # the loop keeps running while they wait
            if _waiters(load) == 31 and calls:  # (the load runs in a task of its own)
                break
            await asyncio.sleep(0)
        assert _waiters(load) == 31 and len(calls) == 1
        release.set()
        return await asyncio.gather(*tasks)

    res = asyncio.run(main())
    assert len(calls) == 1
    assert all(r is res[0] for r in res)
    info = load.cache_info()
    assert info.misses == 1 and info.hits == 31


def test_async_object_mode_exception_reaches_every_task_and_is_not_cached():
    calls = []
    gate = asyncio.Event()

    @cache(backend=None)
    async def load(x):
        calls.append(x)
        await gate.wait()
        if len(calls) == 1:
            raise ValueError("loader failed")
        return [x]

    async def main():
        tasks = [asyncio.create_task(load(1)) for _ in range(8)]
        for _ in range(10_000):
            if _waiters(load) == 7:
                break
            await asyncio.sleep(0)
        assert _waiters(load) == 7
        gate.set()
        out = await asyncio.gather(*tasks, return_exceptions=True)
        assert all(isinstance(e, ValueError) and e is out[0] for e in out)
        assert len(load._cachekit.objects) == 0
        assert await load(1) == [1]

    asyncio.run(main())
    assert len(calls) == 2


def test_async_object_mode_recursion_and_cancelled_leader():
    @cache(backend=None)
    async def rec(x):
        return await rec(x)

    calls = []
    gate = asyncio.Event()

    @cache(backend=None)
    async def load(x):
        calls.append(x)
        await gate.wait()
        return [len(calls)]

    async def main():
        with pytest.raises(CacheKitError) as ei:
            await rec(1)
        assert ei.value.code == lib.CACHEKIT_EDEADLOCK
        leader = asyncio.create_task(load(1))
        await asyncio.sleep(0)
        waiter = asyncio.create_task(load(1))
        for _ in range(10_000):
            if _waiters(load) == 1 and calls:
                break
            await asyncio.sleep(0)
        assert _waiters(load) == 1 and calls == [1]
        leader.cancel()  # the load goes on for its waiter: one compute, as the reference
        with pytest.raises(asyncio.CancelledError):
            await leader
        gate.set()
        assert await waiter == [1]
        assert await load(1) == [1]
        assert calls == [1]

    asyncio.run(main())
