"""L2 mode (a backend): single-flight through the core's cachekit_cache_get_or_load.

Callers of a missing key wait inside the core for the one that runs the
function. These tests hold that function on an event until every other caller
is seen waiting in the core: the core has counted its miss (each caller counts
one just before it joins the flight) and its thread is asleep (Linux: the
thread's state in /proc). Nothing depends on timing; the polling limits only
turn a hang into a failure.
"""
from __future__ import annotations

import asyncio
import os
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
from thread_helpers import join as _join, run_threads as _run_threads, until as _until

from cachekit import CacheKitError, CoreCache, LoadFailed, cache
from cachekit._core import lib


@pytest.fixture(params=["memory", "file", "redis"])
def l2(request, tmp_path):
    if request.param == "redis":
        return request.getfixturevalue("redis_server").url
    return "memory://" if request.param == "memory" else str(tmp_path / "l2")


def _ns(prefix):
    """A namespace of this test alone (the private redis-server outlives a test)."""
    return prefix + uuid.uuid4().hex[:8]


def _stats(fn):
    st = fn._cachekit
    return st.core.stats(st.ns_bytes)


async def _auntil(pred, what, limit=30.0):
    deadline = time.monotonic() + limit
    while not pred():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        await asyncio.sleep(0.001)


def _asleep(native_ids) -> bool:
    """Every one of these threads is blocked (not running, not runnable)."""
    if not os.path.isdir("/proc/self/task"):
        return True  # elsewhere the core's miss count is the only signal
    for tid in native_ids:
        try:
            with open(f"/proc/self/task/{tid}/stat") as f:
                state = f.read().rpartition(")")[2].split()[0]
        except FileNotFoundError:
            return False
        if state not in ("S", "D"):
            return False
    return True


def _misses(fn) -> int:
    return _stats(fn)["misses"]


def _in_core(fn, n, native_ids):
    """`n` callers counted their miss in the core and all their threads sleep:
    the function's caller on its event, the others in the flight's wait.
    Checked twice, so a thread caught between two blocking calls is not taken
    for a waiter."""
    return all(_misses(fn) >= n and _asleep(native_ids()) for _ in range(2))


def _short_load_timeout(fn, backend, ms=50):
    """Give the decorated function a core handle of its own whose single-flight
    waiters give up after `ms` (the core's load_timeout_ms; 30 s by default)."""
    url = backend if "://" in backend else "file://" + backend  # redis://, memory:// or a directory
    fn._cachekit.core = CoreCache(backend_url=url, load_timeout_ms=ms)
    fn._cachekit.load_timeout = ms / 1000  # the async flights' (on the event loop)
    return fn._cachekit.core


def _awaiting(fn, n) -> bool:
    """`n` callers await the async flight of a key of `fn`."""
    return any(f.waiters >= n for f in list(fn._cachekit.aflights.values()))


def _pool(n=40):
    return ThreadPoolExecutor(max_workers=n, thread_name_prefix="ck-sf-worker")


def _pool_ids():
    return [t.native_id for t in threading.enumerate() if t.name.startswith("ck-sf-worker")]


# ---------------------------------------------------------------------------
# Threads
# ---------------------------------------------------------------------------

def test_one_compute_for_32_threads(l2):
    calls = []
    started, release = threading.Event(), threading.Event()

    @cache(backend=l2, namespace=_ns("sf32"))
    def load(x):
        calls.append(x)
        started.set()
        assert release.wait(30)
        return {"x": x}

    threads, results, errors = _run_threads(32, lambda: load(7))
    _until(lambda: started.is_set() and _in_core(load, 32, lambda: [t.native_id for t in threads]),
           "31 waiters in the core")
    release.set()
    _join(threads)
    assert errors == [None] * 32
    assert len(calls) == 1
    assert results == [{"x": 7}] * 32
    info = load.cache_info()
    assert info.misses == 1 and info.hits == 31
    st = _stats(load)
    assert st["loads"] == 1 and st["waits"] == 31 and st["stores"] == 1
    assert load(7) == {"x": 7} and len(calls) == 1


def test_loader_exception_reaches_every_waiter_as_the_same_instance(l2):
    calls = []
    started, release = threading.Event(), threading.Event()

    @cache(backend=l2, namespace=_ns("sferr"))
    def load(x):
        calls.append(x)
        if len(calls) == 1:
            started.set()
            assert release.wait(30)
            raise RuntimeError("loader failed")
        return [x]

    threads, results, errors = _run_threads(32, lambda: load(1))
    _until(lambda: started.is_set() and _in_core(load, 32, lambda: [t.native_id for t in threads]),
           "31 waiters in the core")
    release.set()
    _join(threads)
    assert len(calls) == 1  # the waiters did not run it again
    assert results == [None] * 32
    assert all(type(e) is RuntimeError and e is errors[0] for e in errors)  # the very same instance
    assert errors[0].__context__ is None  # not chained to the core's report
    st = _stats(load)
    assert st["load_errors"] == 1 and st["waits"] == 31
    assert st["loads"] == 0 and st["stores"] == 0  # nothing cached
    assert load.cache_info().misses == 32
    assert load(1) == [1]  # the next call loads again
    assert len(calls) == 2


