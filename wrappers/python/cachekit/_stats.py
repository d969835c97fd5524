"""cache_info(): the counters of a function identity (hits, misses, L1/L2 hits)."""
from __future__ import annotations

import os
import threading
import time
import weakref
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


class Counters:
    """The counters of one function identity (module.qualname), as the reference keeps
    them (its process-wide _function_stats_registry): every decoration of that name in
    the process (re-decoration, a factory that decorates per call, each tenant's state)
    counts into one, and cache_info() / cache_clear() of any of them read and reset it.
    Object mode's hits are counted on its entries (the C hit path bumps them), so the
    decorations' object stores are summed in at read time."""

    def __init__(self, identity: str) -> None:
        self.identity = identity
        self.lock = threading.Lock()
        self.hits = self.misses = self.l1_hits = self.l2_hits = 0
        self.last_op: Optional[float] = None
        self.clears = 0
        self.session_id = f"{_PROCESS_ID}:{identity}"
        self.members: "weakref.WeakSet[Any]" = weakref.WeakSet()  # the states whose object stores count here

    def object_hits(self) -> int:
        return sum(st.objects.total_hits() for st in list(self.members) if st.objects is not None)

    def after_fork(self) -> None:
        """In a forked child: a lock a parent's thread held is never waited for."""
        self.lock = threading.Lock()


_COUNTERS: dict[str, Counters] = {}
_COUNTERS_LOCK = threading.Lock()


def counters_for(state: Any) -> Counters:
    """The shared counters of `state`'s function identity (cache.local keeps its own, as
    the reference's local wrapper does)."""
    identity = f"{state.module}.{state.qualname}"
    if state.local:
        c = Counters(identity)
    else:
        with _COUNTERS_LOCK:
            c = _COUNTERS.get(identity)
            if c is None:
                c = _COUNTERS[identity] = Counters(identity)
    c.members.add(state)
    return c


def _after_fork_in_child() -> None:  # pragma: no cover - fork only
    global _COUNTERS_LOCK
    _COUNTERS_LOCK = threading.Lock()
    for c in list(_COUNTERS.values()):
        c.after_fork()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


class StatsMixin:
    """Part of _Cached: counting its calls (into its identity's Counters)."""

    counters: Counters

    def count(self, source: int) -> None:
        c = self.counters
        with c.lock:
            c.last_op = time.time()
            if source == SOURCE_L1 or source == SOURCE_WAITED:
                c.hits += 1
                c.l1_hits += 1
            elif source == SOURCE_L2:
                c.hits += 1
                c.l2_hits += 1
            else:
                c.misses += 1

    def count_miss(self) -> None:
        c = self.counters
        with c.lock:
            c.misses += 1
            c.last_op = time.time()

    def count_waited(self) -> None:
        # A caller that got another caller's load counts as an L1 hit (as with an L2).
        c = self.counters
        with c.lock:
            c.hits += 1
            c.l1_hits += 1
            c.last_op = time.time()

    def info(self) -> CacheInfo:
        """This function's counters: hits, misses, L1/L2 hits, sizes, backend health (cache_info)."""
        self.settle_backend()
        c = self.counters
        obj_hits = c.object_hits()
        with c.lock:
            hits, misses, l1_hits, l2_hits = c.hits + obj_hits, c.misses, c.l1_hits + obj_hits, c.l2_hits
            last_op, session_id = c.last_op, c.session_id
        if self.objects is not None:
            return CacheInfo(hits, misses, l1_hits, l2_hits, self.objects.max_entries, len(self.objects), 0.0,
                             last_op, session_id)
        avg = 0.0
        health = None
        try:
            st = self.core.stats(self.ns_bytes)
            if st["l2_latency_count"]:
                avg = st["l2_latency_sum_ms"] / st["l2_latency_count"]
            health = self.core.health()
        except CacheKitError:
            pass
        return CacheInfo(hits, misses, l1_hits, l2_hits, None, None, avg, last_op, session_id, health)

    def reset_stats(self) -> None:
        c = self.counters
        with c.lock:
            c.hits = c.misses = c.l1_hits = c.l2_hits = 0
            c.last_op = None
            c.clears += 1
            c.session_id = f"{_PROCESS_ID}:{c.identity}#{c.clears}"
        for st in list(c.members):
            if st.objects is not None:
                with st.objects.lock:
                    st.objects.evicted_hits = 0
                    for e in st.objects.data.values():
                        e[2] = 0
                        e[6] = 0
