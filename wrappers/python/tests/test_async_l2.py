"""Coroutine functions with a backend, without threads per call: L1 hits
answered inline on the event loop, the function run on the loop in its
load's own task (cancelled with its last caller), L2 I/O through the core's own executor,
single-flight on the loop."""
from __future__ import annotations

import asyncio
import contextvars
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest

from cachekit import CoreCache, cache


@pytest.fixture(params=["memory", "redis"])
def l2(request):
    if request.param == "redis":
        return request.getfixturevalue("redis_server").url
    return "memory://"


def _ns(prefix: str) -> str:
    return prefix + uuid.uuid4().hex[:8]


async def _until(pred, what: str, limit: float = 30.0) -> None:
    end = time.monotonic() + limit
    while not pred():
        assert time.monotonic() < end, f"timed out waiting for {what}"
        await asyncio.sleep(0.001)


def test_l1_hit_is_answered_on_the_loop_without_a_thread(l2, monkeypatch):
    @cache(backend=l2, namespace=_ns("ahit"))
    async def f(x):
        return {"x": x}

    async def main():
        assert await f(1) == {"x": 1}

        def no_thread(*_a, **_k):
            raise AssertionError("an L1 hit used a thread")

        monkeypatch.setattr(CoreCache, "executor", no_thread)
        monkeypatch.setattr(asyncio, "to_thread", no_thread)
        monkeypatch.setattr(asyncio.get_running_loop(), "run_in_executor", no_thread)
        assert await f(1) == {"x": 1}

    asyncio.run(main())
    info = f.cache_info()
    assert info.misses == 1 and info.hits == 1 and info.l1_hits == 1


def test_function_runs_on_the_loop_in_a_load_task_with_the_callers_context(l2):
    """The load's own task (so a cancelled caller can leave it to its waiters), on
    the caller's loop and thread, in a copy of the caller's context."""
    seen = []
    var = contextvars.ContextVar("py28_request", default=None)

    @cache(backend=l2, namespace=_ns("aloop"))
    async def f(x):
        seen.append((threading.get_ident(), asyncio.current_task(), var.get()))
        return x

    async def main():
        me = asyncio.current_task()
        var.set("req-1")
        assert await f(1) == 1
        (thread, task, value), = seen
        assert thread == threading.get_ident() and task is not me and value == "req-1"
        assert task.get_loop() is asyncio.get_running_loop()

    asyncio.run(main())


def test_l2_io_uses_the_cores_executor_never_the_default_one(l2):
    names = []

    @cache(backend=l2, namespace=_ns("aexec"))
    async def f(x):
        return x

    class NoDefault(ThreadPoolExecutor):
        def submit(self, *_a, **_k):
            raise AssertionError("the default executor was used")

    async def main():
        loop = asyncio.get_running_loop()
        loop.set_default_executor(NoDefault())
        core = f._cachekit.core
        orig = core.executor

        def spy():
            ex = orig()
            names.append(ex)
            return ex

        core.executor = spy
        try:
            assert await f(1) == 1
            f._cachekit.core.invalidate(f._cachekit.ns_bytes, f._cachekit.cached_key((1,), {}))
            assert await f(1) == 1
        finally:
            del core.executor

    asyncio.run(main())
    assert names and all(n is names[0] for n in names)


def test_to_thread_inside_the_function_does_not_deadlock_64_keys(l2):
    """The body awaits asyncio.to_thread; 64 distinct keys miss at once. The
    default executor (min(32, cpus + 4) threads) is free for the bodies: the
    cache holds none of its threads."""

    @cache(backend=l2, namespace=_ns("adead"))
    async def f(x):
        return await asyncio.to_thread(lambda: x * 2)

    async def main():
        return await asyncio.wait_for(asyncio.gather(*(f(i) for i in range(64))), 60)

    assert asyncio.run(main()) == [i * 2 for i in range(64)]
    assert f.cache_info().misses == 64


def test_cancelling_the_caller_cancels_the_function_and_stores_nothing(l2):
    started, cancelled, calls = [], [], []

    @cache(backend=l2, namespace=_ns("acancel"))
    async def f(x):
        calls.append(x)
        if len(calls) == 1:
            started.append(1)
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                cancelled.append(1)
                raise
        return [len(calls)]

    async def main():
        task = asyncio.create_task(f(1))
        await _until(lambda: started, "the function")
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert cancelled == [1]
        assert not f._cachekit.aflights  # the flight ended with its leader
        assert await f(1) == [2]  # nothing was stored: computed again
        assert await f(1) == [2]

    asyncio.run(main())


def test_wait_for_timeout_cancels_the_function(l2):
    cancelled = []

    @cache(backend=l2, namespace=_ns("awaitfor"))
    async def f(x):
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.append(x)
            raise

    async def main():
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(f(7), 0.05)

    asyncio.run(main())
    assert cancelled == [7]


