"""Values keep their types across an L2 hit (the reference's default and auto
serializers, byte for byte), what a serializer cannot bring back exactly runs
uncached with a warning, and a stored value that fails to decode is a miss that
recomputes and replaces it, in every mode."""
from __future__ import annotations

import asyncio
import collections
import datetime as dt
import enum
import logging
import time
import uuid
from decimal import Decimal

import msgpack
import pytest

from cachekit import Backend, cache

KEY = "ab" * 32


class Color(enum.Enum):
    RED = "red"


class Level(enum.IntEnum):
    HIGH = 3


Point = collections.namedtuple("Point", "x y")

UTC = dt.timezone.utc
# (value, the value an L2 hit returns) per serializer: the auto serializer keeps them all.
AUTO_VALUES = {
    "tuple": (1, (2, "x"), []),
    "set": {1, 2, "three"},
    "frozenset": frozenset({(1, 2), "a"}),
    "uuid": uuid.UUID("12345678-1234-5678-1234-567812345678"),
    "datetime": dt.datetime(2026, 12, 1, 12, 30, 15, 123456, tzinfo=UTC),
    "naive datetime": dt.datetime(2026, 12, 1, 12, 30),
    "date": dt.date(2026, 12, 1),
    "time": dt.time(23, 59, 1, 5),
    "bytes": b"\x00\xff",
    "nested": {"ids": (uuid.UUID(int=1), uuid.UUID(int=2)), "tags": {frozenset({1})}, "when": [dt.date(2020, 1, 1)],
               "plain": [1, 2.5, None, True, "s", {"k": b"v"}]},
    "set of tuples": {(1, "a"), (2, "b")},
}

# The reference's AutoSerializer bytes (cachekit==0.24.1: msgpack.packb with
# strict_types=True and its _auto_default) for this value.
REFERENCE_AUTO_VALUE = (1, {"s": frozenset([2]), "u": uuid.UUID(int=7), "d": dt.date(2026, 1, 2), "l": [(3,)]})
REFERENCE_AUTO_BYTES = bytes.fromhex(
    "82a95f5f7475706c655f5fc3a576616c7565920184a17383a75f5f7365745f5fc3a576616c75659102a666726f7a656ec3a17582a85f5f"
    "757569645f5fc3a576616c7565d92430303030303030302d303030302d303030302d303030302d303030303030303030303037a16482a8"
    "5f5f646174655f5fc3a576616c7565aa323032362d30312d3032a16c9182a95f5f7475706c655f5fc3a576616c75659103")


def _same(a, b) -> bool:
    """Equal, and of the same type at every level."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, (set, frozenset)):
        return a == b and sorted(map(repr, map(type, a))) == sorted(map(repr, map(type, b)))
    return a == b


def _returning(value, **opts):
    calls = []

    def f(x):
        calls.append(x)
        return value

    g = cache(**opts)(f)
    return g, calls


@pytest.mark.parametrize("name", sorted(AUTO_VALUES))
@pytest.mark.parametrize("l1", [False, True])
def test_auto_serializer_keeps_types_across_an_l2_hit(name, l1):
    value = AUTO_VALUES[name]
    backend = Backend("memory://")
    g, calls = _returning(value, backend=backend, namespace="auto", serializer="auto", l1=l1)
    assert _same(g(1), value)
    got = g(1)
    assert calls == [1], "the second call is a hit"
    assert _same(got, value), (got, value)
    # The stored bytes, as another process reads them from L2.
    st = g._cachekit
    payload, _ = st.core.get(st.ns_bytes, st.cached_key((1,), {}))
    assert _same(st.decode(payload), value)


def test_auto_serializer_writes_the_reference_bytes():
    backend = Backend("memory://")
    g, _ = _returning(REFERENCE_AUTO_VALUE, backend=backend, namespace="auto", serializer="auto")
    g(1)
    payload, _ = g._cachekit.core.get(g._cachekit.ns_bytes, g._cachekit.cached_key((1,), {}))
    assert bytes(payload) == REFERENCE_AUTO_BYTES
    assert _same(g._cachekit.decode(REFERENCE_AUTO_BYTES), REFERENCE_AUTO_VALUE)


@pytest.mark.parametrize("serializer,tag", [("auto", b'{"s": "auto"'), ("pythonic", b'{"s": "auto"'),
                                           ("default", b'{"s": "default"'), ("std", b'{"s": "default"')])
def test_frames_carry_the_reference_serializer_tag(serializer, tag):
    """The reference reads an entry only under its own serializer's tag ("auto" for auto and pythonic)."""
    backend = Backend("memory://")
    g, _ = _returning([1], backend=backend, namespace="tag", serializer=serializer)
    g(1)
    stored = backend.get(g._cachekit.key_for((1,), {}))
    assert stored[:3] == b"CK\x03" and tag in stored


def test_pythonic_is_the_auto_serializer():
    g, calls = _returning((1, 2), backend=Backend("memory://"), namespace="py", serializer="pythonic", l1=False)
    g(1)
    assert g(1) == (1, 2) and type(g(1)) is tuple and calls == [1]


def test_default_serializer_is_the_reference_standard_one():
    """Tuples come back as lists (the language-neutral form, as the reference's
    StandardSerializer); temporal values keep their types."""
    value = {"t": (1, (2,)), "d": dt.date(2026, 1, 2), "w": dt.datetime(2026, 1, 2, 3, 4, tzinfo=UTC), "b": b"x"}
    g, calls = _returning(value, backend=Backend("memory://"), namespace="std", l1=False)
    g(1)
    got = g(1)
    assert calls == [1]
    assert _same(got, {"t": [1, [2]], "d": value["d"], "w": value["w"], "b": b"x"})


