"""python-frame.json through the decorator's real read path: `frame_vectors` (CK v3
frames cachekit-py wrote, each planted under the readers its row describes),
`error_vectors` (malformed frames: a miss, recomputed and replaced) and
`encrypted_read_vectors` (frames planted under a reader configured as the file's
`encrypted_reader`: each row's `outcome`)."""
from __future__ import annotations

import pytest

from conftest import define, load_vectors, vector_params
from cachekit import Backend, IntegrityError, cache

FILE = "python-frame.json"


class StandardSerializer:
    """Stands for the reference's StandardSerializer class: a serializer given as an
    object is keyed and framed by its class name."""

    def serialize(self, obj):  # pragma: no cover - the wrapper never calls it
        raise NotImplementedError

    def deserialize(self, data, meta=None):  # pragma: no cover
        raise NotImplementedError


# What each frame vector's row says its readers must do, reader by reader:
# (reader options, "value" (the row's value_json) or the revived value or "miss"[, a mark]).
# A row with no entry here fails test_every_frame_vector_has_readers.
_DEFAULT = {}
_AUTO = {"serializer": "auto"}
_MISS = "miss"
# The row the core cannot meet yet: its options name no serializer object, so
# the wrapper cannot make the core read frames tagged with a class name.
_CORE_SERIALIZER_NAME = pytest.mark.xfail(
    strict=True, reason="depends on the core: cachekit_cache_options names no serializer (only the default and "
                        "auto formats), so a reader given a serializer object reads and writes frames tagged "
                        "'default'; python-frame.json requires it to read frames tagged with its class name")
FRAME_READERS = {
    "raw_payload_frame": [(_DEFAULT, _MISS)],  # raw bytes, no envelope: the envelope check refuses it
    "default_saas_write_msgpack_bytestorage": [(_DEFAULT, "value"), ({"serializer": "std"}, "value")],
    "arrow_dataframe_write": [(_DEFAULT, _MISS)],  # serializer name arrow
    "default_saas_write_msgpack_bytestorage_bin": [(_DEFAULT, "value"), ({"serializer": "std"}, "value")],
    "auto_serializer_write": [(_DEFAULT, _MISS), (_AUTO, "value")],
    "standard_serializer_instance_write": [
        (_DEFAULT, _MISS),
        ({"serializer": StandardSerializer()}, "value", _CORE_SERIALIZER_NAME)],
    "std_alias_write": [(_DEFAULT, "value"), ({"serializer": "std"}, "value")],
    "pythonic_alias_write": [(_DEFAULT, _MISS), (_AUTO, {"pair": (1, "two")}),
                             ({"serializer": "pythonic"}, {"pair": (1, "two")})],
    "integrity_checking_off_write": [({"integrity_checking": False}, "value")],
    "arrow_compression_off_write": [(_DEFAULT, _MISS)],
    "std_recorded_as_given_frame": [(_DEFAULT, _MISS), ({"serializer": "std"}, _MISS)],
}


def _frame_reader_params() -> list:
    params = []
    for v in vector_params(FILE, "frame_vectors"):
        row = v.values[0]
        if row is None:  # vectors missing: the skipping param
            return [v]
        for opts, expect, *marks in FRAME_READERS.get(row["name"], []):
            params.append(pytest.param(row, opts, expect, marks=marks, id=f"{row['name']}-{_reader_id(opts)}"))
    return params


def _reader_id(opts: dict) -> str:
    if not opts:
        return "default-reader"
    return "-".join(f"{k}={v if isinstance(v, (str, bool)) else type(v).__name__ + '()'}"
                    for k, v in opts.items()) + "-reader"


def _seeded(frame_hex: str, **opts):
    """get_user cached on a memory backend whose entry for get_user(42) is the frame."""
    backend = Backend("memory://")
    f = define("get_user")
    g = cache(backend=backend, namespace="test", **opts)(f)
    backend.set(g._cachekit.key_for((42,), {}), bytes.fromhex(frame_hex))
    return f, g


def test_every_frame_vector_has_readers():
    data = load_vectors(FILE)
    if data is None:
        pytest.skip("conformance vectors not found (python-frame.json): set CACHEKIT_VECTORS_DIR")
    names = [v["name"] for v in data["frame_vectors"]]
    assert sorted(names) == sorted(FRAME_READERS), "a frame vector without reader expectations (or a stale one)"


@pytest.mark.parametrize("v,opts,expect", _frame_reader_params())
def test_reference_frame_read(v, opts, expect):
    f, g = _seeded(v["frame_hex"], **opts)
    if expect == _MISS:
        assert g(42) == {"n": 1, "args": [42]}
        assert len(f.calls) == 1
        return
    want = v["value_json"] if expect == "value" else expect
    assert g(42) == want
    assert f.calls == []
    info = g.cache_info()
    assert info.hits == 1 and info.l2_hits == 1 and info.misses == 0


@pytest.mark.parametrize("v", vector_params(FILE, "frame_vectors"))
def test_reference_frame_file_backend(v, tmp_path):
    if (_DEFAULT, "value") not in FRAME_READERS.get(v["name"], []):
        pytest.skip("not read by a default reader (covered by test_reference_frame_read)")
    w = Backend("file://" + str(tmp_path))
    f = define("get_user")
    g = cache(backend=str(tmp_path), namespace="test")(f)
    w.set(g._cachekit.key_for((42,), {}), bytes.fromhex(v["frame_hex"]))
    assert g(42) == v["value_json"]
    assert f.calls == []


def _pad_header(frame: bytes, spaces: int) -> bytes:
    hlen = int.from_bytes(frame[3:7], "big")
    header = frame[7:7 + hlen] + b" " * spaces
    return frame[:3] + len(header).to_bytes(4, "big") + header + frame[7 + hlen:]


