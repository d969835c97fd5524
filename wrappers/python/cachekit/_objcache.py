"""L1-only object cache (backend=None, @cache.local): values are kept as the
very objects, with TTL, an entry bound and a byte budget (each entry charged
what _sizeof estimates it holds), and an optional stale-while-revalidate
refresh.

Eviction is O(1): the OrderedDict keeps insertion order and the entry at its
front leaves first (second-chance CLOCK, approximating LRU without touching
the order on a hit): an expired entry is dropped, one hit since the hand last
passed it goes to the back instead, at most SECOND_CHANCES times per eviction,
so no store walks more than a bounded number of entries.

Misses are single-flight: the first caller of a key leads a Flight (runs the
function), later callers wait for its outcome. A fill lands only while its
flight is still the key's current one: invalidate() and clear() detach the
flights in progress, so a value computed before an invalidation is handed to
the callers that were already waiting but never stored.

Entries are lists [value, expires_at, hits, stale_at, size, types,
hits_at_last_clock_pass]; the hot path in the decorator reads them directly.
"""
from __future__ import annotations

import sys
import threading
from collections import OrderedDict
from typing import Any, Optional

# Entry slots
VALUE, EXPIRES, HITS, STALE, SIZE, TYPES, REF = range(7)

# join() outcomes
HIT, LEAD, WAIT, SELF = range(4)

# Entries a single eviction may send to the back before it takes the front one
# regardless (bounds the work of one store).
SECOND_CHANCES = 8


class Flight:
    """One in-flight load of a key. The leader settles it exactly once with a
    value, an exception, or `abandoned` (it was interrupted by a
    BaseException: waiters retry). Thread waiters block on `event`; async
    waiters register a future of their own loop in `listeners`."""

    __slots__ = ("owner", "event", "done", "value", "error", "tb", "abandoned", "waiters", "listeners", "task",
                 "starter")

    def __init__(self, owner: Any) -> None:
        self.owner = owner  # the leading thread's ident, or its asyncio task
        self.event = threading.Event()
        self.done = False
        self.value: Any = None
        self.error: Optional[BaseException] = None
        self.tb: Any = None
        self.abandoned = False
        self.waiters = 0  # callers that joined it (async ones leave again: leave())
        self.listeners: list = []
        self.task: Any = None  # an async load's own task (its starter and waiters await it)
        self.starter = True  # an async load's starter still awaits it


def _wake(fut: Any) -> None:
    if not fut.done():
        fut.set_result(None)


class ObjectCache:
    def __init__(self, max_entries: Optional[int], max_bytes: int) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.data: "OrderedDict[Any, list]" = OrderedDict()
        self.bytes = 0
        self.lock = threading.RLock()
        self.evicted_hits = 0  # hits of entries no longer held (for cache_info)
        self.evictions = 0
        self.flights: dict = {}  # key -> Flight in progress (touched on misses only)

    def __len__(self) -> int:
        return len(self.data)

    def after_fork(self) -> None:
        """In a forked child: a lock or flight of a parent's thread is never waited for."""
        self.lock = threading.RLock()
        self.flights = {}

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
        limit = self.max_bytes - size
        max_entries = self.max_entries if self.max_entries is not None else sys.maxsize
        chances = SECOND_CHANCES
        while data and (self.bytes > limit or len(data) >= max_entries):
            k = next(iter(data))  # the front, O(1) in an OrderedDict (its linked list)
            e = data[k]
            if e[EXPIRES] <= now:
                self._drop(k)
                continue
            if chances and e[HITS] > e[REF]:  # hit since the hand last passed: a second chance
                chances -= 1
                e[REF] = e[HITS]
                data.move_to_end(k)
                continue
            self._drop(k)
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

    def discard(self, key: Any, entry: list) -> None:
        """Drop `entry` (an expired one) unless it was replaced meanwhile."""
        with self.lock:
            if self.data.get(key) is entry:
                self._drop(key)

    def invalidate(self, key: Any) -> None:
        """Forget the entry and detach the key's flight: its value will not land."""
        with self.lock:
            self.flights.pop(key, None)
            self.pop(key)

    def clear(self) -> None:
        with self.lock:
            self.data.clear()
            self.bytes = 0
            self.flights.clear()

    # Single-flight ----------------------------------------------------------

    def join(self, key: Any, owner: Any, now: float) -> tuple:
        """A missing caller's next step: (HIT, value) when a fresh entry landed
        meanwhile, (LEAD, flight) to compute, (WAIT, flight) to wait for the
        leader, (SELF, flight) when `owner` already leads this key."""
        with self.lock:
            e = self.data.get(key)
            if e is not None and now < e[EXPIRES]:
                e[HITS] += 1
                return HIT, e[VALUE]
            f = self.flights.get(key)
            if f is None:
                f = self.flights[key] = Flight(owner)
                return LEAD, f
            if f.owner == owner:
                return SELF, f
            f.waiters += 1
            return WAIT, f

    def land(self, key: Any, flight: Flight, entry: list, now: float) -> bool:
        """Store a loaded entry if `flight` is still the key's current flight
        (no invalidation or clear since it began, not settled yet)."""
        with self.lock:
            if self.flights.get(key) is not flight:
                return False
            return self.put(key, entry, now)

    def replace(self, key: Any, old: list, entry: list, now: float) -> bool:
        """Store a refreshed entry only over the very entry it refreshes."""
        with self.lock:
            if self.data.get(key) is not old:
                return False
            return self.put(key, entry, now)

    def settle(self, key: Any, flight: Flight, value: Any = None, error: Optional[BaseException] = None,
               tb: Any = None, abandoned: bool = False) -> None:
        """End a flight and release its waiters (threads and event loops), once."""
        with self.lock:
            if flight.done:
                return
            if self.flights.get(key) is flight:
                del self.flights[key]
            flight.value, flight.error, flight.tb, flight.abandoned = value, error, tb, abandoned
            flight.done = True
            listeners, flight.listeners = flight.listeners, []
        flight.event.set()
        for loop, fut in listeners:
            try:
                loop.call_soon_threadsafe(_wake, fut)
            except RuntimeError:  # that loop is closed: nobody is waiting there any more
                pass

    def leave(self, flight: Flight) -> bool:
        """An async waiter stops awaiting `flight`: whether nobody awaits it any more."""
        with self.lock:
            flight.waiters -= 1
            return flight.waiters == 0 and not flight.starter and not flight.done

    def starter_left(self, flight: Flight) -> bool:
        """The async starter stops awaiting `flight`: whether nobody awaits it any more."""
        with self.lock:
            flight.starter = False
            return flight.waiters == 0 and not flight.done

    def listen(self, flight: Flight, loop: Any) -> Any:
        """A future of `loop` resolved when `flight` settles (None if it has)."""
        with self.lock:
            if flight.done:
                return None
            fut = loop.create_future()
            flight.listeners.append((loop, fut))
            return fut

    def total_hits(self) -> int:
        with self.lock:
            return self.evicted_hits + sum(e[HITS] for e in list(self.data.values()))
