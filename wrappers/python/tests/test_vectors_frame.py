"""python-frame.json: frames the reference SDK wrote are readable through the decorator."""
from __future__ import annotations

import pytest

from conftest import define, vector_params
from cachekit import Backend, CoreCache, cache


def _seeded(frame_hex: str):
    """get_user cached on a memory backend whose entry for get_user(42) is the frame."""
    backend = Backend("memory://")
    f = define("get_user")
    g = cache(backend=backend, namespace="test")(f)
    backend.set(g._cachekit.key_for((42,), {}), bytes.fromhex(frame_hex))
    return f, g


@pytest.mark.parametrize("v", vector_params("python-frame.json", "frame_vectors"))
def test_reference_frame_read(v):
    f, g = _seeded(v["frame_hex"])
    if "value_json" not in v:
        # raw_payload_frame / arrow: not a standard-serializer value; the cache must not
        # return them as a value (serializer mismatch or failed envelope check -> miss).
        assert g(42) == {"n": 1, "args": [42]}
        assert len(f.calls) == 1
        return
    assert g(42) == v["value_json"]
    assert f.calls == []
    info = g.cache_info()
    assert info.hits == 1 and info.l2_hits == 1 and info.misses == 0


@pytest.mark.parametrize("v", vector_params("python-frame.json", "frame_vectors"))
def test_reference_frame_file_backend(v, tmp_path):
    if "value_json" not in v:
        pytest.skip("not a standard-serializer value (covered by the memory-backend test)")
    w = Backend("file://" + str(tmp_path))
    f = define("get_user")
    g = cache(backend=str(tmp_path), namespace="test")(f)
    w.set(g._cachekit.key_for((42,), {}), bytes.fromhex(v["frame_hex"]))
    assert g(42) == v["value_json"]
    assert f.calls == []


@pytest.mark.parametrize("v", vector_params("python-frame.json", "error_vectors"))
def test_malformed_frame_is_a_miss(v):
    f, g = _seeded(v["frame_hex"])
    assert g(42) == {"n": 1, "args": [42]}
    assert len(f.calls) == 1
    # the refused entry was replaced by a good one
    assert g(42) == {"n": 1, "args": [42]}
    assert len(f.calls) == 1


@pytest.mark.parametrize("v", vector_params("python-frame.json", "error_vectors"))
def test_malformed_frame_fed_to_interop_reader_is_a_miss(v):
    backend = Backend("memory://")
    calls = []

    def get_user(user_id):
        calls.append(user_id)
        return {"id": user_id}

    g = cache(backend=backend, namespace="users", interop="get_user")(get_user)
    backend.set(g._cachekit.key_for((42,), {}), bytes.fromhex(v["frame_hex"]))
    assert g(42) == {"id": 42}
    assert calls == [42]
