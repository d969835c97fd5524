"""The object-mode hit path (@cache(backend=None), sync, no key=): the C one
(cachekit._fastpath) and the pure-Python one (_decorator._object_hot_path),
each behaviour test run against both so they cannot drift.

Under tests/python/run_pytest.py (meson test 'python') CACHEKIT_PY_FASTPATH_REQUIRED=1:
the extension must be there, its tests fail instead of skipping.
"""
from __future__ import annotations

import collections
import copy
import functools
import gc
import inspect
import os
import pickle
import subprocess
import sys
import threading
import time
import weakref

import pytest

from cachekit import _decorator, cache

try:
    from cachekit import _fastpath
except ImportError:
    _fastpath = None

REQUIRED = os.environ.get("CACHEKIT_PY_FASTPATH_REQUIRED") == "1"
MISSING = "cachekit._fastpath is not built (wrappers/python/build_ext.py builds it)"


def _need_fastpath() -> None:
    if _fastpath is None:
        if REQUIRED:
            pytest.fail(MISSING + ", and CACHEKIT_PY_FASTPATH_REQUIRED=1")
        pytest.skip(MISSING)


@pytest.fixture(params=["c", "python"])
def impl(request, monkeypatch):
    """Which hot path decorations made in the test get."""
    if request.param == "c":
        _need_fastpath()
        monkeypatch.setattr(_decorator, "_CObjectWrapper", _fastpath.ObjectWrapper)
    else:
        monkeypatch.setattr(_decorator, "_CObjectWrapper", None)
    return request.param


@pytest.fixture
def slow_calls(monkeypatch):
    """The (args, kwargs) of every call that left the hot path."""
    seen: list = []
    orig = _decorator._Cached.obj_slow

    def spy(self, args, kwargs):
        seen.append((args, dict(kwargs)))
        return orig(self, args, kwargs)

    monkeypatch.setattr(_decorator._Cached, "obj_slow", spy)
    return seen


def deco(impl: str, **kw):
    """cache(backend=None, **kw), checking the wrapper is `impl`'s."""
    def apply(fn):
        w = cache(backend=None, **kw)(fn)
        assert inspect.isfunction(w)  # a plain function either way, as the reference's wrapper
        if impl == "c":
            assert type(w._cachekit_hot) is _fastpath.ObjectWrapper
        else:
            assert w._cachekit_hot is w
        return w

    return apply


def counted():
    calls: list = []

    def f(x=None, y=None):
        calls.append((x, y))
        return [type(x).__name__, x, y, len(calls)]

    f.calls = calls
    return f


def entry(w, key):
    return w._cachekit.objects.data[key]


# --- the extension itself ------------------------------------------------------

def test_extension_present_when_required():
    if REQUIRED:
        assert _fastpath is not None, MISSING


def test_extension_is_used_by_default():
    _need_fastpath()
    switched_off = os.environ.get("CACHEKIT_PY_FASTPATH", "1").strip().lower() in ("0", "false", "no", "off")
    assert (_decorator._CObjectWrapper is None) == switched_off
    if not switched_off:
        assert type(cache(backend=None)(lambda x: x)._cachekit_hot) is _fastpath.ObjectWrapper
        assert type(cache.local()(lambda x: x)._cachekit_hot) is _fastpath.ObjectWrapper


@pytest.mark.parametrize("value,expected", [("0", "function"), ("off", "function"), ("1", "ObjectWrapper")])
def test_env_switch(value, expected):
    if expected == "ObjectWrapper":
        _need_fastpath()
    code = ("import cachekit, cachekit._decorator as d\n"
            "print(type(cachekit.cache(backend=None)(lambda x: x)._cachekit_hot).__name__)")
    import cachekit
    # The package may span two folders (sources, built extensions): both on the path.
    path = [os.path.dirname(p) for p in cachekit.__path__] + [os.environ.get("PYTHONPATH", "")]
    env = dict(os.environ, CACHEKIT_PY_FASTPATH=value, PYTHONPATH=os.pathsep.join(filter(None, path)))
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == expected


