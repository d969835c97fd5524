"""Encryption on/off, tampering, fail-closed."""
from __future__ import annotations

import pytest

from cachekit import Backend, DecryptionAuthenticationError, IntegrityError, CacheKitError, cache

KEY = "0f" * 32


def make(backend, **kw):
    calls = []

    def get_secret(x):
        calls.append(x)
        return {"secret": "plaintext-marker", "x": x}

    return cache(backend=backend, namespace="sec", **kw)(get_secret), calls


def test_encryption_round_trip_and_no_plaintext_stored():
    b = Backend("memory://")
    g, calls = make(b, encryption=True, master_key=KEY)
    assert g(1)["x"] == 1
    assert g(1)["x"] == 1
    raw = b.get(g._cachekit.key_for((1,), {}))
    assert b"plaintext-marker" not in raw
    assert b'"encrypted": true' in raw
    assert len(calls) == 1


def test_encryption_off_stores_plaintext_frame():
    b = Backend("memory://")
    g, _ = make(b, l1=False)
    g(1)
    raw = b.get(g._cachekit.key_for((1,), {}))
    assert raw.startswith(b"CK\x03")
    assert b'"encrypted"' not in raw


def test_secure_preset_with_master_key():
    b = Backend("memory://")
    g, calls = make(b)  # plain writer
    s = cache.secure(backend=b, namespace="sec", master_key=KEY, l1=False)(g.__wrapped__)
    s(1)
    s(1)
    raw = b.get(s._cachekit.key_for((1,), {}))
    assert b"plaintext-marker" not in raw


@pytest.mark.parametrize("where", ["ciphertext", "fingerprint", "encrypted_flag"])
def test_tampered_entry_is_a_miss_fail_open(where):
    b = Backend("memory://")
    g, calls = make(b, encryption=True, master_key=KEY, l1=False)
    g(1)
    key = g._cachekit.key_for((1,), {})
    raw = bytearray(b.get(key))
    if where == "ciphertext":
        raw[-3] ^= 0x01
    elif where == "fingerprint":
        i = raw.index(b'"key_fingerprint": "') + len(b'"key_fingerprint": "')
        raw[i] = ord("0") if raw[i] != ord("0") else ord("1")
    else:  # the (unauthenticated) header claims plaintext: never a downgrade
        i = raw.index(b'"encrypted": true')
        raw[i:i + 17] = b'"encrypted": null'

    b.set(key, bytes(raw))
    assert g(1)["x"] == 1
    assert len(calls) == 2  # recomputed
    st = g._cachekit.core.stats(b"sec")
    assert st["tampered"] + st["corrupt"] + st["wrong_key"] + st["downgrade"] >= 1


def test_tampered_entry_fail_closed_raises():
    b = Backend("memory://")
    g, calls = make(b, encryption=True, master_key=KEY, l1=False, fail_closed=True)
    g(1)
    key = g._cachekit.key_for((1,), {})
    raw = bytearray(b.get(key))
    raw[-3] ^= 0x01
    b.set(key, bytes(raw))
    with pytest.raises(CacheKitError):
        g(1)
    assert b.get(key) == bytes(raw)  # kept for inspection


def test_plaintext_entry_refused_under_encryption():
    b = Backend("memory://")
    plain, _ = make(b, l1=False)
    plain(1)
    enc, calls = make(b, encryption=True, master_key=KEY, l1=False)
    assert enc(1)["x"] == 1
    assert len(calls) == 1  # the plaintext entry was not accepted (no downgrade)
    st = enc._cachekit.core.stats(b"sec")
    assert st["downgrade"] >= 1


def test_integrity_tamper_plain():
    b = Backend("memory://")
    g, calls = make(b, l1=False)
    g(1)
    key = g._cachekit.key_for((1,), {})
    raw = bytearray(b.get(key))
    raw[-12] ^= 0x40
    b.set(key, bytes(raw))
    assert g(1)["x"] == 1
    assert len(calls) == 2


def test_wrong_master_key_is_a_miss():
    b = Backend("memory://")
    g, _ = make(b, encryption=True, master_key=KEY, l1=False)
    g(1)
    h, calls = make(b, encryption=True, master_key="1e" * 32, l1=False)
    assert h(1)["x"] == 1
    assert len(calls) == 1
