"""Object mode (backend=None): the bytes charged per entry track what the entries
really hold (tracemalloc), the byte budget is honoured, and eviction does a
bounded amount of work per store."""
from __future__ import annotations

import gc
import time
import tracemalloc
from collections import OrderedDict

import pytest

from cachekit import cache
from cachekit._objcache import EXPIRES, HITS, SECOND_CHANCES, ObjectCache
from cachekit._sizeof import ENTRY_OVERHEAD, estimate

N = 5_000


class User:
    def __init__(self, i: int) -> None:
        self.id = i * 7919 + 100_000
        self.name = f"user-{i}"


# Values the function returns for argument x (each freshly built, as a real function's would be).
SHAPES = {
    "int": lambda x: x * 3,
    "none": lambda x: None,
    "str": lambda x: "x" * (x % 300),
    "dict": lambda x: {"id": x, "name": f"user{x}", "tags": [f"a{x}", "b"], "score": x / 3},
    "list": lambda x: list(range(x % 60)),
    "nested": lambda x: {"rows": [(x, f"r{j}", float(j)) for j in range(x % 8)], "meta": {"n": str(x)}},
    "bytes": lambda x: bytes(x % 500),
    "object": lambda x: User(x),
}


def _traced_fill(shape: str, key_kind: str) -> tuple[int, int]:
    """(tracemalloc's bytes held after N distinct stores, the bytes the cache charged)."""
    f = cache(backend=None, ttl=3600, l1_max_size_mb=4096, swr_enabled=False)(SHAPES[shape])
    warm = (-1,) if key_kind == "int" else ("warm", -1)
    f(*warm)  # the first store's one-off allocations (the C wrapper's caches) stay out
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        if key_kind == "int":
            for i in range(N):
                f(i * 7919 + 1_000_000)  # ints beyond the small-int cache: each key is the cache's own
        else:
            for i in range(N):
                f(f"key-{i}", i)  # two arguments: the args tuple is the key
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    objects = f._cachekit.objects
    assert len(objects) == N + 1
    return held, objects.bytes - objects.data[warm[0] if key_kind == "int" else warm][4]


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_charged_bytes_track_tracemalloc(shape):
    held, charged = _traced_fill(shape, "int")
    ratio = charged / held
    assert 0.8 <= ratio <= 1.25, f"{shape}: charged {charged / N:.0f} B/entry, tracemalloc {held / N:.0f} B/entry"


def test_charged_bytes_track_tracemalloc_tuple_keys():
    SHAPES["pair"] = lambda k, i: (k, i * 1000 + 7)
    try:
        held, charged = _traced_fill("pair", "tuple")
    finally:
        del SHAPES["pair"]
    assert 0.8 <= charged / held <= 1.25, (charged / N, held / N)


def test_estimate_rules():
    assert estimate(None) == estimate(True) == estimate(5) == estimate("a") == 0
    shared = "s" * 100
    mine = [shared, shared]  # referenced from here too: shared, not charged to the list
    import sys
    assert estimate(mine) == sys.getsizeof(mine)
    big = [str(i) * 3 for i in range(100_000)]
    # sampled beyond 1000 elements: within a few percent of the exact sum
    exact = sys.getsizeof(big) + sum(sys.getsizeof(s) for s in big)
    assert abs(estimate(big) - exact) / exact < 0.05
    assert ENTRY_OVERHEAD > 150  # the entry list, its floats, the OrderedDict's share


def test_estimate_is_bounded_and_never_raises():
    from cachekit import _sizeof

    visits = []
    real = _sizeof._deep

    def counting(obj, depth, budget):
        visits.append(1)
        return real(obj, depth, budget)

    wide = [[[str(i * j) + "x" for j in range(100)] for _ in range(100)] for i in range(100)]  # 1M leaves
    _sizeof._deep = counting
    try:
        assert estimate(wide) > 0
    finally:
        _sizeof._deep = real
    assert len(visits) <= _sizeof.MAX_NODES + _sizeof.SAMPLE * _sizeof.MAX_DEPTH  # then shallow sizes only

    class BadSize:
        def __sizeof__(self):
            raise ValueError("no size")

    assert estimate([BadSize()]) > 0
    assert estimate(BadSize()) == 64


def test_byte_budget_bounds_what_is_held():
    """l1_max_size_mb=1 with ~1 KiB values: about a thousand entries stay, and
    tracemalloc sees about 1 MiB held (the budget the charges count against)."""
    f = cache(backend=None, ttl=3600, l1_max_size_mb=1, swr_enabled=False)(lambda x: "v" * 1000 + str(x))
    f(0)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for i in range(20_000):
            f(i + 1_000_000)
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    objects = f._cachekit.objects
    assert objects.bytes <= 1 << 20
    assert 600 <= len(objects) <= 1000
    assert held <= 1.3 * (1 << 20)


class _CountingDict(OrderedDict):
    moves = 0

    def move_to_end(self, key, last=True):
        type(self).moves += 1
        super().move_to_end(key, last)


def _entry(ttl: float = 3600.0) -> list:
    now = time.monotonic()
    return [object(), now + ttl, 0, now + ttl, 100, None, 0]


def test_eviction_work_per_store_is_bounded():
    """Every entry hit since the hand passed: one store still sends at most
    SECOND_CHANCES entries to the back, then evicts the front."""
    oc = ObjectCache(max_entries=10_000, max_bytes=1 << 40)
    oc.data = _CountingDict()
    now = time.monotonic()
    for i in range(10_000):
        oc.put(i, _entry(), now)
    for e in oc.data.values():
        e[HITS] += 1
    _CountingDict.moves = 0
    oc.put("new", _entry(), now)
    assert _CountingDict.moves == SECOND_CHANCES
    assert len(oc) == 10_000 and oc.evictions == 1 and SECOND_CHANCES not in oc.data


def test_eviction_order_second_chance_and_expired_first():
    oc = ObjectCache(max_entries=4, max_bytes=1 << 40)
    now = time.monotonic()
    for k in "abcd":
        oc.put(k, _entry(), now)
    oc.data["a"][HITS] += 1  # a hit: a is passed over once
    oc.put("e", _entry(), now)
    assert list(oc.data) == ["c", "d", "a", "e"]  # b, the oldest not hit, left
    oc.data["d"][EXPIRES] = now - 1  # expired: dropped when the hand reaches it, not counted as an eviction
    evictions = oc.evictions
    oc.put("f", _entry(), now)
    oc.put("g", _entry(), now)
    assert list(oc.data) == ["a", "e", "f", "g"] and oc.evictions == evictions + 1


def test_byte_budget_evicts_by_charged_size():
    oc = ObjectCache(max_entries=None, max_bytes=1000)
    now = time.monotonic()
    for k in range(5):
        e = _entry()
        e[4] = 300
        oc.put(k, e, now)
    assert list(oc.data) == [2, 3, 4] and oc.bytes == 900
