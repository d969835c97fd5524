"""Encryption on/off, tampering, fail-closed."""
from __future__ import annotations

import os
import warnings

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


def _flatten(value):
    if isinstance(value, (tuple, list)):
        for v in value:
            yield from _flatten(v)
    else:
        yield value


def test_shared_cores_are_not_keyed_by_the_hex_master_key(monkeypatch):
    # Cores are shared by configuration: the master key (given or from the
    # environment, str or bytes) is part of that identity only as a keyed digest.
    from cachekit import _cores
    env_key = "1e" * 32
    monkeypatch.setenv("CACHEKIT_MASTER_KEY", env_key)
    b = Backend("memory://")
    g, _ = make(b, encryption=True, master_key=KEY)
    h, _ = make(b, encryption=True, master_key=bytes.fromhex("2d" * 32))
    g(1)
    h(1)
    secrets = {KEY, KEY.upper(), "2d" * 32, env_key}
    for cfg in _cores._handles:
        for part in _flatten(cfg):
            text = part.hex() if isinstance(part, bytes) else str(part)
            assert not any(s in text or s in str(part) for s in secrets), cfg
    # Same key, same core; another key, another core.
    g2, _ = make(b, encryption=True, master_key=KEY)
    assert g2._cachekit.core is g._cachekit.core
    assert h._cachekit.core is not g._cachekit.core


def _nonce_of(frame: bytes) -> bytes:
    # CK v3: "CK" 03 u32be(header length) header, then nonce(12) || ciphertext || tag.
    offset = 7 + int.from_bytes(frame[3:7], "big")
    return frame[offset:offset + 12]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
def test_forked_workers_never_repeat_a_nonce(tmp_path):
    # A prefork server: the decorated function (and its keyring) exists before
    # the workers fork; each worker then writes its own entries.
    b = Backend("file://" + str(tmp_path))
    g, _ = make(str(tmp_path), encryption=True, master_key=KEY, l1=False)
    g(-1)  # the parent seals first: its children inherit a live counter
    workers, per_worker = 3, 200
    pids = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # fork() with threads present
        for w in range(1, workers + 1):
            pid = os.fork()
            if pid == 0:
                code = 1
                try:
                    for i in range(per_worker):
                        g(w * 1000 + i)
                    code = 0
                finally:
                    os._exit(code)
            pids.append(pid)
    for i in range(per_worker):
        g(i)
    for pid in pids:
        _, status = os.waitpid(pid, 0)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    nonces = []
    for w in range(workers + 1):
        for i in range(per_worker):
            raw = b.get(g._cachekit.key_for((w * 1000 + i,), {}))
            assert raw is not None
            nonces.append(_nonce_of(raw))
    assert len(set(nonces)) == len(nonces)
