"""L2 mode for coroutine functions, without a thread per call.

- A hit in L1 is answered inline on the event loop (cachekit_cache_peek: L1
  only, never L2 I/O).
- Otherwise callers of one key on one event loop merge into one flight: its
  load runs in a task of its own (started by the first caller), which reads
  L2 through the core's executor (CoreCache.executor, never the loop's
  default one) with cachekit_cache_get_for_load, whose miss hands it the
  core's load claim; it runs the function on the loop and lands the value
  through the executor with put_refresh(claim), which stores nothing when the
  key, its namespace or the cache was put or invalidated on the core
  meanwhile (by any function or handle sharing it), as a sync load's value; a
  function that raises or is cancelled abandons the claim (a load error of
  the core). The first caller awaits the load task, the others the flight's
  outcome (they decode the leader's bytes).
- Cancelling a caller (its timeout, a dropped client) cancels only its wait
  while another caller still waits: the load goes on for them, once, as in
  the reference. The last caller that goes away cancels the load (the
  function with it) and returns once it has unwound.
- The outcomes are those of the sync path (_l2mode.py): the same exception
  instance for every waiter, a load cancelled under its callers (not through
  them) hands the load to a waiter, an unstorable value is shared uncached, a
  waiter that waits load_timeout computes for itself.
"""
from __future__ import annotations

import asyncio
import contextvars
from typing import Any

from cachekit._core import SOURCE_L1, SOURCE_LOADED, SOURCE_WAITED, UnreadableValue
from cachekit._keys import _L2_KEY_ERRORS, _UNCACHED
from cachekit._l2mode import _Unstorable
from cachekit._refresh import _REFRESH_PENDING

# The loads the current task (and the tasks it starts) leads: [state, key,
# running] marks, so that a function awaiting itself with the same arguments
# is a DeadlockError at once instead of a wait on itself.
_LEADING: contextvars.ContextVar[tuple] = contextvars.ContextVar("cachekit_leading", default=())

# A flight's outcomes, as its future's result: (kind, x).
_BYTES, _OBJECT, _ERROR, _AGAIN = range(4)


class AFlight:
    """One async load of a key on one event loop: its task, the future of its
    outcome, whether its starter still awaits it and how many other callers do."""

    __slots__ = ("future", "waiters", "task", "starter")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.future: asyncio.Future = loop.create_future()
        self.waiters = 0
        self.task: Any = None
        self.starter = True

    def wanted(self) -> bool:
        return self.starter or self.waiters > 0


class _Restart(Exception):
    """The load was cancelled under its starter (not through it): start over."""


def _cancelling() -> bool:
    """Whether the current task was asked to cancel (rather than seeing a task it awaits cancelled)."""
    task = asyncio.current_task()
    cancelling = getattr(task, "cancelling", None)
    return cancelling is None or cancelling() > 0


def _retrieve(task: asyncio.Task) -> None:
    """A load's exception is its callers' (or nobody's, once they left): never 'never retrieved'."""
    if not task.cancelled():
        task.exception()


def _leading(state: Any, key: bytes) -> bool:
    return any(m[2] and m[0] is state and m[1] == key for m in _LEADING.get())


async def _read_for_load(loop: asyncio.AbstractEventLoop, pool: Any, core: Any, ns: Any, key: bytes) -> tuple:
    """core.get_for_load on the executor. The read goes on when the awaiting
    task is cancelled (or closed) meanwhile, and a miss it ends with holds a
    load claim nobody would see: that claim is abandoned once the read ends."""
    job = pool.submit(core.get_for_load, ns, key)
    try:
        return await asyncio.wrap_future(job, loop=loop)
    except BaseException:
        if not job.cancel():  # started (or done): its claim, if any, is released when it ends
            job.add_done_callback(lambda done: _abandon_claim_of(done, core, key))
        raise


