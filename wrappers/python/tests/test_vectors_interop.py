"""interop-mode.json: every key, value, error and reader vector, by name."""
from __future__ import annotations

import datetime as dt
import uuid

import msgpack
import pytest

from conftest import vector_params
from cachekit import Backend, CacheKitError, CoreCache, InteropError, cache
from cachekit import _codec


def untag(v):
    """Tagged JSON -> Python values."""
    if isinstance(v, dict) and len(v) == 1:
        (k, x), = v.items()
        if k == "$set":
            return set(untag(e) for e in x)
        if k == "$bytes":
            return bytes.fromhex(x)
        if k == "$datetime":
            return dt.datetime.fromisoformat(x.replace("Z", "+00:00"))
        if k == "$uuid":
            return uuid.UUID(x)
        if k == "$float":
            return float(x)
        if k == "$int":
            return int(x)
    if isinstance(v, dict):
        return {k: untag(x) for k, x in v.items()}
    if isinstance(v, list):
        return [untag(x) for x in v]
    return v


@pytest.mark.parametrize("v", vector_params("interop-mode.json", "key_vectors"))
def test_interop_key_vector(v):
    args = untag(v["args"])
    key, canonical = _codec.key_interop(v["namespace"], v["operation"], _codec.pack_interop_args(args))
    assert canonical.hex() == v["canonical_args_hex"]
    assert key == v["expected_key"]


@pytest.mark.parametrize("v", vector_params("interop-mode.json", "key_vectors"))
def test_interop_key_vector_through_decorator(v):
    """A function whose signature takes the vector's arguments positionally."""
    args = untag(v["args"])
    names = [f"a{i}" for i in range(len(args))]
    ns: dict = {}
    exec(f"def fn({', '.join(names)}):\n    return 1\n", ns)
    backend = Backend("memory://")
    g = cache(backend=backend, namespace=v["namespace"], interop=v["operation"])(ns["fn"])
    assert g._cachekit.key_for(tuple(args), {}) == v["expected_key"]
    assert g(*args) == 1
    assert backend.get(v["expected_key"]) == b"\x01"


@pytest.mark.parametrize("v", vector_params("interop-mode.json", "value_vectors"))
def test_interop_value_vector(v):
    value = untag(v["value"])
    data = _codec.encode_interop_value(value)
    assert data.hex() == v["canonical_msgpack_hex"]
    back = _codec.decode_interop_value(data)
    if v["name"] == "datetime_sentinel_value":
        assert back == dt.datetime.fromisoformat(value["value"])
    else:
        assert back == value


@pytest.mark.parametrize("v", vector_params("interop-mode.json", "error_vectors"))
def test_interop_error_vector(v):
    args = untag(v["args"])
    with pytest.raises((InteropError, CacheKitError)):
        _codec.interop_key(v.get("namespace", "t"), v.get("operation", "op"), args)


@pytest.mark.parametrize("v", vector_params("interop-mode.json", "error_vectors"))
def test_interop_error_vector_through_decorator(v):
    """Bad segments fail at decoration; bad argument values make the call run
    uncached (as any key-generation failure), with nothing stored."""
    calls = []

    def fn(*args):
        calls.append(args)
        return 1
    args = untag(v["args"])
    if "namespace" in v or "operation" in v:
        with pytest.raises((InteropError, CacheKitError)):
            cache(backend="memory://", namespace=v.get("namespace", "t"), interop=v.get("operation", "op"))(fn)
        return
    backend = Backend("memory://")
    g = cache(backend=backend, namespace="t", interop="op")(fn)
    assert g(*args) == 1 and g(*args) == 1
    assert len(calls) == 2
    assert g.cache_info().hits == 0


@pytest.mark.parametrize("v", vector_params("interop-mode.json", "reader_accept_vectors"))
def test_interop_reader_accept(v):
    data = bytes.fromhex(v["input_hex"])
    got = _codec.decode_interop_value(data)
    if "value" in v:
        assert got == untag(v["value"])