def test_other_wrappers_unchanged(impl):
    async def af(x):
        return x

    assert inspect.iscoroutinefunction(cache(backend=None)(af))
    assert inspect.isfunction(cache(backend=None, key=lambda x: str(x))(lambda x: x))
    assert inspect.isfunction(cache(backend="memory://")(lambda x: x))


def test_memo_lookup_is_the_dicts():
    # The C path reads the dict's storage: OrderedDict must not override lookups.
    od = collections.OrderedDict
    assert od.get is dict.get and od.__getitem__ is dict.__getitem__ and od.__contains__ is dict.__contains__
    assert type(cache(backend=None)(lambda x: x)._cachekit.objects.data) is od


def test_clock_is_time_monotonic():
    _need_fastpath()
    for _ in range(10_000):
        t0 = time.monotonic()
        c = _fastpath.monotonic()
        t1 = time.monotonic()
        assert t0 <= c <= t1


def test_coarse_clock_bounds():
    _need_fastpath()
    if not hasattr(_fastpath, "coarse_monotonic"):
        assert _fastpath.COARSE_MARGIN == 0.0
        pytest.skip("no coarse pre-check on this platform")
    margin = _fastpath.COARSE_MARGIN
    assert 0 < margin <= 1.0
    for _ in range(10_000):
        t0 = time.monotonic()
        c = _fastpath.coarse_monotonic()
        t1 = time.monotonic()
        # Never ahead of monotonic() (1e-9: its own float rounding), never a margin behind.
        assert c <= t1 + 1e-9 and t0 < c + margin


def test_constructor_checks():
    _need_fastpath()
    W = _fastpath.ObjectWrapper
    with pytest.raises(TypeError):
        W([], lambda a, k: None, ())
    with pytest.raises(TypeError):
        W({}, 1, ())
    with pytest.raises(TypeError):
        W({}, lambda a, k: None, (int, 1))
    w = W(collections.OrderedDict(), lambda a, k: (a, k), frozenset({int}))
    assert w(1, y=2) == ((1,), {"y": 2})
    assert w(1) == ((1,), {})


# --- hits and misses -------------------------------------------------------------

@pytest.mark.parametrize("arg", [7, "k", b"k", None, 2 ** 64 - 1, -1])
def test_hit_and_miss(impl, slow_calls, arg):
    f = counted()
    w = deco(impl)(f)
    first = w(arg)
    assert first == [type(arg).__name__, arg, None, 1]
    assert len(slow_calls) == 1
    assert w(arg) is first and w(arg) is first  # the very object
    assert len(slow_calls) == 1 and len(f.calls) == 1
    info = w.cache_info()
    assert (info.hits, info.misses, info.currsize) == (2, 1, 1)


def test_ttl_expiry(impl, slow_calls):
    f = counted()
    w = deco(impl, ttl=0.2, swr_enabled=False)(f)
    assert w(1)[3] == 1
    assert w(1)[3] == 1 and len(slow_calls) == 1
    time.sleep(0.25)
    assert w(1)[3] == 2
    assert len(slow_calls) == 2


@pytest.mark.parametrize("offset", [5.0, 0.05, 0.0, -1e-3, -5.0])
def test_deadline_from_time_monotonic(impl, slow_calls, offset):
    # A stale-at time computed with time.monotonic(): in the future a hit on
    # the hot path, at or before "now" a miss (one within the C coarse margin
    # and one beyond it on each side).
    f = counted()
    w = deco(impl, swr_enabled=False)(f)
    w(1)
    e = entry(w, 1)
    e[1] = e[3] = time.monotonic() + offset
    n = len(slow_calls)
    r = w(1)
    if offset > 0:
        assert len(slow_calls) == n and len(f.calls) == 1 and r[3] == 1
    else:
        assert len(slow_calls) == n + 1 and len(f.calls) == 2 and r[3] == 2


