"""The async bridge of L2 mode: coroutine functions over the core's blocking calls."""
from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
from typing import Any, Callable

from cachekit._core import LoadTimeout
from cachekit._keys import _L2_KEY_ERRORS, _UNCACHED
from cachekit._l2mode import _COMPUTE, _FAILED, _RAISE, _VALUE

# Async L2 loads: the marks [core, key, running] of the loads the current
# task's context runs (the core's EDEADLOCK sees threads, not tasks).
_LEADING: contextvars.ContextVar[tuple] = contextvars.ContextVar("cachekit_leading", default=())


async def _lead(fn: Callable, args: tuple, kwargs: dict, mark: list) -> tuple:
    """An async function run for a load, as (True, value) or (False, exception)
    (returned, not raised: futures would copy a TimeoutError)."""
    _LEADING.set(_LEADING.get() + (mark,))
    try:
        return True, await fn(*args, **kwargs)
    except Exception as exc:
        return False, exc


def _leading(core: Any, key: bytes) -> bool:
    return any(m[2] and m[0] is core and m[1] == key for m in _LEADING.get())


class AsyncL2Mixin:
    """Part of _Cached: its L2-mode calls for coroutine functions."""

    async def acall(self, args: tuple, kwargs: dict) -> Any:
        key, kwargs = self.key_of_call(args, kwargs, self.cached_key, _L2_KEY_ERRORS)
        if key is _UNCACHED:
            return await self.fn(*args, **kwargs)
        loop = asyncio.get_running_loop()
        # As in call: the first pass is the hit path; the loop is for retries.
        while True:
            holder: list = []
            try:
                value, info = await asyncio.to_thread(self.core.get_or_load, self.ns_bytes, key, self.core_ttl,
                                                      self.l2_aloader(holder, key, args, kwargs, loop), self.decode)
            except BaseException as exc:
                outcome = exc
            else:
                if self.settle(key, info.source):
                    return holder[0]
                if info.refresh:
                    self.arefresh(loop, key, args, kwargs, info.refresh_claim)
                return value
            if isinstance(outcome, LoadTimeout) and _leading(self.core, key):
                # This task runs the key's load itself (the function awaited itself
                # with the same arguments): the core cannot see it across threads.
                outcome = self.deadlock()
            what, x = self.l2_settle(outcome, holder)
            holder.clear()  # drops the exception it may hold (a cycle through its traceback)
            if what is _VALUE:
                return x
            if what is _RAISE:
                raise x
            if what is _COMPUTE:
                return await self.fn(*args, **kwargs)

    def l2_aloader(self, holder: list, key: bytes, args: tuple, kwargs: dict,
                   loop: asyncio.AbstractEventLoop) -> Callable[[], bytes]:
        fn = self.fn
        storable = self.storable
        core = self.core

        def compute() -> bytes:
            # Runs on the worker thread that holds the single-flight claim; the
            # coroutine itself runs on the caller's event loop.
            mark = [core, key, True]
            try:
                try:
                    ok, v = asyncio.run_coroutine_threadsafe(_lead(fn, args, kwargs, mark), loop).result()
                except concurrent.futures.CancelledError:
                    # Its task was cancelled (the loop shuts down): an interrupted
                    # load, which the waiters start over.
                    raise asyncio.CancelledError() from None
                if not ok:
                    raise v
            except BaseException as exc:
                # The instance itself: passing futures would copy a TimeoutError.
                holder.append(_FAILED)
                holder.append(exc)
                raise
            finally:
                mark[2] = False
            holder.append(v)
            return storable(v)

        return compute