@pytest.mark.parametrize("spaces", [1, 7, 64])
def test_frame_header_padded_with_spaces_is_read(spaces):
    """cachekit-py 0.24.x pads a frame's JSON header with ASCII spaces (counted in the
    header length) to align the payload; JSON allows trailing whitespace, so readers
    take it. Built from default_saas_write_msgpack_bytestorage_bin."""
    data = load_vectors(FILE)
    if data is None:
        pytest.skip("conformance vectors not found (python-frame.json): set CACHEKIT_VECTORS_DIR")
    v = next(x for x in data["frame_vectors"] if x["name"] == "default_saas_write_msgpack_bytestorage_bin")
    f, g = _seeded(_pad_header(bytes.fromhex(v["frame_hex"]), spaces).hex())
    assert g(42) == v["value_json"]
    assert f.calls == []


@pytest.mark.parametrize("v", vector_params(FILE, "error_vectors"))
def test_malformed_frame_is_a_miss(v):
    f, g = _seeded(v["frame_hex"])
    assert g(42) == {"n": 1, "args": [42]}
    assert len(f.calls) == 1
    # the refused entry was replaced by a good one
    assert g(42) == {"n": 1, "args": [42]}
    assert len(f.calls) == 1


@pytest.mark.parametrize("v", vector_params(FILE, "error_vectors"))
def test_malformed_frame_fed_to_interop_reader_is_a_miss(v):
    if v["frame_hex"][:4] != "434b":
        pytest.skip("no CK magic: a well-formed MessagePack document (another SDK's container), which an "
                    "interop reader reads as a value")
    backend = Backend("memory://")
    calls = []

    def get_user(user_id):
        calls.append(user_id)
        return {"id": user_id}

    g = cache(backend=backend, namespace="users", interop="get_user")(get_user)
    backend.set(g._cachekit.key_for((42,), {}), bytes.fromhex(v["frame_hex"]))
    assert g(42) == {"id": 42}
    assert calls == [42]


# encrypted_read_vectors: each frame is planted under the file's encrypted_reader
# configuration (master key, the reader's own tenant, cache key). The AAD binds the
# cache key, which no argument list of a decorated function hashes to, so the reader's
# key function is pointed at it; everything after the key (the core's read,
# fingerprint selection, decryption, frame and container checks, the wrapper's
# decode and its miss handling) is the decorator's real read path.

def _encrypted_reader(fail_closed: bool):
    cfg = load_vectors(FILE)["encrypted_reader"]
    assert cfg["tenant_source"] == "reader"  # the reader's own tenant, never the header's
    backend = Backend("memory://")
    calls = []

    def get_user(user_id):
        calls.append(user_id)
        return {"computed": user_id}

    g = cache(backend=backend, encryption=True, master_key=cfg["master_key_hex"], tenant=cfg["tenant_id"],
              fail_closed=fail_closed, l1=False)(get_user)
    g._cachekit.key_for = lambda args, kwargs: cfg["cache_key"]
    return g, calls, backend, cfg["cache_key"]


def _frame_with_header(frame: bytes, header: bytes) -> bytes:
    hlen = int.from_bytes(frame[3:7], "big")
    return frame[:3] + len(header).to_bytes(4, "big") + header + frame[7 + hlen:]


def test_encrypted_reader_reads_the_reference_ciphertext():
    """The control for the rows below: ciphertext_serializer_name_auto's frame with its
    header's serializer name set back to default (the name is not an AAD input) is the
    reference's own encrypted write, and reads as its value through this reader."""
    data = load_vectors(FILE)
    if data is None:
        pytest.skip("conformance vectors not found (python-frame.json): set CACHEKIT_VECTORS_DIR")
    v = next(x for x in data["encrypted_read_vectors"] if x["name"] == "ciphertext_serializer_name_auto")
    frame = bytes.fromhex(v["frame_hex"])
    hlen = int.from_bytes(frame[3:7], "big")
    header = frame[7:7 + hlen]
    assert header.startswith(b'{"s": "auto", ')
    g, calls, backend, key = _encrypted_reader(fail_closed=True)
    backend.set(key, _frame_with_header(frame, b'{"s": "default", ' + header[len(b'{"s": "auto", '):]))
    assert g(42) == {"user_id": 42, "name": "cachekit", "active": True}
    assert calls == []


@pytest.mark.parametrize("v", vector_params(FILE, "encrypted_read_vectors"))
def test_encrypted_read_vector_fail_open_reader(v):
    """A fail-open reader never returns the planted entry (plaintext claim, foreign
    key, other tenant, wrong container, serializer name): a miss, recomputed."""
    assert v["outcome"] == "fail_closed", v["outcome"]
    g, calls, backend, key = _encrypted_reader(fail_closed=False)
    backend.set(key, bytes.fromhex(v["frame_hex"]))
    assert g(42) == {"computed": 42}
    assert calls == [42]
    assert backend.get(key) != bytes.fromhex(v["frame_hex"])  # refused entry evicted or replaced


@pytest.mark.parametrize("v", vector_params(FILE, "encrypted_read_vectors"))
def test_encrypted_read_vector_fail_closed_reader(v):
    """outcome fail_closed: a fail-closed reader refuses the entry with an
    IntegrityError (DecryptionAuthenticationError included) and never runs the
    function over it or returns the planted bytes as the value."""
    assert v["outcome"] == "fail_closed", v["outcome"]
    g, calls, backend, key = _encrypted_reader(fail_closed=True)
    backend.set(key, bytes.fromhex(v["frame_hex"]))
    with pytest.raises(IntegrityError):
        g(42)
    assert calls == []