def test_stale_entry_triggers_swr_refresh(impl, slow_calls):
    f = counted()
    w = deco(impl, ttl=100)(f)
    first = w(1)
    e = entry(w, 1)
    e[3] = time.monotonic() - 1  # stale, not expired
    assert w(1) is first  # served at once by the slow path, which starts the refresh
    assert len(slow_calls) == 2
    assert e[3] == e[1]  # one refresh per staleness period: the old entry is a hot hit again
    deadline = time.monotonic() + 5
    while len(f.calls) < 2 and time.monotonic() < deadline:
        time.sleep(0.005)
    while entry(w, 1) is e and time.monotonic() < deadline:
        time.sleep(0.005)
    assert len(f.calls) == 2
    n = len(slow_calls)
    assert w(1)[3] == 2 and len(slow_calls) == n  # the refreshed entry, on the hot path


def test_swr_with_real_time(impl):
    calls = []

    def get(x):
        calls.append(x)
        return len(calls)

    w = deco(impl, ttl=0.4, swr_threshold_ratio=0.5)(get)
    assert w(1) == 1
    time.sleep(0.3)  # past 0.4 * 0.5 * 1.1
    assert w(1) == 1
    deadline = time.time() + 2
    while len(calls) < 2 and time.time() < deadline:
        time.sleep(0.01)
    time.sleep(0.05)
    assert w(1) == 2


class MyInt(int):
    pass


class MyStr(str):
    pass


def test_lookalike_types_take_the_slow_path_and_stay_distinct(impl, slow_calls):
    f = counted()
    w = deco(impl)(f)
    args = [1, True, 1.0, 0, False, "a"]
    first = [w(a) for a in args]
    assert [r[0] for r in first] == ["int", "bool", "float", "int", "bool", "str"]
    assert len(f.calls) == len(args)  # True is not 1, 1.0 is not 1, ...
    slow_calls.clear()
    again = [w(a) for a in args]
    assert all(x is y for x, y in zip(again, first))
    assert len(f.calls) == len(args)
    assert [a for (a,), _ in slow_calls] == [True, 1.0, False]
    assert [type(a) for (a,), _ in slow_calls] == [bool, float, bool]
    assert w.cache_info().hits == len(args)


def test_subclasses_of_int_and_str_run_uncached_as_the_reference(impl, slow_calls):
    """The reference's key packs with strict types: an int or str subclass is refused,
    so the call runs uncached (never under its base value's entry)."""
    f = counted()
    w = deco(impl)(f)
    assert w(1)[3] == 1 and w("a")[3] == 2
    assert w(MyInt(1))[3] == 3 and w(MyInt(1))[3] == 4
    assert w(MyStr("a"))[3] == 5 and w(MyStr("a"))[3] == 6
    assert w(1)[3] == 1 and w("a")[3] == 2


def test_kwargs_and_other_arities_take_the_slow_path(impl, slow_calls):
    f = counted()
    w = deco(impl)(f)
    assert w(x=1) == ["int", 1, None, 1]
    assert w(x=1)[3] == 1
    assert w() == ["NoneType", None, None, 2]
    assert w()[3] == 2
    assert w(1, 2) == ["int", 1, 2, 3]
    assert w(1, 2)[3] == 3
    assert w(1, y=2) == ["int", 1, 2, 4]
    assert w(*[1], **{"y": 2})[3] == 4
    assert slow_calls == [((), {"x": 1})] * 2 + [((), {})] * 2 + [((1, 2), {})] * 2 + [((1,), {"y": 2})] * 2
    assert w(1) == ["int", 1, None, 5] and len(slow_calls) == 9
    assert w(1)[3] == 5 and len(slow_calls) == 9
    info = w.cache_info()
    assert (info.hits, info.misses) == (5, 5)


def test_bypass_and_invalidate(impl):
    f = counted()
    w = deco(impl)(f)
    w(1)
    assert w(1, _bypass_cache=True)[3] == 2
    assert w(1)[3] == 1
    w.invalidate_cache(1)
    assert w(1)[3] == 3
    w.cache_clear()
    assert w(1)[3] == 4
    assert w.cache_info().misses == 1


