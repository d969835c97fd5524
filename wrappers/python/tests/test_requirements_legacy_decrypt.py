"""PRE-37 / PRE-42: cache(encryption=False) with a master key present reads
an encrypted entry an encrypting peer wrote, as cachekit-py 0.21+ does (its
legacy-decrypt read), rather than recomputing it; its own writes stay
plaintext, since a master key is a key source and never an activation switch."""
from __future__ import annotations

import pytest

from cachekit import Backend, cache

KEY = "3c" * 32


def _pair(backend, reader_kw):
    """An encrypting writer and a reader with `reader_kw`, one function's keys."""
    calls = []

    def lookup(x):
        calls.append(x)
        return {"x": x, "marker": "plaintext-marker"}

    writer = cache(backend=backend, namespace="drift", l1=False, encryption=True, master_key=KEY)(lookup)
    reader = cache(backend=backend, namespace="drift", l1=False, **reader_kw)(lookup)
    return writer, reader, calls


@pytest.mark.parametrize("where", ["env", "argument"])
def test_encryption_off_reads_a_peers_encrypted_entry(monkeypatch, where):
    monkeypatch.delenv("CACHEKIT_PREVIOUS_MASTER_KEYS", raising=False)
    if where == "env":
        monkeypatch.setenv("CACHEKIT_MASTER_KEY", KEY)
        reader_kw = {"encryption": False}
    else:
        monkeypatch.delenv("CACHEKIT_MASTER_KEY", raising=False)
        reader_kw = {"encryption": False, "master_key": KEY}
    b = Backend("memory://")
    writer, reader, calls = _pair(b, reader_kw)
    assert writer._cachekit.key_for((1,), {}) == reader._cachekit.key_for((1,), {})
    assert writer(1)["x"] == 1
    assert b'"encrypted": true' in b.get(writer._cachekit.key_for((1,), {}))
    assert reader(1) == {"x": 1, "marker": "plaintext-marker"}
    assert calls == [1]  # decrypted, not recomputed


def test_encryption_off_with_env_key_still_writes_plaintext(monkeypatch):
    monkeypatch.setenv("CACHEKIT_MASTER_KEY", KEY)
    b = Backend("memory://")
    _, reader, calls = _pair(b, {"encryption": False})
    reader(2)
    raw = b.get(reader._cachekit.key_for((2,), {}))
    assert b"plaintext-marker" in raw
    assert b'"encrypted"' not in raw
    assert reader(2)["x"] == 2
    assert calls == [2]


def test_encryption_off_without_a_key_recomputes(monkeypatch):
    monkeypatch.delenv("CACHEKIT_MASTER_KEY", raising=False)
    b = Backend("memory://")
    writer, reader, calls = _pair(b, {"encryption": False})
    writer(3)
    assert reader(3)["x"] == 3
    assert calls == [3, 3]
