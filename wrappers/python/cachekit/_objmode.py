"""Object mode (backend=None, cache.local): values kept as the very objects in
an ObjectCache; misses single-flight across threads and tasks. The sync and
async paths share each step: the key (obj_key), the join (ObjectCache.join),
the leader's outcome (lead_failed / lead_done) and a waiter's (waited)."""
from __future__ import annotations

import asyncio
import random
import threading
import time
from typing import Any

from cachekit._core import DeadlockError, lib
from cachekit._keys import _OBJ_KEY_ERRORS, _UNCACHED
from cachekit._objcache import HIT, LEAD, SELF, Flight
from cachekit._sizeof import ENTRY_OVERHEAD, estimate


class ObjectModeMixin:
    """Part of _Cached: its object-mode calls."""

    def obj_entry(self, key: Any, value: Any, types: Any) -> list:
        now = time.monotonic()
        ttl = self.obj_ttl
        expires = now + ttl
        stale = min(now + ttl * self.swr_ratio * random.uniform(0.9, 1.1), expires) if self.swr_enabled else expires
        return [value, expires, 0, stale, ENTRY_OVERHEAD + estimate(key) + estimate(value), types, 0]

    def deadlock(self) -> DeadlockError:
        return DeadlockError(lib.CACHEKIT_EDEADLOCK,
                             f"{self.module}.{self.qualname} called itself with the same arguments while computing "
                             "them: the value it is computing cannot be waited for")

    def waited(self, f: Flight) -> Any:
        """A settled flight's outcome for one of its waiters (not abandoned)."""
        if f.error is not None:
            self.count_miss()
            raise f.error.with_traceback(f.tb)
        self.count_waited()
        return f.value

    def obj_slow(self, args: tuple, kwargs: dict) -> Any:
        # key_of_call written out: this is the hit path of calls the short path
        # does not take (several arguments, kwargs), where its call costs ~20 %.
        if "_bypass_cache" in kwargs:
            kwargs = dict(kwargs)
            if kwargs.pop("_bypass_cache"):
                return self.fn(*args, **kwargs)
        try:
            key = self.obj_key(args, kwargs)
        except _OBJ_KEY_ERRORS as exc:
            if self.local:
                raise  # cache.local lets it through, as the reference's local wrapper does
            self.unsupported(exc)
            return self.fn(*args, **kwargs)
        except Exception as exc:
            if not self.key_fn_failed(exc):
                raise
            return self.fn(*args, **kwargs)
        types = None
        e = self.objects.data.get(key)
        now = time.monotonic()
        if e is not None:
            if now < e[1]:
                e[2] += 1
                if now >= e[3] and self.swr_enabled:
                    self.obj_refresh(key, args, kwargs, types, e)
                return e[0]
            self.objects.discard(key, e)
        return self.obj_load(key, args, kwargs, types)

    # The steps of a miss, shared by the sync and async paths ---------------

    def obj_join(self, key: Any, me: Any) -> tuple:
        """(HIT, value), (LEAD, flight) or (WAIT, flight); a caller already
        leading this key's load (it called itself) is a DeadlockError."""
        role, x = self.objects.join(key, me, time.monotonic())
        if role == SELF:
            raise self.deadlock()
        return role, x

    def lead_failed(self, key: Any, f: Flight, exc: BaseException) -> None:
        """The leader's function raised: its waiters get the very same exception;
        after a BaseException (interrupt, cancellation) they start over."""
        if isinstance(exc, Exception):
            self.objects.settle(key, f, error=exc, tb=exc.__traceback__)
        else:
            self.objects.settle(key, f, abandoned=True)

    def lead_done(self, key: Any, f: Flight, value: Any, types: Any) -> Any:
        """The leader's value: stored while its flight is current, handed to its waiters."""
        try:
            self.objects.land(key, f, self.obj_entry(key, value, types), time.monotonic())
        finally:
            self.objects.settle(key, f, value=value)
        return value

    def waited_too_long(self, key: Any, f: Flight, value: Any, types: Any) -> Any:
        """A waiter that gave up on a slow leader computed `value`: stored only
        while the leader's flight is current."""
        self.objects.land(key, f, self.obj_entry(key, value, types), time.monotonic())
        return value

    # Sync ------------------------------------------------------------------------

    def obj_load(self, key: Any, args: tuple, kwargs: dict, types: Any) -> Any:
        """A miss in object mode, single-flight across threads: the first caller
        computes, the others wait (up to load_timeout, then compute for
        themselves) and get the very same object or exception."""
        me = threading.get_ident()
        while True:
            role, x = self.obj_join(key, me)
            if role == HIT:
                return x
            if role == LEAD:
                return self.obj_lead(key, x, args, kwargs, types)
            f: Flight = x
            if not f.event.wait(self.load_timeout):
                self.count_miss()
                return self.waited_too_long(key, f, self.fn(*args, **kwargs), types)
            if not f.abandoned:
                return self.waited(f)

    def obj_lead(self, key: Any, f: Flight, args: tuple, kwargs: dict, types: Any) -> Any:
        self.count_miss()
        try:
            value = self.fn(*args, **kwargs)
        except BaseException as exc:
            self.lead_failed(key, f, exc)
            raise
        return self.lead_done(key, f, value, types)

    # Async -----------------------------------------------------------------------

    async def obj_aslow(self, args: tuple, kwargs: dict) -> Any:
        """obj_slow for coroutine functions (without stale-while-revalidate)."""
        key, kwargs = self.key_of_call(args, kwargs, self.obj_key, _OBJ_KEY_ERRORS)
        if key is _UNCACHED:
            return await self.fn(*args, **kwargs)
        e = self.objects.data.get(key)
        if e is not None:
            if time.monotonic() < e[1]:
                e[2] += 1
                return e[0]
            self.objects.discard(key, e)
        return await self.obj_aload(key, args, kwargs, None)

    async def obj_aload(self, key: Any, args: tuple, kwargs: dict, types: Any) -> Any:
        """obj_load for coroutine functions: one task computes, the others await
        its outcome (from any event loop) without blocking their loop."""
        me = asyncio.current_task() or object()
        loop = asyncio.get_running_loop()
        while True:
            role, x = self.obj_join(key, me)
            if role == HIT:
                return x
            if role == LEAD:
                try:
                    return await self.obj_astart(key, x, args, kwargs, types, loop)
                except _Restart:
                    continue
            f: Flight = x
            fut = self.objects.listen(f, loop)
            if fut is not None:
                try:
                    await asyncio.wait_for(fut, self.load_timeout)
                except asyncio.TimeoutError:
                    self.objects.leave(f)
                    self.count_miss()
                    return self.waited_too_long(key, f, await self.fn(*args, **kwargs), types)
                except BaseException:
                    if self.objects.leave(f):
                        _cancel_load(f)  # the last caller gone: nobody wants the load any more
                    raise
            self.objects.leave(f)
            if not f.abandoned:
                return self.waited(f)

    async def obj_astart(self, key: Any, f: Flight, args: tuple, kwargs: dict, types: Any,
                         loop: asyncio.AbstractEventLoop) -> Any:
        """The load in a task of its own, awaited by its starter: cancelling the starter
        leaves it to the callers still waiting (one compute, as the reference), and
        cancels it when none is."""
        task = f.task = loop.create_task(self.obj_alead(key, f, args, kwargs, types))
        f.owner = task  # the function calling itself runs in this task: a DeadlockError
        # Cancelled before it ran a step, obj_alead never settles the flight: its waiters start over.
        task.add_done_callback(lambda t: self.objects.settle(key, f, abandoned=True))
        task.add_done_callback(_retrieve)
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            nobody = self.objects.starter_left(f)
            if task.cancelled() and not _cancelling():
                raise _Restart() from None  # cancelled under this caller, which still wants a value
            if nobody and not task.done():
                task.cancel()
                await asyncio.wait((task,))  # returns once the function has unwound, as inline
            raise
        except BaseException:
            if self.objects.starter_left(f):
                _cancel_load(f)
            raise

    async def obj_alead(self, key: Any, f: Flight, args: tuple, kwargs: dict, types: Any) -> Any:
        self.count_miss()
        try:
            value = await self.fn(*args, **kwargs)
        except BaseException as exc:
            self.lead_failed(key, f, exc)
            raise
        return self.lead_done(key, f, value, types)


class _Restart(Exception):
    """The load was cancelled under its starter (not through it): start over."""


def _cancelling() -> bool:
    """Whether the current task was asked to cancel (rather than seeing a task it awaits cancelled)."""
    cancelling = getattr(asyncio.current_task(), "cancelling", None)
    return cancelling is None or cancelling() > 0


def _retrieve(task: asyncio.Task) -> None:
    """A load's exception is its callers' (or nobody's, once they left): never 'never retrieved'."""
    if not task.cancelled():
        task.exception()


def _cancel_load(f: Flight) -> None:
    """Cancel an async load nobody awaits, from any thread (its task is its own loop's)."""
    task = f.task
    if task is None or task.done():
        return
    try:
        task.get_loop().call_soon_threadsafe(task.cancel)
    except RuntimeError:  # its loop is closed: it never runs again anyway
        pass
