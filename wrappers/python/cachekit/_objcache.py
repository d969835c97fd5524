"""L1-only object cache (backend=None, @cache.local): values are kept as the
very objects, with TTL, an entry bound and a byte budget (recursive getsizeof
estimate), CLOCK (second-chance) eviction approximating LRU, and an optional
stale-while-revalidate refresh.

Entries are lists [value, expires_at, hits, stale_at, size, types, hits_at_last_clock_pass]; the hot
path in the decorator reads them directly.
"""
from __future__ import annotations

import sys
import threading
from collections import OrderedDict
from typing import Any, Optional

# Entry slots
VALUE, EXPIRES, HITS, STALE, SIZE, TYPES, REF = range(7)


def estimate_size(obj: Any, _depth: int = 0) -> int:
    """A recursive sys.getsizeof estimate (bounded depth)."""
    size = sys.getsizeof(obj)
    if _depth > 20:
        return size
    if isinstance(obj, dict):
        for k, v in obj.items():
            size += estimate_size(k, _depth + 1) + estimate_size(v, _depth + 1)
    elif isinstance(obj, (list, tuple, set, frozenset)):
        for v in obj:
            size += estimate_size(v, _depth + 1)
    return size


class ObjectCache:
    def __init__(self, max_entries: Optional[int], max_bytes: int) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.data: "OrderedDict[Any, list]" = OrderedDict()
        self.bytes = 0
        self.lock = threading.RLock()
        self.evicted_hits = 0  # hits of entries no longer held (for cache_info)
        self.evictions = 0

    def __len__(self) -> int:
        return len(self.data)

    def put(self, key: Any, entry: list, now: float) -> bool:
        size = entry[SIZE]
        if size > self.max_bytes:
            self.pop(key)
            return False
        with self.lock:
            old = self.data.pop(key, None)
            if old is not None:
                self.bytes -= old[SIZE]
                self.evicted_hits += old[HITS]
            self._make_room(size, now)
            self.data[key] = entry
            self.bytes += size
        return True

    def _make_room(self, size: int, now: float) -> None:
        data = self.data

        def full() -> bool:
            return (self.bytes + size > self.max_bytes) or (
                self.max_entries is not None and len(data) + 1 > self.max_entries)

        if not full():
            return
        # Expired entries first.
        for k in [k for k, e in data.items() if e[EXPIRES] <= now]:
            self._drop(k)
        # Then CLOCK: an entry hit since it was last passed gets a second chance.
        guard = 2 * len(data) + 1
        while full() and data and guard > 0:
            guard -= 1
            k, e = next(iter(data.items()))
            if getattr_ref(e):
                clear_ref(e)
                data.move_to_end(k)
                continue
            self._drop(k)
            self.evictions += 1
        while full() and data:
            self._drop(next(iter(data)))
            self.evictions += 1

    def _drop(self, key: Any) -> None:
        e = self.data.pop(key)
        self.bytes -= e[SIZE]
        self.evicted_hits += e[HITS]

    def pop(self, key: Any) -> Optional[list]:
        with self.lock:
            e = self.data.pop(key, None)
            if e is not None:
                self.bytes -= e[SIZE]
                self.evicted_hits += e[HITS]
            return e

    def clear(self) -> None:
        with self.lock:
            self.data.clear()
            self.bytes = 0

    def total_hits(self) -> int:
        with self.lock:
            return self.evicted_hits + sum(e[HITS] for e in list(self.data.values()))


# The reference bit for CLOCK lives in slot 6 (set on insert, cleared when the
# hand passes); a hit increments HITS, so "hit since last pass" is
# HITS > hits-at-last-pass, kept in slot 6.
def getattr_ref(e: list) -> bool:
    return e[HITS] > e[6]


def clear_ref(e: list) -> None:
    e[6] = e[HITS]
