"""Interop values are a closed model that every SDK reads back: kinds the protocol does
not have are refused with InteropError, as the reference cachekit-py 0.24.1 refuses
them (interop._normalize_value; the TS SDK refuses NaN/Inf too), by
encode_interop_value and by a decorated interop-mode function's store, which raises
to the caller each call (the reference fails loud rather than return a value it will
not cache) and stores nothing. Keys are not concerned: arguments keep their own rules."""
from __future__ import annotations

import asyncio
import datetime as dt
import decimal
import enum
import pathlib
import uuid

import pytest

from cachekit import Backend, InteropError, cache, encode_interop_value


class Color(enum.Enum):
    RED = "red"


class Level(enum.IntEnum):
    ONE = 1


class Letter(str, enum.Enum):
    A = "a"


# Every kind the reference refuses as an interop value (probed against cachekit==0.24.1).
REFUSED = {
    "set": {1, 2},
    "frozenset": frozenset({1, 2}),
    "set_in_map": {"tags": {"a", "b"}},
    "set_in_list": [1, {2}],
    "uuid": uuid.UUID("550e8400-e29b-41d4-a716-446655440000"),
    "enum": Color.RED,
    "enum_in_map": {"color": Color.RED},
    "nan": float("nan"),
    "inf": float("inf"),
    "minus_inf": float("-inf"),
    "nan_in_list": [1.0, float("nan")],
    "decimal": decimal.Decimal("1.50"),
    "path": pathlib.PurePosixPath("/a/b"),
    "memoryview": memoryview(b"ab"),
    "non_string_map_key": {1: "one"},
    "custom_object": object(),
}

# What the reference stores for the kinds nearest to those (the same bytes here).
ACCEPTED = {
    "int_enum_is_its_int": (Level.ONE, "01"),
    "str_enum_is_its_string": (Letter.A, "a161"),
    "tuple_is_an_array": ((1, 2), "920102"),
    "bytearray_is_bin": (bytearray(b"x"), "c40178"),
    "finite_float_stays_float64": (2.0, "cb4000000000000000"),
}


@pytest.mark.parametrize("value", REFUSED.values(), ids=REFUSED.keys())
def test_encode_interop_value_refuses(value):
    with pytest.raises(InteropError):
        encode_interop_value(value)


@pytest.mark.parametrize("value,hexed", ACCEPTED.values(), ids=ACCEPTED.keys())
def test_encode_interop_value_accepts_as_the_reference(value, hexed):
    assert encode_interop_value(value).hex() == hexed


def _interop_function(value):
    backend = Backend("memory://")
    calls = []

    def get_thing(x):
        calls.append(x)
        return value

    return backend, calls, get_thing


@pytest.mark.parametrize("value", REFUSED.values(), ids=REFUSED.keys())
def test_decorated_interop_store_refuses(value):
    backend, calls, fn = _interop_function(value)
    g = cache(backend=backend, namespace="t", interop="op")(fn)
    key = g._cachekit.key_for((1,), {})
    for _ in range(2):  # raised every call: nothing was stored to serve the second one
        with pytest.raises(InteropError):
            g(1)
    assert calls == [1, 1]
    assert backend.get(key) is None


@pytest.mark.parametrize("value", [REFUSED["set"], REFUSED["nan"]], ids=["set", "nan"])
def test_decorated_async_interop_store_refuses(value):
    backend, calls, fn = _interop_function(value)

    async def aget_thing(x):
        return fn(x)

    g = cache(backend=backend, namespace="t", interop="op")(aget_thing)
    with pytest.raises(InteropError):
        asyncio.run(g(1))
    assert calls == [1]
    assert backend.get(g._cachekit.key_for((1,), {})) is None


def test_refused_value_does_not_change_the_key_rules():
    """Sets, UUIDs and Enums stay valid interop ARGUMENTS (the reference keys them)."""
    backend = Backend("memory://")
    g = cache(backend=backend, namespace="t", interop="op")(lambda a, b, c: {"ok": True})
    assert g({1, 2}, uuid.UUID(int=1), Color.RED) == {"ok": True}
    assert backend.get(g._cachekit.key_for(({1, 2}, uuid.UUID(int=1), Color.RED), {})) is not None


def test_naive_datetime_value_is_refused_here():
    """Kept stricter than the reference (which stores it without an offset): the
    protocol's datetimes carry a UTC offset, and an aware one round-trips."""
    with pytest.raises(InteropError):
        encode_interop_value(dt.datetime(2024, 1, 1))
    aware = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
    assert encode_interop_value(aware) == encode_interop_value({"__datetime__": True, "value": aware.isoformat()})
