"""The canonical presets' contract, which no vector holds (the protocol's
intent-presets rules; tests/conformance/requirement_coverage.json names each
test here): finite default TTLs that explicit arguments override, no
process-wide TTL switch, the L1 and reliability postures, no further name for
secure, and CACHEKIT_MASTER_KEY never changing a preset's encryption. The io
preset needs the hosted HTTP backend, which libcachekit does not build."""
from __future__ import annotations

import os
import re
import socket

import pytest

from conftest import REPO_ROOT
from cachekit import Backend, ConfigurationError, cache

KEY = "ab" * 32
# The protocol's Canonical Preset Table (io aside).
CANONICAL_TTL = {"minimal": 300, "production": 600, "secure": 600}
SDK_LOCAL = ("dev", "test", "local")


def _fn(x):
    return {"x": x}


def _preset(name, **kw):
    if name == "secure":
        kw.setdefault("master_key", KEY)
    if name != "local":
        kw.setdefault("backend", "memory://")
    return getattr(cache, name)(**kw)(_fn)


def _core_options(g) -> dict:
    g._cachekit.core  # built at the first use
    return g._cachekit.core_spec[1]


@pytest.mark.parametrize("name", sorted(CANONICAL_TTL))
def test_canonical_presets_default_to_their_finite_ttl(name):
    g = _preset(name)
    assert g._cachekit.ttl == CANONICAL_TTL[name]
    assert g._cachekit.core_ttl == CANONICAL_TTL[name]  # what the core stores with


@pytest.mark.parametrize("name", sorted(CANONICAL_TTL) + list(SDK_LOCAL))
def test_no_preset_defaults_to_no_expiry(name):
    ttl = _preset(name)._cachekit.ttl
    assert ttl is not None and 0 < ttl < float("inf")


@pytest.mark.parametrize("name", sorted(CANONICAL_TTL))
def test_explicit_arguments_win_over_the_preset(name):
    assert _preset(name, ttl=7)._cachekit.ttl == 7
    g = _preset(name, ttl=9, namespace="mine")
    assert g._cachekit.ttl == 9 and g._cachekit.namespace == "mine"
    assert _core_options(_preset(name, swr_enabled=False))["swr"] is False


# (secure keeps integrity and encryption on whatever it is given: see the
# PRE-48 note in requirement_coverage.json.)
@pytest.mark.parametrize("name", ["minimal", "production"])
def test_an_explicit_integrity_choice_wins_over_the_preset(name):
    default = _preset(name)._cachekit.integrity
    assert _core_options(_preset(name, integrity_checking=not default))["integrity"] is (not default)


def test_no_environment_variable_sets_a_default_ttl():
    """Every CACHEKIT_ variable the wrapper or the core reads; none is a TTL switch."""
    names = set()
    for top in (os.path.join(REPO_ROOT, "wrappers", "python", "cachekit"), os.path.join(REPO_ROOT, "src")):
        for dirpath, _dirs, files in os.walk(top):
            for f in files:
                if f.endswith((".py", ".c", ".cpp", ".hpp", ".h")):
                    with open(os.path.join(dirpath, f), encoding="utf-8", errors="replace") as fh:
                        names |= set(re.findall(r'"(CACHEKIT_[A-Z0-9_]+)"', fh.read()))
    assert "CACHEKIT_MASTER_KEY" in names  # the scan sees the variables that exist
    assert not [n for n in names if "TTL" in n or "EXPIR" in n]


@pytest.mark.parametrize("name", ["minimal", "production", "secure"])
def test_canonical_presets_keep_l1_on(name):
    assert _core_options(_preset(name))["l1"] is True


def test_minimal_serves_no_stale_entries_by_default():
    assert _core_options(_preset("minimal"))["swr"] is False


def test_secure_stores_only_ciphertext():
    backend = Backend("memory://")
    g = _preset("secure", backend=backend, namespace="sec")
    assert _core_options(g)["encryption"] is True
    assert g("plaintext-marker") == {"x": "plaintext-marker"}
    stored = backend.get(g._cachekit.key_for(("plaintext-marker",), {}))
    assert b'"encrypted": true' in stored and b"plaintext-marker" not in stored


@pytest.mark.parametrize("name", ["production", "secure"])
def test_production_and_secure_ship_the_circuit_breaker_on(name):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens once it is closed
    kw = {} if name == "secure" else {"encryption": False}
    g = _preset(name, backend=f"redis://127.0.0.1:{port}/0", **kw)
    for i in range(12):
        assert g(i) == {"x": i}  # the backend is down: computed (fail-open)
    state = [ln for ln in g._cachekit.core.metrics_text().splitlines() if ln.startswith("circuit_breaker_state")]
    assert state and state[0].rstrip().endswith(" 1")  # opened by the default breaker


def test_secure_has_no_further_name():
    assert not hasattr(cache, "encrypted")
    with pytest.raises(ConfigurationError):
        cache(backend="memory://", serializer="encrypted")(_fn)


@pytest.mark.parametrize("name", ["minimal", "production"])
def test_master_key_in_the_environment_never_changes_a_preset(name, monkeypatch):
    monkeypatch.setenv("CACHEKIT_MASTER_KEY", KEY)
    with pytest.raises(ConfigurationError) as ei:
        _preset(name)  # no intent stated: refused, never silently encrypting or plain
    assert "encryption=True" in str(ei.value) and "secure" in str(ei.value)
    backend = Backend("memory://")
    g = _preset(name, backend=backend, namespace="plain", encryption=False)
    assert g(1) == {"x": 1}
    stored = backend.get(g._cachekit.key_for((1,), {}))
    assert stored.startswith(b"CK\x03") and b'"encrypted"' not in stored


def test_sdk_local_presets_keep_their_own_names():
    for name in SDK_LOCAL:
        assert name not in CANONICAL_TTL and callable(getattr(cache, name))
    # The canonical names keep the canonical meaning (checked above); secure
    # is the only encrypting one.
    assert [n for n in ("minimal", "production", "dev", "test") if _core_options(_preset(n))["encryption"]] == []


def _doc(name: str) -> str:
    with open(os.path.join(REPO_ROOT, "docs", name), encoding="utf-8") as f:
        return " ".join(f.read().split())


def test_docs_say_what_a_preset_does_when_the_backend_is_down():
    assert "A backend that is down makes calls compute and return (fail-open)" in _doc("python.md")


def test_docs_say_dev_test_and_local_are_sdk_local_presets():
    # PRE-55: the SDK-local presets sit in the same table as the protocol's.
    text = _doc("python.md")
    assert "The protocol's presets are `minimal`, `production`, `secure` and `io`." in text
    assert ("`cache.dev`, `cache.test` and `cache.local` are SDK-local presets, kept from the reference Python SDK: "
            "they are not part of the protocol's presets") in text


def test_docs_recommend_exactly_32_byte_keys():
    assert "Master keys as hex are exactly 64 hex digits" in _doc("codec.md")
    assert "protocol.md section 6 pins exactly 32" in _doc("python.md")
