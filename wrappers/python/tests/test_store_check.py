"""What a store proves before it writes (docs/python.md "Values that cannot come
back"): a value whose payload would not decode is returned uncached and never
stored. The payload is decoded to prove it only when the encoder says it may
fail (the standard serializer's hook converted a tuple or a temporal value; an
auto payload holds `__`; always in interop mode): the verdict is the one a full
read-back gives, for every value here, and a plain value's miss decodes nothing."""
from __future__ import annotations

import datetime as dt
import logging
import uuid

import msgpack
import pytest

from cachekit import Backend, _codec, cache

UTC = dt.timezone.utc


def _nested(depth: int) -> list:
    v: list = [1]
    for _ in range(depth - 1):
        v = [v]
    return v


VALUES = {
    "plain dict": {"users": [{"id": 1, "name": "a", "tags": ["x"], "score": 1.5, "ok": True, "bio": None}], "n": 1},
    "plain keys of every scalar type": {1: "i", -2: "n", 1.5: "f", None: "none", True: "t", b"k": "b", "s": "s"},
    "ext and timestamp": {"e": msgpack.ExtType(5, b"abc"), msgpack.Timestamp(1, 2): msgpack.ExtType(0, b"")},
    "deepest list the packer takes": _nested(511),
    "too deep": _nested(512),
    "tuple value": {"t": (1, (2, "x"))},
    "tuple key": {(1, 2): "x"},
    "tuple key deep in a list": [1, {"a": [{(1,): 2}]}],
    "frozenset key": {frozenset({1}): "x"},
    "uuid key": {uuid.UUID(int=1): "x"},
    "datetime key": {dt.datetime(2026, 12, 1, tzinfo=UTC): 1},
    "date value": {"d": dt.date(2026, 12, 1)},
    "marker-shaped map, bad uuid": {"__uuid__": True, "value": "not-a-uuid"},
    "marker-shaped map, tuple over an int": {"x": {"__tuple__": True, "value": 5}},
    "marker-shaped map, no value": {"__datetime__": True},
    "marker-shaped map, bad date": {"__date__": True, "value": "2026-13-45"},
    "marker-shaped map, good date": {"__date__": True, "value": "2026-01-02"},
    "dunder text only": {"name": "__init__"},
    "big int": 2 ** 64 - 1,
    "int too big": 2 ** 64,
    "lone surrogate": "\ud800",
}
MODES = {"default": {}, "auto": {"serializer": "auto"}, "interop": {"interop": "op"}}
# Interop mode raises InteropError for what it cannot carry, and decodes every payload it stores.
SERIALIZERS = ("default", "auto")


def _full_read_back(st, value) -> bool:
    """The check every store made before: encode, then decode the bytes."""
    try:
        if st.serializer_id in _codec.AUTO_SERIALIZERS:
            data = _codec.encode_auto_value(value)
        else:
            data = _codec.encode_value(value)
        st.decode(data)
    except Exception:
        return False
    return True


@pytest.mark.parametrize("mode", SERIALIZERS)
@pytest.mark.parametrize("name", sorted(VALUES))
def test_a_value_is_stored_exactly_when_its_payload_decodes(mode, name, caplog):
    value = VALUES[name]
    backend = Backend("memory://")
    calls: list = []

    @cache(backend=backend, namespace="check", l1=False, **MODES[mode])
    def g(x):
        calls.append(x)
        return value

    st = g._cachekit
    with caplog.at_level(logging.WARNING, logger="cachekit"):
        assert g(1) is value  # the caller gets its own object either way
    stored = backend.get(st.key_for((1,), {})) is not None
    assert stored == _full_read_back(st, value)
    if stored:
        g(1)
        assert calls == [1], "a hit"
    else:
        assert "runs uncached" in caplog.text
        g(1)
        assert calls == [1, 1], "never stored: computed again"


def _unpacks_during(monkeypatch, fn) -> int:
    count = [0]
    real = _codec._unpackb

    def counting(*a, **kw):
        count[0] += 1
        return real(*a, **kw)

    monkeypatch.setattr(_codec, "_unpackb", counting)
    fn()
    monkeypatch.setattr(_codec, "_unpackb", real)
    return count[0]


@pytest.mark.parametrize("mode,name,decodes", [
    ("default", "plain dict", 0), ("auto", "plain dict", 0),
    ("default", "tuple value", 1), ("default", "date value", 1),
    ("auto", "tuple value", 1), ("auto", "dunder text only", 1), ("interop", "plain dict", 1),
])
def test_a_miss_decodes_the_payload_only_when_it_may_fail(monkeypatch, mode, name, decodes):
    """A miss returns the function's own object: the only decode is the store's
    proof, which a payload that cannot fail skips."""
    value = VALUES[name]
    g = cache(backend=Backend("memory://"), namespace="proof", l1=False, **MODES[mode])(lambda x: value)
    g(0)  # builds the core outside the count
    assert _unpacks_during(monkeypatch, lambda: g(1)) == decodes