@pytest.mark.parametrize("cancelled", ["leader", "waiter"])
def test_cancelling_one_of_two_callers_leaves_the_other_a_value(l2, cancelled):
    """The leader cancelled: its load goes on for its waiter (one compute, as
    the reference). The waiter cancelled: the leader's load goes on alone."""
    calls = []
    gate = asyncio.Event()

    @cache(backend=l2, namespace=_ns("acancel2"))
    async def f(x):
        calls.append(x)
        await gate.wait()
        return [len(calls)]

    loads = 1

    async def main():
        leader = asyncio.create_task(f(1))
        await _until(lambda: calls, "the leader")
        waiter = asyncio.create_task(f(1))
        await _until(lambda: any(fl.waiters == 1 for fl in f._cachekit.aflights.values()), "the waiter")
        gone, survivor = (leader, waiter) if cancelled == "leader" else (waiter, leader)
        gone.cancel()
        with pytest.raises(asyncio.CancelledError):
            await gone
        await _until(lambda: len(calls) == loads, "the survivor's load")
        gate.set()
        assert await survivor == [loads]
        # A waiter has the value before its L2 write lands (it need not wait for it).
        await _until(lambda: f._cachekit.written, "the L2 write")
        assert await f(1) == [loads]

    asyncio.run(main())
    assert len(calls) == loads


def test_24_distinct_slow_misses_run_at_once(l2):
    """24 distinct keys whose function sleeps 0.2 s: every body runs at the
    same time (not capped by a thread pool), so the whole takes about 0.2 s.
    The proof is the peak of bodies running at once, not a clock."""
    running, peak = [0], [0]

    @cache(backend=l2, namespace=_ns("a24"))
    async def f(x):
        running[0] += 1
        peak[0] = max(peak[0], running[0])
        await asyncio.sleep(0.2)
        running[0] -= 1
        return x

    async def main():
        return await asyncio.gather(*(f(i) for i in range(24)))

    assert asyncio.run(main()) == list(range(24))
    assert peak[0] == 24  # a pool of 6 threads would have peaked at 6


def test_single_flight_merges_coroutines_on_the_loop(l2):
    calls = []
    gate = asyncio.Event()

    @cache(backend=l2, namespace=_ns("amerge"))
    async def f(x):
        calls.append(x)
        await gate.wait()
        return {"x": x}

    async def main():
        before = threading.active_count()
        tasks = [asyncio.create_task(f(5)) for _ in range(50)]
        await _until(lambda: any(fl.waiters == 49 for fl in f._cachekit.aflights.values()), "49 waiters")
        # the waiters hold no thread: at most the core's executor was started
        assert threading.active_count() - before <= 8
        gate.set()
        return await asyncio.gather(*tasks)

    res = asyncio.run(main())
    assert calls == [5] and res == [{"x": 5}] * 50
    assert all(r is not res[0] for r in res[1:])  # each waiter decodes its own copy


# The ways to invalidate the key while its async load runs: this function's
# own invalidation, the key's through another decorated function's handle on
# the shared core (key= keys carry the function's identity, so g's own keys
# never equal f's), and the namespace's on the shared core.
_INVALIDATIONS = {
    "own": lambda f, g: f.ainvalidate_cache(1),
    "other_function": lambda f, g: g._cachekit.core.invalidate(f._cachekit.ns_bytes, f._cachekit.cached_key((1,), {})),
    "namespace": lambda f, g: g._cachekit.core.invalidate_namespace(g._cachekit.ns_bytes),
}


@pytest.mark.parametrize("how", sorted(_INVALIDATIONS))
def test_an_invalidation_during_the_async_load_keeps_its_value_out(l2, how):
    """The leader's lookup takes the core's load claim: an invalidation of its
    key (whichever way, see _INVALIDATIONS) while the function runs keeps the
    value out of L1 and L2."""
    ns = _ns("ainval")
    gate = asyncio.Event()
    calls = []
    keyed = {"key": lambda x: f"item:{x}"} if how == "other_function" else {}

    @cache(backend=l2, namespace=ns, **keyed)
    async def f(x):
        calls.append(x)
        if len(calls) == 1:
            await gate.wait()
        return [len(calls)]

    @cache(backend=l2, namespace=ns, **keyed)
    def g(x):
        return ["g"]

    state = f._cachekit
    key = state.cached_key((1,), {})

    async def main():
        first = asyncio.create_task(f(1))
        await _until(lambda: calls, "the load")
        done = _INVALIDATIONS[how](f, g)
        if asyncio.iscoroutine(done):
            await done
        gate.set()
        assert await first == [1]
        core = state.core
        assert core is g._cachekit.core
        assert core.peek(state.ns_bytes, key, state.decode) is None  # not in L1
        assert core.get(state.ns_bytes, key)[0] is None  # nor in L2
        assert await f(1) == [2]  # computed again, and this one is stored
        assert await f(1) == [2]

    asyncio.run(main())
    if how != "own":  # the core's counters through another user of the handle
        stats = state.core.stats(state.ns_bytes)
        assert stats["loads"] == 2 and stats["dropped_fills"] == 1 and stats["stores"] == 1


def test_a_failed_or_cancelled_async_load_abandons_its_claim(l2):
    started = []

    @cache(backend=l2, namespace=_ns("aabandon"))
    async def f(x):
        if x == 1:
            raise ValueError("no")
        started.append(x)
        await asyncio.sleep(3600)

    async def main():
        with pytest.raises(ValueError):
            await f(1)
        task = asyncio.create_task(f(2))
        await _until(lambda: started, "the function")
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    state = f._cachekit
    stats = state.core.stats(state.ns_bytes)
    assert stats["load_errors"] == 2 and stats["loads"] == 0 and stats["stores"] == 0
