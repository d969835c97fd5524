"""encryption.json's master-key rows through the secure preset itself
(tests/conformance/requirement_coverage.json, PRE-16 to PRE-25, PRE-27): the
sealed entries of the master_key_input and default_tenant sets are interop
entries under tenant "default", so cache.secure given only the row's hex
string (as an argument, or only in CACHEKIT_MASTER_KEY) and no tenant must
read each one; and it must refuse each reject row, and every length but 32
bytes, wherever the key comes from."""
from __future__ import annotations

import pytest

from conftest import load_vectors
from cachekit import Backend, ConfigurationError, cache

ENC = load_vectors("encryption.json")


def _sealed_rows():
    if ENC is None:
        return [pytest.param(None, marks=pytest.mark.skip(reason="encryption.json not found"), id="vectors-missing")]
    rows = [dict(r) for r in ENC["master_key_input"]["accept_vectors"]]
    rows += [dict(r, master_key_hex=ENC["master_key_hex"]) for r in ENC["default_tenant"]["vectors"]]
    return [pytest.param(r, id=r["name"]) for r in rows]


def _reject_rows():
    if ENC is None:
        return [pytest.param(None, marks=pytest.mark.skip(reason="encryption.json not found"), id="vectors-missing")]
    return [pytest.param(r, id=r["name"]) for r in ENC["master_key_input"]["reject_vectors"]]


def _fn(*args):
    raise AssertionError("the sealed entry must be served")


def _read_through_secure(row, **key):
    backend = Backend("memory://")
    backend.set(row["cache_key"], bytes.fromhex(row["ciphertext_hex"]))
    ns, op, _ = row["cache_key"].split(":")
    g = cache.secure(backend=backend, namespace=ns, interop=op, l1=False, **key)(_fn)
    data, _info = g._cachekit.core.get(ns.encode(), row["cache_key"].encode())
    return data


@pytest.mark.parametrize("row", _sealed_rows())
def test_secure_reads_each_sealed_row_from_its_hex_string(row):
    assert bytes(_read_through_secure(row, master_key=row["master_key_hex"])) == bytes.fromhex(row["plaintext_hex"])


@pytest.mark.parametrize("row", _sealed_rows())
def test_secure_reads_each_sealed_row_with_the_key_only_in_the_environment(row, monkeypatch):
    monkeypatch.setenv("CACHEKIT_MASTER_KEY", row["master_key_hex"])
    assert bytes(_read_through_secure(row)) == bytes.fromhex(row["plaintext_hex"])


def test_secure_reads_default_tenant_interop_through_the_function():
    row = ENC["default_tenant"]["vectors"][0]
    backend = Backend("memory://")
    backend.set(row["cache_key"], bytes.fromhex(row["ciphertext_hex"]))

    def get_user(user_id):
        raise AssertionError("the sealed entry must be served")
    g = cache.secure(backend=backend, namespace="users", interop="get_user", master_key=ENC["master_key_hex"],
                     l1=False)(get_user)
    assert g(42) == {"age": 30, "name": "alice"}


@pytest.mark.parametrize("row", _reject_rows())
def test_secure_refuses_each_reject_row_wherever_the_key_comes_from(row, monkeypatch):
    with pytest.raises((ConfigurationError, ValueError)):
        cache.secure(backend="memory://", master_key=row["master_key_hex"])(_fn)
    monkeypatch.setenv("CACHEKIT_MASTER_KEY", row["master_key_hex"])
    with pytest.raises((ConfigurationError, ValueError)):
        cache.secure(backend="memory://")(_fn)


@pytest.mark.parametrize("n", [n for n in range(1, 41) if n != 32])
def test_secure_refuses_every_length_but_32_bytes(n, monkeypatch):
    with pytest.raises((ConfigurationError, ValueError)):
        cache.secure(backend="memory://", master_key="5a" * n)(_fn)
    monkeypatch.setenv("CACHEKIT_MASTER_KEY", "5a" * n)
    with pytest.raises((ConfigurationError, ValueError)):
        cache.secure(backend="memory://")(_fn)
    assert cache.secure(backend="memory://", master_key="5a" * 32)(lambda x: x)(1) == 1
