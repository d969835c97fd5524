"""Interop-mode rules no portable-JSON vector can carry, from Python values
(tests/conformance/requirement_coverage.json names each test here): values
outside the data model, lone surrogates and non-string map keys are refused;
a bad segment is refused at decoration on every kind of backend; and what the
write path stores is each value vector's canonical bytes."""
from __future__ import annotations

import datetime as dt

import pytest

from conftest import vector_params
from test_vectors_interop import untag
from cachekit import Backend, CacheKitError, InteropError, cache
from cachekit import _codec


def _key(args):
    return _codec.interop_key("t", "op", list(args))


@pytest.mark.parametrize("value", [object(), 1 + 2j, len, type, range(3), Ellipsis,
                                   dt.date(2024, 1, 1), dt.time(1, 2)], ids=repr)
def test_values_outside_the_data_model_are_refused(value):
    for args in ([value], [[value]], [{"k": value}]):
        with pytest.raises(InteropError):
            _key(args)


@pytest.mark.parametrize("surrogate", ["\ud800", "\udbff", "\udc00", "\udfff", "a\ud83dz"])
def test_lone_surrogates_are_refused(surrogate):
    for args in ([surrogate], [{surrogate: 1}], [[{"k": [surrogate]}]], [{surrogate}]):
        with pytest.raises(InteropError):
            _key(args)
    assert _key(["\U0001f600"])  # a whole pair is a character like any other


@pytest.mark.parametrize("key", [1, None, True, 1.5, b"k", (1, 2), frozenset({1})], ids=repr)
def test_non_string_map_keys_are_refused(key):
    for args in ([{key: 1}], [[{key: 1}]], [{"a": {key: 1}}]):
        with pytest.raises(InteropError):
            _key(args)


def _bad_segment_rows():
    return [p for p in vector_params("interop-mode.json", "error_vectors")
            if p.values[0] is None or "namespace" in p.values[0] or "operation" in p.values[0]]


@pytest.mark.parametrize("v", _bad_segment_rows())
def test_a_bad_segment_is_refused_at_decoration_on_every_backend(v, tmp_path):
    def fn(x):
        return x
    for backend in ("memory://", str(tmp_path), Backend("memory://")):
        with pytest.raises((InteropError, CacheKitError)):
            cache(backend=backend, namespace=v.get("namespace", "t"), interop=v.get("operation", "op"))(fn)


@pytest.mark.parametrize("v", vector_params("interop-mode.json", "value_vectors"))
def test_the_write_path_stores_each_value_vectors_canonical_bytes(v):
    value = untag(v["value"])
    if v["name"] == "datetime_sentinel_value":
        value = dt.datetime.fromisoformat(value["value"])  # the type the sentinel stands for
    backend = Backend("memory://")
    g = cache(backend=backend, namespace="t", interop="op", l1=False)(lambda x: value)
    g(1)
    stored = backend.get(g._cachekit.key_for((1,), {}))
    assert stored is not None and stored.hex() == v["canonical_msgpack_hex"]