REFUSED_DEFAULT = {"enum": Color.RED, "intenum": Level.HIGH, "set": {1}, "frozenset": frozenset({1}),
                   "uuid": uuid.UUID(int=1), "decimal": Decimal("1.5"), "ordereddict": collections.OrderedDict(a=1),
                   "namedtuple": Point(1, 2), "nested enum": {"c": [Color.RED]}, "object": object()}
REFUSED_AUTO = {"enum": Color.RED, "intenum": Level.HIGH, "decimal": Decimal("1.5"), "namedtuple": Point(1, 2),
                "defaultdict": collections.defaultdict(int, a=1), "nested enum": ({"c": Level.HIGH},),
                "object": object()}


@pytest.mark.parametrize("serializer,name", [("default", n) for n in sorted(REFUSED_DEFAULT)]
                         + [("auto", n) for n in sorted(REFUSED_AUTO)])
def test_what_would_change_type_runs_uncached_with_a_warning(serializer, name, caplog):
    value = (REFUSED_DEFAULT if serializer == "default" else REFUSED_AUTO)[name]
    backend = Backend("memory://")
    g, calls = _returning(value, backend=backend, namespace="refused", serializer=serializer)
    with caplog.at_level(logging.WARNING, logger="cachekit"):
        assert g(1) is value  # the object itself, uncached
    assert g(1) is value and calls == [1, 1]
    assert "runs uncached" in caplog.text
    assert backend.get(g._cachekit.key_for((1,), {})) is None


def test_enum_in_object_mode_stays_the_enum():
    g, calls = _returning(Color.RED, backend=None)
    assert g(1) is Color.RED and g(1) is Color.RED and calls == [1]


# ---------------------------------------------------------------------------
# A stored value that fails to decode: a miss, recomputed and replaced
# ---------------------------------------------------------------------------

BAD_AUTO = [
    msgpack.packb({"__uuid__": True, "value": "not-a-uuid"}, use_bin_type=True),
    msgpack.packb({"__tuple__": True}, use_bin_type=True),
    msgpack.packb({"__set__": True, "value": [[1]]}, use_bin_type=True),  # unhashable member
    msgpack.packb({"__date__": True, "value": "2026-13-45"}, use_bin_type=True),
]
# Well-formed MessagePack (the core stores only that) that does not unpack into Python.
BAD_STD = [
    msgpack.packb({(1, 2): "x"}, use_bin_type=True),  # an array as a map key: unhashable
    b"\x81\x81\x01\x02\x03",  # a map as a map key
]


def _counting_fn(calls):
    def f(x):
        calls.append(x)
        return {"n": len(calls), "t": (1, 2)}
    return f


MODES = {
    "default": {},
    "default, no integrity": {"integrity_checking": False},
    "auto": {"serializer": "auto"},
    "encrypted": {"encryption": True, "master_key": KEY},
    "interop": {"interop": "op"},
}


@pytest.mark.parametrize("mode,bad", [(m, i) for m in sorted(MODES)
                                      for i in range(len(BAD_AUTO if m == "auto" else BAD_STD))])
@pytest.mark.parametrize("l1", [False, True])
def test_unreadable_stored_value_is_a_miss_and_is_replaced(mode, bad, l1, caplog):
    payloads = BAD_AUTO if mode == "auto" else BAD_STD
    backend = Backend("memory://")
    calls: list = []
    g = cache(backend=backend, namespace="unread", l1=l1, **MODES[mode])(_counting_fn(calls))
    first = g(1)
    st = g._cachekit
    key = st.cached_key((1,), {})
    st.core.put(st.ns_bytes, key, payloads[bad], 0.0)
    with caplog.at_level(logging.WARNING, logger="cachekit"):
        again = g(1)
    assert len(calls) == 2 and again["n"] == 2, "a miss: recomputed"
    assert "could not be read" in caplog.text
    assert g(1)["n"] == 2 and len(calls) == 2, "replaced: a hit now"
    assert first["n"] == 1


@pytest.mark.parametrize("mode", ["default", "auto"])
def test_async_unreadable_stored_value_is_a_miss_and_is_replaced(mode):
    backend = Backend("memory://")
    calls: list = []

    @cache(backend=backend, namespace="aunread", l1=False, **MODES[mode])
    async def g(x):
        calls.append(x)
        return {"n": len(calls), "t": (1, 2)}

    async def main():
        await g(1)
        st = g._cachekit
        st.core.put(st.ns_bytes, st.cached_key((1,), {}), (BAD_AUTO if mode == "auto" else BAD_STD)[0], 0.0)
        assert (await g(1))["n"] == 2
        assert (await g(1))["n"] == 2

    asyncio.run(main())
    assert len(calls) == 2


def test_a_refresh_never_stores_what_would_not_read_back():
    """Stale-while-revalidate: a refreshed value the serializer refuses is not
    stored over the good one."""
    backend = Backend("memory://")
    results = [{"ok": 1}, {"bad": Color.RED}, {"bad": Color.RED}]
    calls: list = []

    @cache(backend=backend, namespace="swr", ttl=1, swr_enabled=True, swr_threshold_ratio=0.01)
    def g(x):
        calls.append(x)
        return results[min(len(calls) - 1, 2)]

    assert g(1) == {"ok": 1}
    deadline = time.monotonic() + 10
    while len(calls) < 2 and time.monotonic() < deadline:
        g(1)
        time.sleep(0.02)
    time.sleep(0.1)
    st = g._cachekit
    payload, _ = st.core.get(st.ns_bytes, st.cached_key((1,), {}))
    assert payload is None or st.decode(payload) == {"ok": 1}
