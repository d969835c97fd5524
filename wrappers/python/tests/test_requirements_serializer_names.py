"""The serializer name a CK frame records, beyond what python-frame.json pins
(tests/conformance/requirement_coverage.json names each test here): a frame is
read only by a cache that would itself record that name (frames planted under
other serializers' readers, names differing only in case, alias spellings
recorded as given), encrypted writes record the name too, every serializer
the wrapper offers writes a registered format token, a header edited on a
real ciphertext fails closed, and a non-string identity is refused."""
from __future__ import annotations

import json

import pytest

from conftest import define, load_vectors, vector_params
from cachekit import Backend, ConfigurationError, cache
from cachekit import _codec
from cachekit._options import SERIALIZER_NAMES

KEY = "ab" * 32
# What a reader configured with each name records (and so accepts).
RECORDS = {"default": "default", "std": "default", "auto": "auto", "pythonic": "auto"}
# spec/encryption.md's format token registry.
FORMAT_TOKENS = {"msgpack", "orjson", "arrow"}


def _split(frame: bytes):
    assert frame[:3] == b"CK\x03"
    n = int.from_bytes(frame[3:7], "big")
    return json.loads(frame[7:7 + n]), frame[7 + n:]


def _join(header: dict, payload: bytes) -> bytes:
    h = json.dumps(header).encode()
    return b"CK\x03" + len(h).to_bytes(4, "big") + h + payload


# A "default" reader serves this frame (the core resolves std and standard on
# read): a known deviation, recorded on KEY-4 in requirement_coverage.json.
KNOWN_DEVIATION = {"std_recorded_as_given_frame"}


def _envelope_frames():
    """The frame vectors whose payload is a standard ByteStorage envelope."""
    data = load_vectors("python-frame.json")
    if data is None:
        pytest.skip("python-frame.json not found: set CACHEKIT_VECTORS_DIR")
    return [v for v in data["frame_vectors"] if "payload_envelope" in v and v["name"] not in KNOWN_DEVIATION]


@pytest.mark.parametrize("reader", sorted(RECORDS))
def test_a_frame_is_read_only_under_the_name_it_records(reader):
    for v in _envelope_frames():
        backend = Backend("memory://")
        f = define("get_user")
        g = cache(backend=backend, namespace="test", serializer=reader, l1=False)(f)
        backend.set(g._cachekit.key_for((42,), {}), bytes.fromhex(v["frame_hex"]))
        g(42)
        served = f.calls == []
        assert served == (v["expected_header"]["s"] == RECORDS[reader]), (v["name"], reader)


def test_a_name_differing_only_in_case_is_a_miss():
    v = next(x for x in _envelope_frames() if x["name"] == "default_saas_write_msgpack_bytestorage_bin")
    header, payload = _split(bytes.fromhex(v["frame_hex"]))
    for spelling in ("Default", "DEFAULT", "default "):
        backend = Backend("memory://")
        f = define("get_user")
        g = cache(backend=backend, namespace="test", l1=False)(f)
        backend.set(g._cachekit.key_for((42,), {}), _join(dict(header, s=spelling), payload))
        g(42)
        assert len(f.calls) == 1, spelling


@pytest.mark.parametrize("serializer", ["default", "std"])
def test_encrypted_writes_record_the_serializer_name(serializer):
    backend = Backend("memory://")
    g = cache(backend=backend, namespace="enc", serializer=serializer, encryption=True, master_key=KEY)(define("f"))
    g(1)
    header, _ = _split(backend.get(g._cachekit.key_for((1,), {})))
    assert header["s"] == "default" and header["m"]["encrypted"] is True


def test_every_offered_serializer_writes_a_registered_format_token():
    written = []
    for name in sorted(SERIALIZER_NAMES):
        for encrypted in (False, True):
            backend = Backend("memory://")
            opts = dict(backend=backend, namespace="tok", serializer=name, encryption=encrypted)
            if encrypted:
                opts["master_key"] = KEY
            try:
                g = cache(**opts)(define("f"))
                g(1)
            except (ConfigurationError, ImportError, ValueError, TypeError):
                continue  # not offered here (a missing optional module, or not sealable): nothing written
            stored = backend.get(g._cachekit.key_for((1,), {}))
            if stored is None:
                continue
            header, _ = _split(stored)
            assert header["m"]["format"] in FORMAT_TOKENS, (name, encrypted, header)
            written.append((name, encrypted))
    assert ("default", False) in written and ("default", True) in written and ("auto", False) in written


# The reader binds its own configuration's format and original_type; the
# header's compressed flag and its encrypted claim are what an attacker edits.
@pytest.mark.parametrize("field,value", [("compressed", False), ("encrypted", False)])
def test_a_header_edited_on_real_ciphertext_fails_closed(field, value):
    backend = Backend("memory://")
    f = define("f")
    g = cache(backend=backend, namespace="aad", encryption=True, master_key=KEY, l1=False)(f)
    g(1)
    key = g._cachekit.key_for((1,), {})
    header, payload = _split(backend.get(key))
    header["m"][field] = value
    backend.set(key, _join(header, payload))
    g(1)
    assert len(f.calls) == 2  # not served: recomputed


@pytest.mark.parametrize("identity", [1, True, 0, False, None, b"default"])
def test_a_non_string_serializer_identity_is_refused(identity):
    if isinstance(identity, (bool, int)):  # (None is the default; an object is a custom serializer)
        with pytest.raises((TypeError, ValueError, ConfigurationError)):
            cache(backend="memory://", serializer=identity)(define("f"))
    with pytest.raises((TypeError, ValueError, ConfigurationError)):
        _codec.auto_key("t", "m", "f", (), {}, True, identity)