def _abandon_claim_of(done: Any, core: Any, key: bytes) -> None:
    if done.cancelled() or done.exception() is not None:
        return
    data, info = done.result()
    if data is None and info.refresh_claim:
        core.abandon_refresh(key, info.refresh_claim)


async def _land(loop: asyncio.AbstractEventLoop, pool: Any, core: Any, ns: Any, key: bytes, data: bytes,
                ttl: float, claim: int) -> bool:
    """core.put_refresh(claim) on the executor. Once the write has started it
    settles the claim itself, even if the awaiting task goes away; a write
    cancelled before it started never will, so its claim is abandoned here."""
    job = pool.submit(core.put_refresh, ns, key, data, ttl, claim)
    try:
        return await asyncio.wrap_future(job, loop=loop)
    except BaseException:
        if job.cancel():
            core.abandon_refresh(key, claim)
        raise


async def _unwanted(flight: AFlight, wait: bool = True) -> None:
    """A caller left `flight`: when it was the last one, nobody wants the load, so it
    is cancelled (out of the map first, so no caller joins it) and, with `wait`, this
    caller returns once it has unwound, as when the function ran inline."""
    task = flight.task
    if flight.wanted() or task is None or task.done():
        return
    task.cancel()
    if wait:
        await asyncio.wait((task,))