def test_waiter_timeout_computes_itself_uncached(l2):
    calls = []
    started, release = threading.Event(), threading.Event()

    @cache(backend=l2, namespace=_ns("sfto"))
    def load(x):
        calls.append(x)
        n = len(calls)
        if n == 1:
            started.set()
            assert release.wait(30)
        return [n]

    core = _short_load_timeout(load, l2)
    try:
        leader, results, errors = _run_threads(1, lambda: load(1))
        _until(started.is_set, "the first load")
        assert load(1) == [2]  # gave up waiting for the leader: computed here, no BackendError
        key = load._cachekit.cached_key((1,), {})
        assert core.get(load._cachekit.ns_bytes, key)[0] is None  # ... and not stored
        release.set()
        _join(leader)
        assert errors == [None] and results == [[1]]
        assert load(1) == [1]  # the leader's value is the cached one
        assert len(calls) == 2
        info = load.cache_info()
        assert info.misses == 2 and info.hits == 1
    finally:
        core.close()


def test_interrupted_leader_lets_a_waiter_take_over(l2):
    calls = []
    started, release = threading.Event(), threading.Event()

    class Interrupt(BaseException):
        pass

    @cache(backend=l2, namespace=_ns("sfint"))
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
    _until(lambda: _in_core(load, 2, lambda: [t.native_id] + [w.native_id for w in threads]), "a waiter")
    release.set()
    _join([t] + threads)
    assert leader_out == ["interrupted"]
    assert errors == [None] and results == [[2]]  # the waiter started over and loaded
    assert load(1) == [2] and len(calls) == 2


def test_unstorable_value_is_shared_not_cached(l2):
    calls = []
    started, release = threading.Event(), threading.Event()

    @cache(backend=l2, namespace=_ns("sfset"))
    def load(x):
        calls.append(x)
        if len(calls) == 1:
            started.set()
            assert release.wait(30)
        return {x, len(calls)}  # a set: the standard serializer cannot store it

    threads, results, errors = _run_threads(8, lambda: load(1))
    _until(lambda: started.is_set() and _in_core(load, 8, lambda: [t.native_id for t in threads]),
           "7 waiters in the core")
    release.set()
    _join(threads)
    assert errors == [None] * 8
    assert len(calls) == 1
    assert all(r is results[0] for r in results) and results[0] == {1}
    assert load(1) == {1, 2}  # not cached
    st = _stats(load)
    assert st["stores"] == 0


# ---------------------------------------------------------------------------
# Coroutine functions: one flight per key on the event loop (no thread per
# caller); a waiter is seen in the flight's count of waiters.
# ---------------------------------------------------------------------------

def test_async_one_compute_for_32_tasks(l2):
    calls = []
    gate = asyncio.Event()  # binds to the loop on first use

    @cache(backend=l2, namespace=_ns("asf32"))
    async def load(x):
        calls.append(x)
        await gate.wait()
        return {"x": x}

    async def main():
        tasks = [asyncio.create_task(load(3)) for _ in range(32)]
        await _auntil(lambda: calls and _awaiting(load, 31), "31 waiters of the flight")
        gate.set()
        return await asyncio.gather(*tasks)

    res = asyncio.run(main())
    assert len(calls) == 1
    assert res == [{"x": 3}] * 32
    info = load.cache_info()
    assert info.misses == 1 and info.hits == 31


@pytest.mark.parametrize("exc_type", [ValueError, TimeoutError])
def test_async_exception_reaches_every_task_as_the_same_instance(l2, exc_type):
    calls = []
    raised = []
    gate = asyncio.Event()

    @cache(backend=l2, namespace=_ns("asferr"))
    async def load(x):
        calls.append(x)
        await gate.wait()
        if len(calls) == 1:
            raised.append(exc_type("loader failed"))
            raise raised[0]
        return [x]

    async def main():
        tasks = [asyncio.create_task(load(1)) for _ in range(32)]
        await _auntil(lambda: calls and _awaiting(load, 31), "31 waiters of the flight")
        gate.set()
        out = await asyncio.gather(*tasks, return_exceptions=True)
        # every task, the leader's included, got the instance the function raised
        # (a TimeoutError is not copied on its way through futures)
        assert all(e is raised[0] for e in out)
        st = _stats(load)
        assert st["stores"] == 0  # (async loads run on the loop: the core counts no load_errors)
        assert await load(1) == [1]

    asyncio.run(main())
    assert len(calls) == 2
    assert load.cache_info().misses == 33