@pytest.mark.parametrize("v", vector_params("interop-mode.json", "reader_reject_vectors"))
def test_interop_reader_reject(v):
    with pytest.raises(CacheKitError):
        _codec.decode_interop_value(bytes.fromhex(v["input_hex"]))


@pytest.mark.parametrize("v", vector_params("interop-mode.json", "reader_accept_vectors"))
def test_interop_reader_accept_through_cache(v):
    """A foreign SDK's (non-canonical) value stored raw is read by the decorator."""
    backend = Backend("memory://")

    def get_thing(x):
        raise AssertionError("must be served from the cache")

    g = cache(backend=backend, namespace="t", interop="op")(get_thing)
    key = g._cachekit.key_for((1,), {})
    backend.set(key, bytes.fromhex(v["input_hex"]))
    got = g(1)
    if "value" in v:
        assert got == untag(v["value"])


@pytest.mark.parametrize("v", vector_params("interop-mode.json", "encryption_vectors"))
def test_interop_encryption_vector(v):
    """The reference ciphertext, stored raw, opens through an encrypted interop cache."""
    backend = Backend("memory://")
    backend.set(v["cache_key"], bytes.fromhex(v["ciphertext_hex"]))
    ns, op, _ = v["cache_key"].split(":")
    c = CoreCache(backend=backend, interop=True, encryption=True, master_key=v["master_key_hex"],
                  tenant=v["tenant_id"], l1=False)
    data, _info = c.get(ns.encode(), v["cache_key"].encode())
    assert data == bytes.fromhex(v["plaintext_hex"])
    assert msgpack.unpackb(data) == {"name": "alice", "age": 30}

    def get_user(user_id):
        raise AssertionError("served from the cache")

    g = cache(backend=backend, namespace=ns, interop=op, encryption=True, master_key=v["master_key_hex"],
              tenant=v["tenant_id"], l1=False)(get_user)
    assert g(42) == {"name": "alice", "age": 30}


def test_interop_binding_defaults_varargs():
    def f(a, b=2, *rest, c=3, **kw):
        return 0
    backend = Backend("memory://")
    g = cache(backend=backend, namespace="t", interop="op")(f)
    k = g._cachekit.key_for((1,), {})
    assert k == _codec.interop_key("t", "op", [1, 2, [], 3, {}])
    assert g._cachekit.key_for((1, 2, 9), {"c": 3, "z": 1}) == _codec.interop_key("t", "op", [1, 2, [9], 3, {"z": 1}])
    assert g._cachekit.key_for((1,), {"b": 2}) == k  # bound: f(1) == f(1, b=2)


# The newer interop-mode.json (34 error rows) adds these two; pin them here too.
@pytest.mark.parametrize("name,args", [
    ("reject_int_overflow_in_map", [{"id": 18446744073709551616}]),
    ("reject_int_underflow_in_list", [[1, -9223372036854775809]]),
])
def test_interop_newer_int_range_rows(name, args):
    with pytest.raises(InteropError):
        _codec.interop_key("t", "op", args)


# Live interop with cachekit-py 0.24.1 found these: its interop key builder applies the
# spec's non-normative Python conveniences to arguments (Decimal -> str(), Path -> POSIX
# string; Enum -> value was already ours), where ours refused them and ran uncached.
def test_interop_decimal_and_path_arguments_as_the_reference():
    import decimal
    import pathlib
    assert _codec.interop_key("t", "op", [decimal.Decimal("12.340")]) == _codec.interop_key("t", "op", ["12.340"])
    assert _codec.interop_key("t", "op", [{"p": pathlib.PurePosixPath("/a/b")}]) == \
        _codec.interop_key("t", "op", [{"p": "/a/b"}])
    assert _codec.interop_key("t", "op", [pathlib.PureWindowsPath(r"a\b")]) == _codec.interop_key("t", "op", ["a/b"])
