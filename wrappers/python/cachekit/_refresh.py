"""Stale-while-revalidate: background refreshes of stale entries."""
from __future__ import annotations

import logging
import threading
import time
from typing import Any

log = logging.getLogger("cachekit")


class RefreshMixin:
    """Part of _Cached: refreshing its stale entries."""

    def obj_refresh(self, key: Any, args: tuple, kwargs: dict, types: Any, e: list) -> None:
        with self.lock:
            if key in self.refreshing or len(self.refreshing) >= 32:
                return
            self.refreshing.add(key)
        e[3] = e[1]  # one refresh per staleness period

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

        threading.Thread(target=run, daemon=True, name="cachekit-swr").start()

    def refresh_in_background(self, key: bytes, args: tuple, kwargs: dict, claim: int) -> None:
        def run() -> None:
            try:
                v = self.fn(*args, **kwargs)
                self.core.put_refresh(self.ns_bytes, key, self.encode(v), self.core_ttl, claim)
            except BaseException:
                self.core.abandon_refresh(key, claim)
                log.debug("cachekit: background refresh failed", exc_info=True)

        threading.Thread(target=run, daemon=True, name="cachekit-swr").start()
