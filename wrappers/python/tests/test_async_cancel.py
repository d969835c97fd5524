"""Async single-flight when callers are cancelled (issue 28), as the reference
0.24.1 does it: the load runs in a task of its own, so cancelling the caller
that started it leaves the load to the callers still waiting (one compute, its
value stored); the load is cancelled only when its last caller goes away.
Object mode (backend=None) and L2 mode (memory://, Redis) alike. Nothing here
waits on a clock: each step waits for the state it needs (a bounded poll)."""
from __future__ import annotations

import asyncio
import time
import uuid

import pytest

from cachekit import cache


@pytest.fixture(params=["object", "memory", "redis"])
def backend(request):
    if request.param == "redis":
        return request.getfixturevalue("redis_server").url
    return None if request.param == "object" else "memory://"


async def _until(pred, what: str, limit: float = 30.0) -> None:
    end = time.monotonic() + limit
    while not pred():
        assert time.monotonic() < end, f"timed out waiting for {what}"
        await asyncio.sleep(0.001)


def _waiting(fn) -> int:
    """Callers waiting on a flight of fn besides its starter."""
    st = fn._cachekit
    if st.objects is not None:
        with st.objects.lock:
            return sum(f.waiters for f in st.objects.flights.values())
    return sum(f.waiters for f in st.aflights.values())


async def _started_with_a_waiter(load, arg, calls):
    """A starter running the function for `arg` and one caller waiting on its flight."""
    starter = asyncio.create_task(load(arg))
    await _until(lambda: calls, "the function")
    waiter = asyncio.create_task(load(arg))
    await _until(lambda: _waiting(load) == 1, "the waiter")
    return starter, waiter


def _no_flight(fn) -> bool:
    st = fn._cachekit
    return not (st.objects.flights if st.objects is not None else st.aflights)


def _decorate(backend, gate, calls, cancelled):
    @cache(backend=backend, namespace="acx" + uuid.uuid4().hex[:8], ttl=60)
    async def load(x):
        calls.append(x)
        try:
            await gate.wait()
        except asyncio.CancelledError:
            cancelled.append(x)
            raise
        return [len(calls)]

    return load


@pytest.mark.parametrize("waiters", [1, 3])
def test_a_cancelled_starter_leaves_one_compute_to_its_waiters(backend, waiters):
    calls, cancelled = [], []

    async def main():
        gate = asyncio.Event()
        load = _decorate(backend, gate, calls, cancelled)
        starter = asyncio.create_task(load(1))
        await _until(lambda: calls, "the function")
        others = [asyncio.create_task(load(1)) for _ in range(waiters)]
        await _until(lambda: _waiting(load) == waiters, "the waiters")
        starter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await starter
        gate.set()
        assert await asyncio.gather(*others) == [[1]] * waiters  # the starter's compute, finished for them
        st = load._cachekit
        # The waiters have the value before its L2 write lands (they need not wait for it).
        await _until(lambda: st.objects is not None or st.written, "the L2 write")
        assert await load(1) == [1]  # and stored
        info = load.cache_info()
        assert info.misses == 1
        assert _no_flight(load)

    asyncio.run(main())
    assert calls == [1] and cancelled == []


@pytest.mark.parametrize("order", ["starter-first", "waiter-first"])
def test_the_load_is_cancelled_when_its_last_caller_goes(backend, order):
    calls, cancelled = [], []

    async def main():
        gate = asyncio.Event()
        load = _decorate(backend, gate, calls, cancelled)
        starter, waiter = await _started_with_a_waiter(load, 1, calls)
        first, last = (starter, waiter) if order == "starter-first" else (waiter, starter)
        first.cancel()
        with pytest.raises(asyncio.CancelledError):
            await first
        assert cancelled == []  # one caller still waits: the load goes on
        last.cancel()
        with pytest.raises(asyncio.CancelledError):
            await last
        await _until(lambda: cancelled == [1], "the function's cancellation")
        await _until(lambda: _no_flight(load), "the flight's end")
        gate.set()
        assert await load(1) == [2]  # nothing was stored: computed again

    asyncio.run(main())
    assert calls == [1, 1]


def test_a_lone_caller_cancelled_cancels_the_function_and_has_unwound(backend):
    calls, cancelled = [], []

    async def main():
        gate = asyncio.Event()
        load = _decorate(backend, gate, calls, cancelled)
        task = asyncio.create_task(load(5))
        await _until(lambda: calls, "the function")
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert cancelled == [5]  # unwound before the caller's cancellation went on
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(load(6), 0.05)
        await _until(lambda: cancelled == [5, 6], "wait_for's cancellation")

    asyncio.run(main())


def test_a_waiter_cancelled_leaves_the_starter_its_value(backend):
    calls, cancelled = [], []

    async def main():
        gate = asyncio.Event()
        load = _decorate(backend, gate, calls, cancelled)
        starter, waiter = await _started_with_a_waiter(load, 2, calls)
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        gate.set()
        assert await starter == [1]
        st = load._cachekit
        await _until(lambda: st.objects is not None or st.written, "the L2 write")
        assert await load(2) == [1]

    asyncio.run(main())
    assert calls == [2] and cancelled == []


def test_a_starter_cancelled_when_its_load_raises_hands_the_error_to_its_waiter(backend):
    calls = []

    async def main():
        gate = asyncio.Event()

        @cache(backend=backend, namespace="acxe" + uuid.uuid4().hex[:8], ttl=60)
        async def load(x):
            calls.append(x)
            await gate.wait()
            raise KeyError(x)

        starter, waiter = await _started_with_a_waiter(load, 3, calls)
        starter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await starter
        gate.set()
        with pytest.raises(KeyError):
            await waiter

    asyncio.run(main())
    assert calls == [3]
