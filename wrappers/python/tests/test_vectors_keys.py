"""cache-keys.json: every auto-mode key vector, by name, from Python values."""
from __future__ import annotations

import pytest

from conftest import define, vector_params
from cachekit import cache, Backend, ConfigurationError
from cachekit import _codec


@pytest.mark.parametrize("v", vector_params("cache-keys.json", "vectors"))
def test_key_vector(v):
    key = _codec.auto_key(v["namespace"], v["function_module"], v["function_qualname"], tuple(v["args"]),
                          dict(v["kwargs"]), v["integrity_checking"], v["serializer_type"])
    assert key == v["expected_key"]


@pytest.mark.parametrize("v", vector_params("cache-keys.json", "vectors"))
def test_key_vector_through_decorator(v):
    """The decorator names the entry with the vector's key (checked in a borrowed backend).
    A serializer identity the reference's decorator does not take by name (cbor,
    toml, local, "<custom>:...": the codec keys them, test_key_vector above) is
    refused at decoration, as the reference refuses it."""
    from cachekit._options import SERIALIZER_NAMES
    backend = Backend("memory://")
    f = define(v["function_qualname"], v["function_module"])
    opts = dict(backend=backend, namespace=v["namespace"], integrity_checking=v["integrity_checking"],
                serializer=v["serializer_type"])
    if v["serializer_type"] not in SERIALIZER_NAMES:
        with pytest.raises(ValueError, match="Unknown serializer"):
            cache(**opts)(f)
        return
    g = cache(**opts)(f)
    g(*v["args"], **v["kwargs"])
    assert backend.get(v["expected_key"]) is not None


@pytest.mark.parametrize("v", vector_params("cache-keys.json", "error_vectors"))
def test_key_error_vector(v):
    with pytest.raises((ConfigurationError, TypeError, ValueError)):
        _codec.auto_key(v["namespace"], v["function_module"], v["function_qualname"], tuple(v["args"]),
                        dict(v["kwargs"]), v["integrity_checking"], v["serializer_type"])
    f = define(v["function_qualname"], v["function_module"])
    with pytest.raises((ConfigurationError, TypeError, ValueError)):
        cache(backend="memory://", namespace=v["namespace"], serializer=v["serializer_type"])(f)


@pytest.mark.parametrize("v", vector_params("cache-keys.json", "serializer_object_vectors"))
def test_serializer_object_vector(v):
    # A serializer given as an object is keyed by "<custom>:" + its class name.
    cls = type(v["serializer_class"], (), {
        "serialize": lambda self, obj: (b"", {}), "deserialize": lambda self, data, meta=None: None})
    backend = Backend("memory://")
    f = define(v["function_qualname"], v["function_module"])
    g = cache(backend=backend, namespace=v["namespace"], integrity_checking=v["integrity_checking"],
              serializer=cls())(f)
    assert g._cachekit.key_for(tuple(v["args"]), dict(v["kwargs"])) == v["expected_key"]
    g(*v["args"], **v["kwargs"])
    assert backend.get(v["expected_key"]) is not None


# Normalisation rules beyond the vectors (protocol.md 1a), checked against the
# equivalent plain values.
def _k(*args, **kwargs):
    return _codec.auto_key("t", "m", "f", args, kwargs)


def test_normalisation_equivalences():
    import datetime as dt
    import enum
    import uuid
    from decimal import Decimal
    from pathlib import PurePosixPath, PureWindowsPath

    class Color(enum.Enum):
        RED = "red"

    u = uuid.UUID("550E8400-E29B-41D4-A716-446655440000")
    assert _k((1, 2)) == _k([1, 2])
    assert _k(-0.0) == _k(0.0)
    assert _k(u) == _k("550e8400-e29b-41d4-a716-446655440000")
    assert _k(Decimal("1.50")) == _k("1.50")
    assert _k(PurePosixPath("/a/b")) == _k("/a/b")
    assert _k(PureWindowsPath("a\\b")) == _k("a/b")
    assert _k(Color.RED) == _k("red")
    aware = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
    assert _k(aware) == _k(aware.isoformat())
    assert _k({"b": 1, "a": 2}) == _k({"a": 2, "b": 1})
    assert _k(a=1, b=2) == _k(b=2, a=1)
    assert _k(1, _bypass_cache=False) == _k(1)
    assert _k(1) != _k(1.0) != _k(True)
    assert _k(2) != _k(x=2)  # no signature binding


@pytest.mark.parametrize("bad", ["naive", "date", "time", "set", "object", "bigint"])
def test_rejected_arguments(bad):
    import datetime as dt
    value = {"naive": dt.datetime(2024, 1, 1), "date": dt.date(2024, 1, 1), "time": dt.time(1, 2),
             "set": {1, 2}, "object": object(), "bigint": 1 << 64}[bad]
    with pytest.raises(_codec.UnsupportedArgument):
        _k(value)


def test_long_key_is_shortened_by_core():
    key = _codec.auto_key("n" * 300, "m", "f", (1,), {})
    assert len(key) == 50 + 1 + 32
