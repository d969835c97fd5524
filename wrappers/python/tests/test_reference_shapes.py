"""Issue 28, as the reference 0.24.1 behaves (each checked against it side by side):

- backend=None keys: a call keys as the reference's normaliser makes its arguments, so
  f(UUID) and f(str(UUID)) share one entry, an Enum and its value share one, and an
  int MessagePack cannot pack (outside [-2^63, 2^64-1]) runs uncached, every time;
- cache_info() / cache_clear() counters per function identity (module.qualname), shared
  by every decoration of that name (the reference's process-wide registry); cache.local
  keeps its own, as the reference's local wrapper does;
- the wrappers' shapes: backend=None's is a plain function (inspect.isfunction), every
  sync function has an awaitable ainvalidate_cache, and cache.local's invalidate_cache is
  a plain function on coroutine functions too (a coroutine only elsewhere)."""
from __future__ import annotations

import asyncio
import decimal
import enum
import inspect
import logging
import pathlib
import pickle
import uuid

import pytest

from cachekit import InvalidationOutcome, cache
from cachekit import _decorator

U = uuid.UUID("550e8400-e29b-41d4-a716-446655440000")


class Colour(enum.Enum):
    RED = "red"


class Level(enum.IntEnum):
    HIGH = 3


def counted(**kw):
    calls = []

    def f(*args, **kwargs):
        calls.append((args, kwargs))
        return len(calls)

    # Counters are per function identity: each test's function gets a name of its own.
    f.__qualname__ = "counted_" + uuid.uuid4().hex
    return cache(**kw)(f), calls


@pytest.fixture(params=["c", "python"])
def impl(request, monkeypatch):
    """Both object-mode hit paths (the C one when built, and its Python specification)."""
    if request.param == "c":
        if _decorator._CObjectWrapper is None:
            pytest.skip("cachekit._fastpath is not built")
    else:
        monkeypatch.setattr(_decorator, "_CObjectWrapper", None)
    return request.param


# -- backend=None keys ------------------------------------------------------------

@pytest.mark.parametrize("first,second", [
    (U, str(U)),
    (str(U), U),
    (Colour.RED, "red"),
    (Level.HIGH, 3),
    (decimal.Decimal("1.50"), "1.50"),
    (pathlib.PurePosixPath("/a/b"), "/a/b"),
], ids=["uuid-then-str", "str-then-uuid", "enum-value", "intenum-int", "decimal-str", "path-str"])
def test_object_mode_shares_the_entry_the_reference_shares(impl, first, second):
    f, calls = counted(backend=None)
    assert f(first) == 1
    assert f(second) == 1  # one entry: the reference's key of both is the same
    assert f(7, first) == 2 and f(7, second) == 2  # among several arguments too
    assert f(x=first) == 3 and f(x=second) == 3  # and as a keyword
    assert len(calls) == 3
    assert f.invalidate_cache(second) is InvalidationOutcome.NO_L2
    assert f(first) == 4  # the invalidation of one is the invalidation of the other


def test_object_mode_still_tells_apart_what_the_reference_tells_apart(impl):
    f, calls = counted(backend=None)
    values = [1, True, 1.0, "1", b"1", None, (1,), U.bytes]  # ([1] is (1,), as there)
    assert [f(v) for v in values] == list(range(1, len(values) + 1))
    assert [f(v) for v in values] == list(range(1, len(values) + 1))  # every one a hit
    assert f(1, 2) != f((1, 2))  # two arguments, or one tuple


@pytest.mark.parametrize("big", [2 ** 64, 2 ** 70, -(2 ** 63) - 1], ids=["2^64", "2^70", "-2^63-1"])
def test_object_mode_runs_out_of_range_ints_uncached(impl, big, caplog):
    f, calls = counted(backend=None)
    with caplog.at_level(logging.WARNING, logger="cachekit"):
        assert f(big) == 1
        assert f(big) == 2  # uncached every time, as the reference (MessagePack refuses it)
        assert f(1, big) == 3 and f(1, big) == 4
    assert any("outside [-2^63, 2^64-1]" in r.getMessage() for r in caplog.records)
    assert f(2 ** 64 - 1) == 5 and f(2 ** 64 - 1) == 5  # the edges are keys
    assert f(-(2 ** 63)) == 6 and f(-(2 ** 63)) == 6
    info = f.cache_info()
    assert (info.hits, info.misses) == (2, 2)  # uncached calls are counted by neither, as there


def test_async_object_mode_keys_alike():
    calls = []

    @cache(backend=None)
    async def f(x):
        calls.append(x)
        return len(calls)

    async def main():
        assert await f(U) == 1 and await f(str(U)) == 1
        assert await f(Colour.RED) == 2 and await f("red") == 2
        assert await f(2 ** 70) == 3 and await f(2 ** 70) == 4

    asyncio.run(main())


# -- counters per function identity -----------------------------------------------

def _factory(**kw):
    @cache(**kw)
    def h(x):
        return x

    return h


