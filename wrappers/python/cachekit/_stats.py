"""cache_info(): the decorator's own counters (hits, misses, L1/L2 hits)."""
from __future__ import annotations

import time
from typing import Any, NamedTuple, Optional

from cachekit._config import _PROCESS_ID
from cachekit._core import SOURCE_L1, SOURCE_L2, SOURCE_WAITED, CacheKitError


class CacheInfo(NamedTuple):
    hits: int
    misses: int
    l1_hits: int
    l2_hits: int
    maxsize: Optional[int]
    currsize: Optional[int]
    l2_avg_latency_ms: float
    last_operation_at: Optional[float]
    session_id: str
    # The L2's health (state "ok" / "down" / "breaker_open", backend, last_error,
    # last_error_at, since, consecutive_failures, coherence); None without a core.
    backend_health: Optional[dict[str, Any]] = None


class StatsMixin:
    """Part of _Cached: counting its calls."""

    def count(self, source: int) -> None:
        with self.lock:
            self.last_op = time.time()
            if source == SOURCE_L1 or source == SOURCE_WAITED:
                self.hits += 1
                self.l1_hits += 1
            elif source == SOURCE_L2:
                self.hits += 1
                self.l2_hits += 1
            else:
                self.misses += 1

    def count_miss(self) -> None:
        with self.lock:
            self.misses += 1
            self.last_op = time.time()

    def count_waited(self) -> None:
        # A caller that got another caller's load counts as an L1 hit (as with an L2).
        with self.lock:
            self.l1_hits += 1
            self.last_op = time.time()

    def info(self) -> CacheInfo:
        self.settle_backend()
        if self.objects is not None:
            hits = self.objects.total_hits() + self.l1_hits
            return CacheInfo(hits, self.misses, hits, 0, self.objects.max_entries, len(self.objects), 0.0,
                             self.last_op, self.session_id)
        avg = 0.0
        health = None
        try:
            st = self.core.stats(self.ns_bytes)
            if st["l2_latency_count"]:
                avg = st["l2_latency_sum_ms"] / st["l2_latency_count"]
            health = self.core.health()
        except CacheKitError:
            pass
        return CacheInfo(self.hits, self.misses, self.l1_hits, self.l2_hits, None, None, avg, self.last_op,
                         self.session_id, health)

    def reset_stats(self) -> None:
        with self.lock:
            self.hits = self.misses = self.l1_hits = self.l2_hits = 0
            self.clears += 1
            self.session_id = f"{_PROCESS_ID}:{self.module}.{self.qualname}#{self.clears}"
            if self.objects is not None:
                with self.objects.lock:
                    self.objects.evicted_hits = 0
                    for e in self.objects.data.values():
                        e[2] = 0
                        e[6] = 0
