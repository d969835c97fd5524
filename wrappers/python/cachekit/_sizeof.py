"""What an object-mode entry costs in memory, estimated at store time.

The estimate (checked against tracemalloc in tests/test_objcache_memory.py):

- a fixed cost per entry: the entry list, its two float deadlines and its size
  int (sys.getsizeof of each), plus ODICT_SLOT for the key's share of the
  OrderedDict (its hash table, index and list node, averaged over resizes);
- the key and the value, each sys.getsizeof, deep for containers (list, tuple,
  set, frozenset, dict, and an instance's __dict__) up to MAX_DEPTH levels;
- objects the process shares anyway cost nothing: None, booleans, small ints,
  the empty and one-character strings, and any object inside the value that
  something else references too (its reference count says so: interned dict
  keys, module constants, objects shared between entries);
- a container longer than SAMPLE is charged by the average of SAMPLE of its
  elements (spread over a list or tuple, the first ones of a set or dict) times
  its length, and one estimate visits at most MAX_NODES objects (those beyond
  are charged their shallow size), so a store never walks more than a bounded
  part of a huge value.
"""
from __future__ import annotations

import sys
from itertools import islice
from typing import Any

MAX_DEPTH = 20
SAMPLE = 1000
MAX_NODES = 20_000  # objects one estimate visits at most (the rest: their shallow size)
# The OrderedDict's cost per key (hash table entry and index at its average
# fill, plus the node of its order), measured on CPython 3.11.
ODICT_SLOT = 100

_getsizeof = sys.getsizeof
_refcount = sys.getrefcount
_FREE_TYPES = (type(None), bool)
_SEQUENCES = (list, tuple, set, frozenset)


def entry_overhead() -> int:
    """The fixed cost of one entry (see the module's description)."""
    entry = [None, 1.5, 0, 2.5, 1 << 20, None, 0]
    return _getsizeof(entry) + 2 * _getsizeof(1.5) + _getsizeof(1 << 20) + ODICT_SLOT


ENTRY_OVERHEAD = entry_overhead()


def _shared(obj: Any) -> bool:
    """The process holds this object anyway (singletons and CPython's caches)."""
    t = type(obj)
    if t in _FREE_TYPES:
        return True
    if t is int:
        return -5 <= obj <= 256
    if t is str:
        return len(obj) < 2 and (not obj or ord(obj) < 256)
    return False


def estimate(obj: Any) -> int:
    """Bytes held by `obj` and what only it references (see the module's description).
    Never raises: a value that cannot be walked (a container another thread
    resizes meanwhile, a failing __sizeof__) is charged its shallow size."""
    if _shared(obj):
        return 0
    try:
        return _deep(obj, 0, [MAX_NODES])
    except Exception:
        try:
            return _getsizeof(obj, 64)
        except Exception:  # its own __sizeof__ fails
            return 64


def _child(obj: Any, depth: int, budget: list) -> int:
    # Called with the element bound to the caller's loop variable: a reference
    # count above an owned element's means someone else holds it too.
    if _refcount(obj) > _OWNED or _shared(obj):
        return 0
    return _deep(obj, depth, budget)


def _rc_probe(obj: Any, depth: int, budget: list) -> int:
    return _refcount(obj)


def _owned_refcount() -> int:
    """The reference count _child sees for an element only its container holds
    (measured through the same call shape: it varies between CPython versions)."""
    box = [object()]
    for v in box:
        return _rc_probe(v, 0, [])
    return 0


_OWNED = _owned_refcount()


def _deep(obj: Any, depth: int, budget: list) -> int:
    size = _getsizeof(obj, 64)
    budget[0] -= 1
    if depth >= MAX_DEPTH or budget[0] <= 0:
        return size
    depth += 1
    t = type(obj)
    if t is dict or isinstance(obj, dict):
        n = len(obj)
        part = 0
        for k in islice(obj, SAMPLE):
            v = obj[k]
            part += _child(k, depth, budget) + _child(v, depth, budget)
        return size + (part if n <= SAMPLE else part * n // SAMPLE)
    if isinstance(obj, (list, tuple)) and len(obj) > SAMPLE:
        n = len(obj)
        step = n // SAMPLE
        part = 0
        for i in range(0, step * SAMPLE, step):  # spread over the whole sequence
            v = obj[i]
            part += _child(v, depth, budget)
        return size + part * n // SAMPLE
    if isinstance(obj, _SEQUENCES):
        n = len(obj)
        part = 0
        for v in islice(obj, SAMPLE):
            part += _child(v, depth, budget)
        return size + (part if n <= SAMPLE else part * n // SAMPLE)
    if t.__module__ != "builtins":
        try:
            d = object.__getattribute__(obj, "__dict__")
        except Exception:  # no __dict__ (slots, extension types), or a descriptor that refuses
            return size
        if type(d) is dict:
            size += _deep(d, depth, budget)
    return size