@pytest.mark.parametrize("backend", [None, "memory://"], ids=["object", "l2"])
def test_counters_are_per_function_identity(impl, backend):
    h1, h2 = _factory(backend=backend, ttl=60), _factory(backend=backend, ttl=60)
    assert h1 is not h2
    h1.cache_clear()  # the identity's counters outlive this test's decorations (as the reference's)
    before = h1.cache_info().session_id
    h1(1), h2(1), h2(2), h2(2)
    i1, i2 = h1.cache_info(), h2.cache_info()
    assert i1[:4] == i2[:4] and i1.session_id == i2.session_id  # one tracker, as the reference's
    assert i1.misses == (3 if backend is None else 2)  # object mode: each decoration its own store
    assert i1.hits == (1 if backend is None else 2)
    h1.cache_clear()  # resets the shared tracker, as there
    i2 = h2.cache_info()
    assert (i2.hits, i2.misses, i2.l1_hits, i2.l2_hits) == (0, 0, 0, 0)
    assert i2.session_id != before and i2.session_id == h1.cache_info().session_id
    h2(2)
    assert h1.cache_info().hits + h1.cache_info().misses == 1


def test_another_function_name_has_its_own_counters():
    f, _ = counted(backend=None)

    @cache(backend=None)
    def g(x):
        return x

    f(1), f(1), g(1)
    assert (f.cache_info().hits, f.cache_info().misses) == (1, 1)
    assert (g.cache_info().hits, g.cache_info().misses) == (0, 1)


def test_cache_local_counts_per_decoration_as_the_reference_local_wrapper():
    def make():
        @cache.local(ttl=60)
        def h(x):
            return x

        return h

    h1, h2 = make(), make()
    h1(1), h1(1), h2(1)
    assert (h1.cache_info().hits, h1.cache_info().misses) == (1, 1)
    assert (h2.cache_info().hits, h2.cache_info().misses) == (0, 1)


# -- the wrappers' shapes ------------------------------------------------------------

def plain(x):
    return x


async def aplain(x):
    return x


def test_backend_none_wrapper_is_a_plain_function(impl):
    w = cache(backend=None)(plain)
    assert inspect.isfunction(w) and not inspect.iscoroutinefunction(w)
    assert w.__wrapped__ is plain and w.__name__ == "plain" and inspect.signature(w) == inspect.signature(plain)
    for deco in (cache(backend=None), cache.local(), cache(backend=None, key=lambda x: str(x))):
        assert inspect.isfunction(deco(plain))
        assert inspect.iscoroutinefunction(deco(aplain))

    class Repo:
        @cache(backend=None)
        def get(self, x):
            return (self.tag, x)

        tag = "r"

    assert Repo().get(1) == ("r", 1)  # binds as a method, as a function does
    assert inspect.ismethod(Repo().get)


def test_backend_none_wrapper_pickles_by_reference(impl):
    global _pickled
    _pickled = cache(backend=None)(plain)
    _pickled.__qualname__ = "_pickled"
    assert pickle.loads(pickle.dumps(_pickled)) is _pickled


_pickled = None


def test_cache_local_shapes_are_the_reference_local_wrappers():
    s = cache.local()(plain)
    a = cache.local()(aplain)
    assert not inspect.iscoroutinefunction(s.invalidate_cache)
    assert inspect.iscoroutinefunction(s.ainvalidate_cache)
    assert not inspect.iscoroutinefunction(a.invalidate_cache)  # a plain function there too
    assert inspect.iscoroutinefunction(a.ainvalidate_cache)

    async def main():
        assert await a(1) == 1
        assert a.invalidate_cache(1) is InvalidationOutcome.NO_L2
        assert await a.ainvalidate_cache(1) is InvalidationOutcome.NO_L2
        assert await s.ainvalidate_cache(1) is InvalidationOutcome.NO_L2

    asyncio.run(main())


@pytest.mark.parametrize("backend", [None, "memory://"], ids=["object", "l2"])
def test_cache_invalidate_cache_shapes(backend):
    s = cache(backend=backend)(plain)
    a = cache(backend=backend)(aplain)
    assert not inspect.iscoroutinefunction(s.invalidate_cache)
    assert inspect.iscoroutinefunction(s.ainvalidate_cache)
    assert inspect.iscoroutinefunction(a.invalidate_cache)  # as the reference's, with or without an L2
    assert inspect.iscoroutinefunction(a.ainvalidate_cache)


@pytest.mark.parametrize("arg,error", [(object(), TypeError), ({1, 2}, TypeError), (2 ** 70, OverflowError)],
                         ids=["object", "set", "2^70"])
def test_cache_local_lets_key_errors_through_as_the_reference_local_wrapper(impl, arg, error):
    calls = []

    @cache.local()
    def g(x):
        calls.append(x)
        return x

    with pytest.raises(error):
        g(arg)
    assert calls == []  # never called: the reference's local wrapper raises before it runs
    f, fcalls = counted(backend=None)  # the decorator's object mode runs such a call uncached
    assert f(arg) == 1 and f(arg) == 2


class _MyInt(int):
    pass


class _MyFloat(float):
    pass


@pytest.mark.parametrize("backend", [None, "memory://"], ids=["object", "l2"])
def test_subclasses_of_builtin_scalars_run_uncached_in_every_mode(impl, backend):
    """The reference packs its keys with strict types: an int, float or str subclass is
    refused and the call runs uncached (dict and list subclasses are rebuilt, and key)."""
    import collections
    f, calls = counted(backend=backend, ttl=60)
    assert f(_MyInt(1)) == 1 and f(_MyInt(1)) == 2
    assert f(_MyFloat(1.5)) == 3 and f(_MyFloat(1.5)) == 4
    assert f(collections.OrderedDict(a=1)) == 5 and f({"a": 1}) == 5