def test_exceptions_propagate_uncached(impl):
    calls = []

    def boom(x):
        calls.append(x)
        raise ValueError(f"no {x}")

    w = deco(impl)(boom)
    for _ in range(2):
        with pytest.raises(ValueError, match="no 3"):
            w(3)
    assert calls == [3, 3]
    with pytest.raises(TypeError):
        w(1, 2, 3)  # the function's own TypeError, through the slow path


def test_unusual_entry_values(impl):
    # Entries the C path does not read itself (an int stale-at time) go to
    # the slow path, which serves them like the Python hot path does.
    f = counted()
    w = deco(impl, swr_enabled=False)(f)
    first = w(1)
    e = entry(w, 1)
    e[1] = e[3] = int(time.monotonic()) + 100
    assert w(1) is first and len(f.calls) == 1
    assert w.cache_info().hits == 1


# --- a function to everything else ------------------------------------------------

def test_functools_attributes(impl):
    def fn(a: int, b: str = "x") -> list:
        """Docs."""
        return [a, b]

    fn.custom = "kept"
    w = deco(impl)(fn)
    assert w.__name__ == "fn" and w.__doc__ == "Docs." and w.__module__ == __name__
    assert w.__qualname__ == fn.__qualname__ and w.__wrapped__ is fn
    assert w.__annotations__ == fn.__annotations__ and w.custom == "kept"
    assert inspect.signature(w) == inspect.signature(fn)
    assert callable(w.cache_info) and callable(w.cache_clear) and callable(w.invalidate_cache)
    assert w._cachekit.fn is fn
    w.extra = 5
    assert w.__dict__["extra"] == 5
    assert repr(w).startswith("<function " + fn.__qualname__ + " at 0x")
    assert weakref.ref(w)() is w

    @functools.wraps(w)
    def outer(*a, **k):
        return w(*a, **k)

    assert outer.__wrapped__ is w and outer.__name__ == "fn"
    assert inspect.signature(outer) == inspect.signature(fn)
    assert inspect.unwrap(outer) is fn
    assert outer(1) == [1, "x"]


class Holder:
    pass


@pytest.mark.parametrize("where", ["module", "class"])
def test_pickle_and_copy_by_reference(impl, where):
    def fn(x):
        return x

    name = f"_pickled_{impl}_{where}"
    fn.__name__ = name
    fn.__qualname__ = name if where == "module" else f"Holder.{name}"
    fn.__module__ = __name__
    w = deco(impl)(fn)
    if where == "module":
        globals()[name] = w
    else:
        setattr(Holder, name, w)
    try:
        for proto in range(pickle.HIGHEST_PROTOCOL + 1):
            assert pickle.loads(pickle.dumps(w, proto)) is w
        assert copy.copy(w) is w and copy.deepcopy(w) is w
    finally:
        if where == "module":
            del globals()[name]
        else:
            delattr(Holder, name)


def test_pickle_unreachable_fails_cleanly(impl):
    def local(x):
        return x

    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        pickle.dumps(deco(impl)(local))


def test_methods(impl):
    calls = []

    class A:
        k = 10

        @cache(backend=None)
        def inst(self, x):
            calls.append(("inst", x))
            return self.k + x

        @staticmethod
        @cache(backend=None)
        def st(x):
            calls.append(("st", x))
            return x * 3

        @classmethod
        @cache(backend=None)
        def cm(cls, x):
            calls.append(("cm", x))
            return (cls.__name__, x)

    a = A()
    assert type(A.__dict__["inst"]) is type(A.__dict__["st"].__func__)
    assert A.inst is A.__dict__["inst"]  # unbound: the wrapper itself, like a function
    assert a.inst.__self__ is a and a.inst.__func__ is A.__dict__["inst"]
    assert [a.inst(1), a.inst(1), A.inst(a, 1)] == [11, 11, 11]  # instances are not keys: uncached
    assert [a.st(2), A.st(2), a.st(2)] == [6, 6, 6]
    assert [a.cm(3), A.cm(3)] == [("A", 3), ("A", 3)]
    assert calls.count(("inst", 1)) == 3 and calls.count(("st", 2)) == 1
    assert A.st.cache_info().hits == 2
    assert inspect.signature(a.inst) == inspect.signature(A.inst.__wrapped__.__get__(a))