def test_async_waiter_timeout_computes_itself_without_blocking_the_loop(l2):
    calls = []
    gate = asyncio.Event()

    @cache(backend=l2, namespace=_ns("asfto"))
    async def load(x):
        calls.append(x)
        n = len(calls)
        if n == 1:
            await gate.wait()
        return [n]

    core = _short_load_timeout(load, l2)

    async def main():
        leader = asyncio.create_task(load(1))
        await _auntil(lambda: calls, "the first load")
        ticks = 0

        async def ticker():
            nonlocal ticks
            while not gate.is_set():
                ticks += 1
                await asyncio.sleep(0)

        tick = asyncio.create_task(ticker())
        assert await load(1) == [2]  # gave up waiting: computed on this loop, uncached
        assert ticks > 0  # the loop ran while this caller waited
        gate.set()
        await tick
        assert await leader == [1]
        assert await load(1) == [1]

    try:
        asyncio.run(main())
    finally:
        core.close()
    assert len(calls) == 2


def test_async_recursion_on_the_same_key_is_a_deadlock_error(l2):
    calls = []

    @cache(backend=l2, namespace=_ns("asfrec"))
    async def rec(x):
        calls.append(x)
        return await rec(x)

    core = _short_load_timeout(rec, l2)

    async def main():
        with pytest.raises(CacheKitError) as ei:
            await rec(1)
        assert ei.value.code == lib.CACHEKIT_EDEADLOCK

    try:
        asyncio.run(main())
    finally:
        core.close()
    assert calls == [1]


def test_core_cache_reports_a_shared_failure():
    """CoreCache.get_or_load: a waiter gets LoadFailed (EUSER) carrying the leader's exception."""
    c = CoreCache(backend_url="memory://")
    started, release = threading.Event(), threading.Event()
    boom = KeyError("k")

    def failing():
        started.set()
        assert release.wait(30)
        raise boom

    out = []
    t = threading.Thread(target=lambda: out.append(pytest.raises(KeyError, c.get_or_load, b"n", b"n:k", 0.0,
                                                                 failing)), daemon=True)
    t.start()
    _until(started.is_set, "the load")
    waiter_out = []

    def wait():
        try:
            c.get_or_load(b"n", b"n:k", 0.0, lambda: b"\xc0")
        except LoadFailed as exc:
            waiter_out.append(exc)

    w = threading.Thread(target=wait, daemon=True)
    w.start()
    _until(lambda: all(c.stats(b"n")["misses"] >= 2 and _asleep([t.native_id, w.native_id]) for _ in range(2)),
           "a waiter")
    release.set()
    _join([t, w])
    assert out[0].value is boom
    (lf,) = waiter_out
    assert lf.code == lib.CACHEKIT_EUSER and lf.error is boom
    c.close()


# ---------------------------------------------------------------------------
# Object mode (backend=None), coroutine functions: the hit path
# ---------------------------------------------------------------------------

def test_async_object_mode_hits_do_not_build_the_c_key(monkeypatch):
    calls = []

    @cache(backend=None)
    async def get(x, y=0):
        calls.append(x)
        return [x, y]

    def no_key(*a, **k):
        raise AssertionError("an object-mode call computed the C auto key")

    monkeypatch.setattr(get._cachekit, "cached_key", no_key)

    async def main():
        a = await get(1)
        assert await get(1) is a
        b = await get(1, y=2)
        assert await get(1, y=2) is b
        c = await get(1, 2)
        assert await get(1, 2) is c

    asyncio.run(main())
    assert len(calls) == 3
    assert get.cache_info().hits == 3


def test_async_object_mode_out_of_range_ints_like_sync():
    scalls, acalls = [], []
    big = 2 ** 70

    @cache(backend=None)
    def sget(x):
        scalls.append(x)
        return [x]

    @cache(backend=None)
    async def aget(x):
        acalls.append(x)
        return [x]

    # Uncached in both, top-level or nested, as the reference (MessagePack cannot pack it).
    assert sget(big) == sget(big) == [big]

    async def main():
        assert await aget(big) == await aget(big) == [big]
        assert await aget(-big) == [-big]

    asyncio.run(main())
    assert scalls == [big, big] and acalls == [big, big, -big]
    sget([big]), sget([big])
    asyncio.run(aget([big]))
    asyncio.run(aget([big]))
    assert len(scalls) == 4 and len(acalls) == 5