class AsyncL2Mixin:
    """Part of _Cached: its L2-mode calls for coroutine functions."""

    async def acall(self, args: tuple, kwargs: dict) -> Any:
        key, kwargs = self.key_of_call(args, kwargs, self.cached_key, _L2_KEY_ERRORS)
        if key is _UNCACHED:
            return await self.fn(*args, **kwargs)
        core = self._core or self.build_core()
        try:
            hit = core.peek(self.ns_bytes, key, self.decode)
        except UnreadableValue as exc:
            self.drop_unreadable(core, key, exc)
            hit = None
        if hit is not None:
            value, info = hit
            self.count(SOURCE_L1)
            if info.refresh:
                self.arefresh(asyncio.get_running_loop(), key, args, kwargs, info.refresh_claim)
            return value
        return await self.amiss(core, key, args, kwargs)

    async def amiss(self, core: Any, key: bytes, args: tuple, kwargs: dict) -> Any:
        loop = asyncio.get_running_loop()
        flights = self.aflights
        fkey = (loop, key)
        while True:
            flight = flights.get(fkey)
            if flight is None:
                try:
                    return await self.astart(core, key, args, kwargs, loop, fkey)
                except _Restart:
                    continue
            if _leading(self, key):
                raise self.deadlock()
            flight.waiters += 1
            try:
                kind, x = await asyncio.wait_for(asyncio.shield(flight.future), self.load_timeout)
            except asyncio.TimeoutError:
                # The leader is too slow: compute here, uncached (only the
                # leader stores, so this value cannot undo an invalidation).
                flight.waiters -= 1
                self.count(SOURCE_LOADED)
                return await self.fn(*args, **kwargs)
            except asyncio.CancelledError:
                flight.waiters -= 1
                await _unwanted(flight)
                raise
            except BaseException:
                flight.waiters -= 1
                await _unwanted(flight, wait=False)
                raise
            else:
                flight.waiters -= 1
            if kind == _BYTES:
                self.count(SOURCE_WAITED)
                return self.decode(x)
            if kind == _OBJECT:
                self.count(SOURCE_WAITED)
                return x
            if kind == _ERROR:
                self.count_miss()
                raise x
            # _AGAIN: the load was cancelled under its callers: start over (one waiter leads).

    async def astart(self, core: Any, key: bytes, args: tuple, kwargs: dict, loop: asyncio.AbstractEventLoop,
                     fkey: tuple) -> Any:
        """Start the key's load in a task of its own and await it: cancelling this caller
        leaves the load to the callers still waiting, and cancels it when none is."""
        flight = AFlight(loop)
        self.aflights[fkey] = flight
        task = flight.task = loop.create_task(self.alead(core, key, args, kwargs, loop, fkey, flight))
        # Cancelled before it ran a step, its own finally never runs: the flight ends here then.
        task.add_done_callback(lambda t: self.publish(fkey, flight, (_AGAIN, None)))
        task.add_done_callback(_retrieve)
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            flight.starter = False
            if task.cancelled() and not _cancelling():
                raise _Restart() from None  # cancelled under this caller, which still wants a value
            await _unwanted(flight)
            raise
        except BaseException:
            flight.starter = False
            await _unwanted(flight, wait=False)
            raise

    async def alead(self, core: Any, key: bytes, args: tuple, kwargs: dict, loop: asyncio.AbstractEventLoop,
                    fkey: tuple, flight: AFlight) -> Any:
        outcome: tuple = (_AGAIN, None)
        mark = [self, key, True]
        token = _LEADING.set(_LEADING.get() + (mark,))
        claim = 0  # the core's load claim while this leader holds it
        try:
            ns, pool = self.ns_bytes, core.executor()
            for _ in range(2):  # an unreadable value is dropped and looked up once more
                data, info = await _read_for_load(loop, pool, core, ns, key)
                if data is None:
                    claim = info.refresh_claim
                    break
                try:
                    value = self.decode(data, info.temporal_keys)
                except Exception as exc:  # unreadable: a miss, recomputed and replaced
                    await loop.run_in_executor(pool, self.drop_unreadable, core, key, UnreadableValue(exc))
                else:
                    outcome = (_BYTES, data)
                    self.count(info.source)
                    return value
            generation = self.generation
            try:
                value = await self.fn(*args, **kwargs)
            except Exception as exc:
                outcome = (_ERROR, exc)
                self.count_miss()
                raise
            self.count(SOURCE_LOADED)
            try:
                data = self.storable(value)
            except _Unstorable as exc:
                self.unsupported(exc.cause)
                outcome = (_OBJECT, value)
                return value
            outcome = (_BYTES, data)
            self.publish(fkey, flight, outcome)  # the waiters need not wait for the write
            # invalidate_cache() without arguments forgets the keys this process
            # wrote, not this one yet: its generation keeps the value out.
            # (No claim: unreadable twice, another writer's; as in the sync
            # path, this value is not stored.)
            if claim and generation == self.generation:
                landing, claim = claim, 0  # _land settles it, whatever becomes of this task
                if await _land(loop, pool, core, ns, key, data, self.core_ttl, landing):
                    self.note_written(key)
            return value
        finally:
            # The function raised, this task was cancelled or closed at any
            # await, or the value is not stored: the claim goes back (a load
            # error of the core), so the key's claim entry does not outlive us.
            if claim:
                core.abandon_refresh(key, claim)
            mark[2] = False
            _LEADING.reset(token)
            self.publish(fkey, flight, outcome)

    def publish(self, fkey: tuple, flight: AFlight, outcome: tuple) -> None:
        """End the flight: later callers start their own; its waiters get `outcome`."""
        if self.aflights.get(fkey) is flight:
            del self.aflights[fkey]
        if not flight.future.done():
            flight.future.set_result(outcome)

    def arefresh(self, loop: asyncio.AbstractEventLoop, key: bytes, args: tuple, kwargs: dict, claim: int) -> None:
        """A stale L1 hit's refresh: the function on the loop, the write through the executor."""
        core = self._core or self.build_core()
        if len(self.refreshing) >= _REFRESH_PENDING:  # the bound of the sync pool's queue
            core.abandon_refresh(key, claim)
            return

        async def refresh() -> None:
            try:
                data = self.storable(await self.fn(*args, **kwargs))
            except BaseException:
                core.abandon_refresh(key, claim)
                return
            try:
                await _land(loop, core.executor(), core, self.ns_bytes, key, data, self.core_ttl, claim)
            except Exception:  # a failed write may not have settled the claim
                core.abandon_refresh(key, claim)

        task = loop.create_task(refresh())
        self.refreshing.add(task)
        task.add_done_callback(self.refreshing.discard)