def test_function_decorating_staticmethod(impl):
    # cache over a staticmethod object (callable since 3.10): class access
    # binds like a function, as the Python wrapper always did.
    class B:
        @cache(backend=None)
        @staticmethod
        def s(x):
            return x * 5

    assert B.s(4) == 20 and B.s(4) == 20
    assert B.s.cache_info().hits == 1
    with pytest.raises(TypeError):
        B().s(4)


def test_cache_info_exact_after_n_hits(impl):
    f = counted()
    w = deco(impl)(f)
    for k in range(10):
        w(k)
    for i in range(5000):
        w(i % 10)
    info = w.cache_info()
    assert (info.hits, info.misses, info.currsize) == (5000, 10, 10)
    w.cache_clear()
    assert w.cache_info().hits == 0
    w(3)
    w(3)
    assert (w.cache_info().hits, w.cache_info().misses) == (1, 1)


def test_threads_hammering_one_key(impl):
    f = counted()
    w = deco(impl)(f)
    w(9)
    n_threads, n_calls = 8, 20_000
    barrier = threading.Barrier(n_threads)
    bad = []

    def run():
        barrier.wait()
        for _ in range(n_calls):
            if w(9)[3] != 1:
                bad.append(1)

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        threads = [threading.Thread(target=run) for _ in range(n_threads)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
    finally:
        sys.setswitchinterval(old)
    assert not bad and len(f.calls) == 1
    assert w.cache_info().hits == n_threads * n_calls
    assert entry(w, 9)[2] == n_threads * n_calls


def test_reference_counts_stable(impl):
    value = object()
    key = 123456789  # not a cached small int

    def fn(x, y=None):
        return value

    w = deco(impl, max_entries=64)(fn)
    arg = 2.5  # float: always the slow path
    kwarg = "kw" * 10  # supported (an unsupported one is kept alive by the logged warning)
    w(key), w(arg), w(key, y=kwarg)  # the three entries (each holds `value`)
    e = entry(w, key)
    before = (sys.getrefcount(value), sys.getrefcount(e), sys.getrefcount(key), sys.getrefcount(arg),
              sys.getrefcount(kwarg), sys.getrefcount(w))
    for _ in range(100_000):
        w(key)
    for _ in range(2_000):
        w(arg)
        w(key, y=kwarg)
    after = (sys.getrefcount(value), sys.getrefcount(e), sys.getrefcount(key), sys.getrefcount(arg),
             sys.getrefcount(kwarg), sys.getrefcount(w))
    assert after == before


def test_memory_flat_over_a_million_calls(impl):
    # Live allocator blocks (cheaper than tracemalloc over 1e6 calls): one
    # leaked object per hit or miss would show as tens of thousands.
    w = deco(impl, max_entries=100)(lambda x, y=None: [x])
    for k in range(200):  # warm: misses with eviction, kwargs
        w(k)
        w(k, y=1)
    gc.collect()
    start = sys.getallocatedblocks()
    for i in range(1_000_000):
        w(5 if i & 63 else 1000 + (i & 1023))  # hits, and misses evicting others
    for i in range(20_000):
        w(i, y=i)
        w(float(i))
    gc.collect()
    assert sys.getallocatedblocks() - start < 2000


def test_garbage_collected_through_a_cycle(impl):
    def fn(x):
        return x

    w = deco(impl)(fn)
    w(1)
    w.me = w  # a cycle through the instance __dict__
    ref = weakref.ref(w)
    del w
    gc.collect()
    assert ref() is None
