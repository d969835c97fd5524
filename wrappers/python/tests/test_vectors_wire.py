"""wire-format.json `temporal_sentinel_vectors`: each sentinel payload revives as the
Python temporal type its `revives_to` names (datetime.datetime / datetime.date /
datetime.time, equal to its `iso`), through the standard and auto serializers' decode
(the codec and a decorated function reading the payload from L2, framed as the
reference frames it, integrity on and off) and through interop mode's reader; and the
writers produce the very payload for that value."""
from __future__ import annotations

import datetime as dt

import pytest

from conftest import define, vector_params
from cachekit import Backend, cache, decode_interop_value, encode_interop_value
from cachekit import _codec
from cachekit._core import ffi, lib

FILE = "wire-format.json"
SECTION = "temporal_sentinel_vectors"
_TYPES = {"datetime": dt.datetime, "date": dt.date, "time": dt.time}


def _expected(v: dict):
    r = v["revives_to"]
    t = _TYPES[r["type"]]
    return t, t.fromisoformat(r["iso"])


def _assert_revived(got, v: dict) -> None:
    t, want = _expected(v)
    assert type(got) is t, f"{v['name']}: got {type(got).__name__}, not {t.__name__}"  # a datetime is also a date
    assert got == want


def _c_call_bytes(fill) -> bytes:
    buf = ffi.new("cachekit_buf *")
    try:
        assert fill(buf) == 0
        return ffi.buffer(buf.ptr, buf.size)[:]
    finally:
        lib.cachekit_buf_dispose(buf)


def _frame(payload: bytes, serializer: bytes, integrity: bool) -> bytes:
    """The CK v3 frame the reference writes for this payload (envelope with integrity on)."""
    body = (_c_call_bytes(lambda b: lib.cachekit_envelope_wrap(b, payload, len(payload), b"msgpack"))
            if integrity else payload)
    meta = (b'{"format": "msgpack", "encoding": "utf-8", "compressed": %s, "original_type": "msgpack"}'
            % (b"true" if integrity else b"false"))
    return _c_call_bytes(lambda b: lib.cachekit_frame_encode(b, serializer, meta, body, len(body)))


@pytest.mark.parametrize("v", vector_params(FILE, SECTION))
def test_temporal_sentinel_standard_decode(v):
    _assert_revived(_codec.decode_value(bytes.fromhex(v["payload_hex"])), v)


@pytest.mark.parametrize("v", vector_params(FILE, SECTION))
def test_temporal_sentinel_auto_decode(v):
    _assert_revived(_codec.decode_auto_value(bytes.fromhex(v["payload_hex"])), v)


@pytest.mark.parametrize("integrity", [True, False], ids=["integrity-on", "integrity-off"])
@pytest.mark.parametrize("serializer", ["default", "auto"])
@pytest.mark.parametrize("v", vector_params(FILE, SECTION))
def test_temporal_sentinel_read_by_decorator(v, serializer, integrity):
    backend = Backend("memory://")
    f = define("get_when")
    g = cache(backend=backend, namespace="wire", serializer=serializer, integrity_checking=integrity)(f)
    frame = _frame(bytes.fromhex(v["payload_hex"]), serializer.encode(), integrity)
    backend.set(g._cachekit.key_for((1,), {}), frame)
    _assert_revived(g(1), v)
    assert f.calls == []


@pytest.mark.parametrize("v", vector_params(FILE, SECTION))
def test_temporal_sentinel_interop_reader(v):
    """Interop values use the same sentinel maps; the interop reader revives them."""
    payload = bytes.fromhex(v["payload_hex"])
    _assert_revived(decode_interop_value(payload), v)
    backend = Backend("memory://")

    def get_when(x):
        raise AssertionError("must be served from the cache")

    g = cache(backend=backend, namespace="wire", interop="get_when")(get_when)
    backend.set(g._cachekit.key_for((1,), {}), payload)
    _assert_revived(g(1), v)


@pytest.mark.parametrize("v", vector_params(FILE, SECTION))
def test_temporal_sentinel_written_by_every_serializer(v):
    """The value the payload revives to is written back as exactly that payload."""
    _, value = _expected(v)
    payload = bytes.fromhex(v["payload_hex"])
    assert _codec.encode_value(value) == payload
    assert _codec.encode_auto_value(value) == payload
    assert encode_interop_value(value) == payload
