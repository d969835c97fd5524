"""`python3 -m cachekit.harness` (wrapper-harness.md) over interop-mode.json, row by row.

One harness process answers every request (key, value, error, reader and encryption
rows, fed as they are in the file's tagged JSON); each test checks its row's answer.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conftest import PKG_ROOT, load_vectors, vector_params

FILE = "interop-mode.json"


def _requests() -> list[dict]:
    data = load_vectors(FILE) or {}
    reqs = []
    for v in data.get("key_vectors", []):
        reqs.append({"id": "key:" + v["name"], "op": "key.interop.typed", "namespace": v["namespace"],
                     "operation": v["operation"], "args_json": v["args"]})
    for v in data.get("error_vectors", []):
        reqs.append({"id": "error:" + v["name"], "op": "key.interop.typed",
                     "namespace": v.get("namespace", "users"), "operation": v.get("operation", "get_user"),
                     "args_json": v["args"]})
    for v in data.get("value_vectors", []):
        reqs.append({"id": "value:" + v["name"], "op": "value.encode", "value_json": v["value"]})
        reqs.append({"id": "value-back:" + v["name"], "op": "value.decode", "data": v["canonical_msgpack_hex"]})
    for v in data.get("reader_accept_vectors", []) + data.get("reader_reject_vectors", []):
        reqs.append({"id": "reader:" + v["name"], "op": "value.decode", "data": v["input_hex"]})
    for v in data.get("encryption_vectors", []):
        reqs.append({"id": "decrypt:" + v["name"], "op": "crypto.decrypt", "master_key": v["master_key_hex"],
                     "tenant": v["tenant_id"], "aad": v["aad_hex"], "ciphertext": v["ciphertext_hex"]})
    return reqs


@pytest.fixture(scope="module")
def answers() -> dict:
    reqs = _requests()
    lines = "".join(json.dumps(r) + "\n" for r in reqs) + "not json\n" + '{"id": "last", "op": "nope"}\n'
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)  # the same cachekit as these tests
    proc = subprocess.run([sys.executable, "-m", "cachekit.harness"], input=lines, capture_output=True,
                          text=True, env=env, cwd=PKG_ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = [json.loads(ln) for ln in proc.stdout.splitlines()]
    assert len(out) == len(reqs) + 2, proc.stderr
    assert out[-2]["ok"] is False and out[-2]["error"] == "BadRequest"  # a bad line does not stop it
    assert out[-1] == {"id": "last", "ok": False, "error": "BadRequest", "message": out[-1]["message"]}
    return {a["id"]: a for a in out[:-2]}


@pytest.mark.parametrize("v", vector_params(FILE, "key_vectors"))
def test_harness_key_row(v, answers):
    a = answers["key:" + v["name"]]
    assert a["ok"], a
    assert a["key"] == v["expected_key"]


@pytest.mark.parametrize("v", vector_params(FILE, "error_vectors"))
def test_harness_error_row(v, answers):
    a = answers["error:" + v["name"]]
    assert a["ok"] is False, a
    # the core's names for a refused segment or argument value
    assert a["error"] in ("InvalidSegment", "UnsupportedType", "InvalidArgument"), a


@pytest.mark.parametrize("v", vector_params(FILE, "value_vectors"))
def test_harness_value_row(v, answers):
    enc = answers["value:" + v["name"]]
    assert enc["ok"], enc
    assert enc["data"] == v["canonical_msgpack_hex"]
    back = answers["value-back:" + v["name"]]
    assert back["ok"], back
    if v["name"] == "datetime_sentinel_value":  # the sentinel map is revived as a datetime
        assert list(back["value_json"]) == ["$datetime"]
    else:
        assert back["value_json"] == _canonical_json(v["value"])


def _canonical_json(v):
    """Tagged JSON as the harness writes it back ($float spelled by repr)."""
    if isinstance(v, dict):
        if len(v) == 1 and "$float" in v:
            return {"$float": repr(float(v["$float"]))}
        return {k: _canonical_json(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_canonical_json(x) for x in v]
    return v


@pytest.mark.parametrize("v", vector_params(FILE, "reader_accept_vectors"))
def test_harness_reader_accept_row(v, answers):
    a = answers["reader:" + v["name"]]
    if "value" in v:
        assert a["ok"], a
        assert a["value_json"] == _canonical_json(v["value"])
    else:  # no tagged-JSON form ({1: 42}, an ext type): decoded, then refused as JSON
        assert a["ok"] or (a["error"] == "UnsupportedType" and a["message"].startswith("decoded, but")), a


@pytest.mark.parametrize("v", vector_params(FILE, "reader_reject_vectors"))
def test_harness_reader_reject_row(v, answers):
    a = answers["reader:" + v["name"]]
    assert a["ok"] is False and a["error"] == "TrailingBytes", a


@pytest.mark.parametrize("v", vector_params(FILE, "encryption_vectors"))
def test_harness_decrypt_row(v, answers):
    a = answers["decrypt:" + v["name"]]
    assert a["ok"], a
    assert a["plaintext"] == v["plaintext_hex"] and a["key_index"] == 0


def test_harness_refuses_values_outside_the_interop_model():
    """Tags that key as arguments but are not interop values: UnsupportedType."""
    rows = [{"$set": [1, 2]}, {"tags": {"$set": ["a"]}}, {"$uuid": "550e8400-e29b-41d4-a716-446655440000"},
            {"$float": "nan"}, {"$float": "1e999"}, [{"$float": "-1e999"}]]
    lines = "".join(json.dumps({"id": i, "op": "value.encode", "value_json": r}) + "\n" for i, r in enumerate(rows))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    proc = subprocess.run([sys.executable, "-m", "cachekit.harness"], input=lines, capture_output=True,
                          text=True, env=env, cwd=PKG_ROOT, timeout=120)
    out = [json.loads(ln) for ln in proc.stdout.splitlines()]
    assert [a["id"] for a in out] == list(range(len(rows))), proc.stderr
    for a in out:
        assert a["ok"] is False and a["error"] == "UnsupportedType", a
