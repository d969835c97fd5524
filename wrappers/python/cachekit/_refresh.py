"""Stale-while-revalidate: background refreshes of stale entries, on one
bounded pool per decorated function (every mode): _REFRESH_WORKERS threads,
at most _REFRESH_PENDING refreshes queued or running; a stale hit past that
bound is served without a refresh (the next stale hit may start one)."""
from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

log = logging.getLogger("cachekit")

_REFRESH_WORKERS = 2
_REFRESH_PENDING = 32


class RefreshMixin:
    """Part of _Cached: refreshing its stale entries."""

    refresh_pool: Any = None
    refresh_pending = 0

    def refresh_submit(self, job: Callable[[], None]) -> bool:
        """Run `job` on this function's refresh pool; False (not run) when the
        pool has _REFRESH_PENDING refreshes already."""
        with self.lock:
            if self.refresh_pending >= _REFRESH_PENDING:
                return False
            self.refresh_pending += 1
            pool = self.refresh_pool
            if pool is None:
                pool = self.refresh_pool = ThreadPoolExecutor(_REFRESH_WORKERS, thread_name_prefix="cachekit-swr")

        def run() -> None:
            try:
                job()
            finally:
                with self.lock:
                    self.refresh_pending -= 1

        try:
            pool.submit(run)
        except RuntimeError:  # the pool is shut down (interpreter exit)
            with self.lock:
                self.refresh_pending -= 1
            return False
        return True

    def obj_refresh(self, key: Any, args: tuple, kwargs: dict, types: Any, e: list) -> None:
        with self.lock:
            if key in self.refreshing:
                return
            self.refreshing.add(key)

        def run() -> None:
            try:
                value = self.fn(*args, **kwargs)
                # Lands only over the entry it refreshes (not after an invalidation or a newer fill).
                self.objects.replace(key, e, self.obj_entry(key, value, types), time.monotonic())
            except Exception:
                log.debug("cachekit: background refresh failed", exc_info=True)
            finally:
                with self.lock:
                    self.refreshing.discard(key)

        if self.refresh_submit(run):
            e[3] = e[1]  # one refresh per staleness period
        else:
            with self.lock:
                self.refreshing.discard(key)

    def refresh_in_background(self, key: bytes, args: tuple, kwargs: dict, claim: int) -> None:
        core = self.core

        def run() -> None:
            try:
                v = self.fn(*args, **kwargs)
                core.put_refresh(self.ns_bytes, key, self.storable(v), self.core_ttl, claim)
            except BaseException:
                core.abandon_refresh(key, claim)
                log.debug("cachekit: background refresh failed", exc_info=True)

        if not self.refresh_submit(run):
            core.abandon_refresh(key, claim)
