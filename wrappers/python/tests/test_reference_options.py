"""The reference decorator's options beyond the basics (cachekit-py 0.24.1):
circuit breaker, backpressure, timeouts, stale_ttl, refresh_ttl_on_get, tenancy
(deployment_uuid, single_tenant_mode, tenant_extractor), encryption fail_closed,
master-key spellings, set_default_backend, and options it refuses (fast_mode,
encryption_fail_closed). Each behaves, or is refused, as the reference does."""
from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import logging
import os
import socket
import struct
import time
from typing import Any, Optional

import pytest

import cachekit
from cachekit import Backend, ConfigurationError, DecryptionAuthenticationError, cache
from cachekit._defaults import get_default_backend, set_default_backend

from conftest import define

KEY = "3c" * 32
T1 = "550e8400-e29b-41d4-a716-446655440000"
T2 = "6ba7b810-9dad-11d1-80b4-00c04fd430c8"


def counted(**kw):
    calls = []

    def f(x):
        calls.append(x)
        return {"x": x}

    return cache(**kw)(f), calls


def spec(g) -> dict:
    st = g._cachekit
    st.core  # the first call's choice
    return st.core_spec[1]


# -- circuit breaker, backpressure, timeouts ------------------------------------

@dataclasses.dataclass(frozen=True)
class CircuitBreakerConfig:  # the reference's field names and defaults
    enabled: bool = True
    failure_threshold: int = 5
    success_threshold: int = 3
    recovery_timeout: float = 30.0
    half_open_requests: int = 3


@dataclasses.dataclass(frozen=True)
class BackpressureConfig:
    enabled: bool = True
    max_concurrent_requests: int = 100
    queue_size: int = 1000
    timeout: float = 0.1


def _closed_loopback_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # nothing listens once it is closed


def test_circuit_breaker_settings_reach_the_core_breaker():
    g, calls = counted(backend=f"redis://127.0.0.1:{_closed_loopback_port()}", ttl=60,
                       circuit_breaker=CircuitBreakerConfig(failure_threshold=2, recovery_timeout=0.5,
                                                            success_threshold=1, half_open_requests=1))
    kw = spec(g)
    assert (kw["breaker_failures"], kw["breaker_recovery_ms"], kw["breaker_successes"],
            kw["breaker_half_open_calls"]) == (2, 500, 1, 1)
    for i in range(4):
        assert g(i) == {"x": i}  # fail-open: computed
    text = g._cachekit.core.metrics_text()
    state = [ln for ln in text.splitlines() if ln.startswith("circuit_breaker_state")]
    assert state and state[0].rstrip().endswith(" 1"), text  # open after 2 failures


def test_circuit_breaker_can_be_turned_off_and_is_checked_as_the_reference_checks_it():
    g, _ = counted(backend="memory://", circuit_breaker={"enabled": False})
    assert spec(g)["breaker_disabled"] is True
    for bad in (dict(failure_threshold=0), dict(half_open_requests=1, success_threshold=2),
                dict(recovery_timeout=0)):
        with pytest.raises(ConfigurationError):
            counted(backend="memory://", circuit_breaker=CircuitBreakerConfig(**bad))
    with pytest.raises(TypeError):
        counted(backend="memory://", circuit_breaker=True)  # the reference takes only its config object


def test_backpressure_settings_reach_the_core():
    g, _ = counted(backend="memory://", backpressure=BackpressureConfig(max_concurrent_requests=7, timeout=0.25))
    assert (spec(g)["max_concurrency"], spec(g)["backpressure_wait_ms"]) == (7, 250)
    g, _ = counted(backend="memory://", backpressure=BackpressureConfig(enabled=False))
    assert spec(g)["max_concurrency"] == 0
    with pytest.raises(ConfigurationError, match="max_concurrent_requests"):
        counted(backend="memory://", backpressure=BackpressureConfig(max_concurrent_requests=0))


def test_socket_timeouts_from_the_environment(monkeypatch):
    monkeypatch.setenv("CACHEKIT_SOCKET_TIMEOUT", "0.05")
    monkeypatch.setenv("CACHEKIT_SOCKET_CONNECT_TIMEOUT", "2")
    g, _ = counted(backend="memory://")
    assert (spec(g)["command_timeout_ms"], spec(g)["connect_timeout_ms"]) == (50, 2000)
    monkeypatch.setenv("CACHEKIT_SOCKET_TIMEOUT", "soon")
    with pytest.raises(ConfigurationError, match="CACHEKIT_SOCKET_TIMEOUT"):
        counted(backend="memory://", namespace="other")


# -- freshness options ------------------------------------------------------------

def test_stale_ttl_is_refused_as_the_reference_refuses_it_without_its_hosted_backend():
    counted(backend="memory://", ttl=10, stale_ttl=0)  # the explicit opt-out
    with pytest.raises(ConfigurationError, match="SWR-capable backend"):
        counted(backend="memory://", ttl=10, stale_ttl=5)
    with pytest.raises(ConfigurationError, match="positive ttl"):
        counted(backend="memory://", stale_ttl=5)
    with pytest.raises(ConfigurationError, match="30-day"):
        counted(backend="memory://", ttl=2_592_000, stale_ttl=1)
    with pytest.raises(ConfigurationError, match="non-negative integer"):
        counted(backend="memory://", ttl=10, stale_ttl=-1)


class _DictBackend:
    """A user-defined backend (the reference's BaseBackend protocol)."""

    def __init__(self):
        self.d = {}

    def get(self, key):
        return self.d.get(key)

    def set(self, key, value, ttl=None):
        self.d[key] = value

    def delete(self, key):
        return self.d.pop(key, None) is not None

    def exists(self, key):
        return key in self.d


def test_refresh_ttl_on_get_is_checked_and_warns_for_a_user_backend(caplog):
    with pytest.raises(ConfigurationError, match="ttl_refresh_threshold"):
        counted(backend="memory://", ttl=10, refresh_ttl_on_get=True, ttl_refresh_threshold=2)
    with caplog.at_level(logging.WARNING, logger="cachekit"):
        g, calls = counted(backend="memory://", ttl=10, refresh_ttl_on_get=True, ttl_refresh_threshold=0.3)
    assert "refresh_ttl_on_get" not in caplog.text  # the core's backends refresh
    assert g(1) == g(1) and calls == [1]
    assert spec(g)["refresh_ttl_on_get"] == 0.3 and spec(g)["default_ttl"] == 10
    with caplog.at_level(logging.WARNING, logger="cachekit"):
        u, calls = counted(backend=_DictBackend(), ttl=10, refresh_ttl_on_get=True)
    assert "refresh_ttl_on_get is ignored" in caplog.text
    assert u(1) == u(1) and calls == [1]
    # No ttl, or the option off: nothing to refresh, the shared core is untouched.
    for kw in ({"refresh_ttl_on_get": True}, {"ttl": 10}):
        assert "refresh_ttl_on_get" not in spec(counted(backend="memory://", **kw)[0])


def _file_expiry(directory, key: str) -> int:
    """The expiry (Unix seconds) in a file-backend entry's header."""
    with open(os.path.join(directory, hashlib.blake2b(key.encode(), digest_size=16).hexdigest()), "rb") as fh:
        return struct.unpack(">Q", fh.read(14)[6:14])[0]


def _set_file_expiry(directory, key: str, at: int) -> None:
    with open(os.path.join(directory, hashlib.blake2b(key.encode(), digest_size=16).hexdigest()), "r+b") as fh:
        fh.seek(6)
        fh.write(struct.pack(">Q", at))


@pytest.mark.parametrize("threshold,refreshed", [(0.5, True), (0.1, False)])
def test_refresh_ttl_on_get_resets_a_due_entry_on_an_l2_hit(tmp_path, threshold, refreshed):
    # The reference's test: an L2 hit with less than ttl x threshold left gets ttl again.
    g = cache(backend=str(tmp_path), namespace="ub", ttl=100, l1=False, refresh_ttl_on_get=True,
              ttl_refresh_threshold=threshold, key=lambda x: f"k{x}")(define("f", "m"))
    key = "08f2f7a9d69d8e98-ub:k1"
    g(1)
    _set_file_expiry(tmp_path, key, int(time.time()) + 20)  # an entry with 20 s of its 100 left
    g(1)
    assert len(g.__wrapped__.calls) == 1
    left = _file_expiry(tmp_path, key) - time.time()
    assert (left > 90) if refreshed else (left < 22)


def test_refresh_ttl_on_get_off_leaves_the_ttl(tmp_path):
    g = cache(backend=str(tmp_path), namespace="ub", ttl=100, l1=False, key=lambda x: f"k{x}")(define("f", "m"))
    g(1)
    _set_file_expiry(tmp_path, "08f2f7a9d69d8e98-ub:k1", int(time.time()) + 20)
    g(1)
    assert _file_expiry(tmp_path, "08f2f7a9d69d8e98-ub:k1") - time.time() < 22


def test_the_key_registry_namespace_is_reserved():
    for ns in ("ck", "ck:reg", "ck:"):
        with pytest.raises(ConfigurationError, match="reserved"):
            counted(backend="memory://", namespace=ns)
        with pytest.raises(ConfigurationError, match="reserved"):
            counted(backend=None, namespace=ns)
    for ns in ("CK", "ck-x", "ckx", "x:ck"):  # the reference refuses exactly "ck" and "ck:*"
        counted(backend="memory://", namespace=ns)


def test_key_function_keys_start_with_the_function_identity():
    # 0.24's form: 16 hex of BLAKE3("m.f") (computed with the reference's blake3), "-", namespace, ":", key.
    backend = Backend("memory://")
    g = cache(backend=backend, namespace="ub", key=lambda x: f"k{x}")(define("f", "m"))
    g(1)
    assert backend.get("08f2f7a9d69d8e98-ub:k1") is not None
    h = cache(backend=backend, key=lambda x: f"k{x}")(define("get_user", "app.models"))
    h(2)
    assert backend.get("8e7a6053d4b7f903-default:k2") is not None


def test_a_key_function_must_return_a_str(caplog):
    g = cache(backend="memory://", key=lambda x: x)(define("f", "m"))
    with caplog.at_level(logging.WARNING, logger="cachekit"):
        g(1)
        g(1)
    assert len(g.__wrapped__.calls) == 2  # uncached, as a key the reference refuses
    assert "key function must return str" in caplog.text


def test_options_the_reference_decorator_does_not_take_are_refused():
    for name in ("fast_mode", "encryption_fail_closed"):
        with pytest.raises(TypeError, match=name):
            counted(backend="memory://", **{name: True})


# -- tenancy --------------------------------------------------------------------

def test_deployment_uuid_is_the_encryption_tenant(monkeypatch):
    b = Backend("memory://")
    g, _ = counted(backend=b, encryption=True, master_key=KEY, deployment_uuid=T1.upper(), namespace="t")
    assert spec(g)["tenant"] == T1  # canonicalised as the reference does
    monkeypatch.setenv("CACHEKIT_DEPLOYMENT_UUID", T2)
    e, _ = counted(backend=b, encryption=True, master_key=KEY, single_tenant_mode=True, namespace="t2")
    assert spec(e)["tenant"] == T2
    with pytest.raises(ConfigurationError, match="deployment_uuid"):
        counted(backend=b, encryption=True, master_key=KEY, deployment_uuid="not-a-uuid")
    with pytest.raises(ConfigurationError, match="canonical"):
        cache(backend=b, encryption=True, master_key=KEY, deployment_uuid=T1.upper(), interop="op",
              namespace="ns")(lambda x: x)


def test_entries_of_one_deployment_are_unreadable_to_another():
    b = Backend("memory://")
    calls = []

    def f(x):
        calls.append(x)
        return x * 2

    f1 = cache(backend=b, encryption=True, master_key=KEY, deployment_uuid=T1, l1=False)(f)
    f2 = cache(backend=b, encryption=True, master_key=KEY, deployment_uuid=T2, l1=False)(f)
    assert f1(4) == 8 and f1(4) == 8 and calls == [4]
    assert f2(4) == 8 and calls == [4, 4]  # same key, other tenant's keys: not authenticated, recomputed


def test_a_malformed_deployment_uuid_in_the_environment_stops_only_encrypted_caches(monkeypatch):
    monkeypatch.setenv("CACHEKIT_DEPLOYMENT_UUID", "not-a-uuid")
    g, _ = counted(backend="memory://")
    assert g(1) == {"x": 1}
    with pytest.raises(ConfigurationError, match="CACHEKIT_DEPLOYMENT_UUID"):
        counted(backend="memory://", encryption=True, master_key=KEY)


def test_interop_mode_refuses_a_tenant_extractor():
    with pytest.raises(ConfigurationError, match="tenant_extractor"):
        cache(backend="memory://", encryption=True, master_key=KEY, interop="op", namespace="ns",
              tenant_extractor=lambda a, k: T1)(lambda x: x)


def test_tenant_extractor_and_single_tenant_mode_exclude_each_other():
    with pytest.raises(ConfigurationError, match="both tenant_extractor and single_tenant_mode"):
        counted(backend="memory://", encryption=True, master_key=KEY, single_tenant_mode=True,
                tenant_extractor=lambda a, k: T1)


class ArgumentNameExtractor:  # the reference's extractor protocol: .extract(args, kwargs) -> str
    def __init__(self, name: str) -> None:
        self.name = name

    def extract(self, args: tuple, kwargs: dict) -> str:
        return kwargs[self.name]


def test_tenant_extractor_seals_each_call_under_its_tenant():
    b = Backend("memory://")
    calls = []

    @cache(backend=b, encryption=True, master_key=KEY, tenant_extractor=ArgumentNameExtractor("org"), ttl=60)
    def report(x, org):
        calls.append((x, org))
        return {"x": x, "org": org}

    assert report(1, org=T1) == {"x": 1, "org": T1}
    assert report(1, org=T1) == {"x": 1, "org": T1}
    assert report(1, org=T2) == {"x": 1, "org": T2}
    assert calls == [(1, T1), (1, T2)]
    assert report.cache_info().hits == 1 and report.cache_info().misses == 2
    # Each tenant's core holds its tenant.
    tenants = {st.core_spec[1]["tenant"] for st in report._cachekit.call.__self__.states.values()}
    assert tenants == {T1, T2}
    # A tenant that is not a UUID: run uncached, never under a shared key.
    assert report(1, org="acme") == {"x": 1, "org": "acme"}
    assert report(1, org="acme") == {"x": 1, "org": "acme"}
    assert calls[-2:] == [(1, "acme"), (1, "acme")]
    report.invalidate_cache(1, org=T1)
    report(1, org=T1)
    assert calls[-1] == (1, T1)


def test_tenant_extractor_on_a_coroutine_function():
    calls = []

    @cache(backend="memory://", encryption=True, master_key=KEY, tenant_extractor=lambda a, k: a[1])
    async def load(x, tenant):
        calls.append(tenant)
        return x

    async def main():
        assert await load(1, T1) == 1
        assert await load(1, T1) == 1
        assert await load(1, T2) == 1

    asyncio.run(main())
    assert calls == [T1, T2]


# -- encryption fail_closed -----------------------------------------------------

@dataclasses.dataclass(frozen=True)
class EncryptionConfig:
    enabled: Optional[bool] = None
    master_key: Optional[str] = None
    tenant_extractor: Any = None
    single_tenant_mode: bool = False
    deployment_uuid: Optional[str] = None
    fail_closed: Optional[bool] = None


def _tamper_all(b: Backend, g) -> None:
    key = g._cachekit.cached_key((1,), {})
    data = bytearray(b.get(key))
    data[-1] ^= 1
    b.set(key, bytes(data))


@pytest.mark.parametrize("closed", [True, False])
def test_encryption_fail_closed_from_the_nested_config(closed):
    b = Backend("memory://")
    g, calls = counted(backend=b, l1=False, encryption=EncryptionConfig(enabled=True, master_key=KEY,
                                                                        fail_closed=closed))
    g(1)
    _tamper_all(b, g)
    if closed:
        with pytest.raises(DecryptionAuthenticationError):
            g(1)
    else:
        assert g(1) == {"x": 1} and calls == [1, 1]


def test_encryption_fail_closed_from_the_environment(monkeypatch):
    monkeypatch.setenv("CACHEKIT_ENCRYPTION_FAIL_CLOSED", "true")
    b = Backend("memory://")
    g, _ = counted(backend=b, l1=False, encryption=True, master_key=KEY)
    g(1)
    _tamper_all(b, g)
    with pytest.raises(DecryptionAuthenticationError):
        g(1)


# -- master keys ------------------------------------------------------------------

def test_master_key_spellings_the_reference_reads_derive_the_same_keys(monkeypatch):
    b = Backend("memory://")
    g, calls = counted(backend=b, l1=False, encryption=True, master_key=KEY, namespace="mk")
    g(1)
    spaced = " ".join(KEY[i:i + 2] for i in range(0, 64, 2)).upper()
    h, hcalls = counted(backend=b, l1=False, encryption=True, master_key=spaced, namespace="mk")
    # h's function has g's module and qualname: the same key
    assert h(1) == {"x": 1} and hcalls == []  # read g's entry: same derived keys
    monkeypatch.setenv("CACHEKIT_MASTER_KEY", spaced)
    e, ecalls = counted(backend=b, l1=False, encryption=True, namespace="mk")
    assert e(1) == {"x": 1} and ecalls == []


@pytest.mark.parametrize("key,match", [("aa" * 31, "at least 32 bytes"), ("aa" * 48, "exactly 32"),
                                       ("0x" + "aa" * 32, "hex-encoded"), ("zz" * 32, "hex-encoded")])
def test_master_keys_the_core_cannot_take_are_refused_at_decoration(key, match):
    with pytest.raises(ConfigurationError, match=match):
        counted(backend="memory://", encryption=True, master_key=key)


# -- set_default_backend ------------------------------------------------------------

@pytest.fixture
def default_backend_reset():
    yield
    set_default_backend(None)


def test_set_default_backend_applies_at_the_first_call(default_backend_reset, tmp_path, monkeypatch):
    monkeypatch.setenv("CACHEKIT_FILE_CACHE_DIR", str(tmp_path))
    g, calls = counted(ttl=60, namespace="dflt")  # decorated before any default
    b = Backend("memory://")
    set_default_backend(b)
    assert get_default_backend() is b and cachekit.set_default_backend is set_default_backend
    assert g(1) == {"x": 1}
    assert b.get(g._cachekit.cached_key((1,), {})) is not None  # the default, not the environment's
    set_default_backend(Backend("memory://"))  # too late for g: its first call chose
    assert g(1) == {"x": 1} and calls == [1]
    g2, _ = counted(ttl=60, namespace="dflt2")
    assert g2._cachekit.core_spec[1]["backend"] is get_default_backend()


def test_set_default_backend_refuses_what_backend_refuses(default_backend_reset):
    with pytest.raises(ConfigurationError):
        set_default_backend("")
    with pytest.raises(TypeError):
        set_default_backend(42)


# -- config= with nested objects -------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class L1CacheConfig:
    enabled: bool = True
    max_size_mb: Optional[int] = None
    swr_enabled: bool = True
    swr_threshold_ratio: float = 0.5


@dataclasses.dataclass(frozen=True)
class DecoratorConfig:
    ttl: Optional[int] = None
    namespace: Optional[str] = None
    backend: Any = None
    l1: L1CacheConfig = dataclasses.field(default_factory=L1CacheConfig)
    encryption: EncryptionConfig = dataclasses.field(default_factory=EncryptionConfig)
    circuit_breaker: CircuitBreakerConfig = dataclasses.field(default_factory=CircuitBreakerConfig)
    backpressure: BackpressureConfig = dataclasses.field(default_factory=BackpressureConfig)


def test_config_with_nested_objects_is_honoured():
    b = Backend("memory://")
    cfg = DecoratorConfig(ttl=30, namespace="cfg", backend=b,
                          l1=L1CacheConfig(enabled=False, swr_enabled=False),
                          encryption=EncryptionConfig(enabled=True, master_key=KEY, deployment_uuid=T1),
                          circuit_breaker=CircuitBreakerConfig(failure_threshold=9),
                          backpressure=BackpressureConfig(max_concurrent_requests=3))
    g, calls = counted(config=cfg)
    kw = spec(g)
    assert (kw["l1"], kw["swr"], kw["encryption"], kw["tenant"]) == (False, False, True, T1)
    assert (kw["breaker_failures"], kw["max_concurrency"]) == (9, 3)
    g(1)
    stored = b.get(g._cachekit.cached_key((1,), {}))
    assert stored is not None and b"plaintext" not in stored
    assert g(1) == {"x": 1} and calls == [1]


def test_an_unknown_field_of_a_nested_mapping_is_refused():
    with pytest.raises(TypeError, match="unexpected encryption field"):
        counted(backend="memory://", encryption={"enabled": True, "master_key": KEY, "bogus": 1})


@pytest.mark.parametrize("backend", [None, "memory://"], ids=["object-mode", "l2-mode"])
def test_config_l1_swr_settings_are_honoured_in_every_mode(backend):
    off, _ = counted(config=DecoratorConfig(backend=backend, l1=L1CacheConfig(swr_enabled=False)))
    on, _ = counted(config=DecoratorConfig(backend=backend, l1=L1CacheConfig(swr_threshold_ratio=0.25)))
    assert off._cachekit.swr_enabled is False
    assert on._cachekit.swr_enabled is True and on._cachekit.swr_ratio == 0.25
    if backend is not None:
        # With an L2 the L1 config's SWR is the reference's L1-only mode's: no refresh ahead of
        # expiry there (0.24); this wrapper's opt-in is stale_while_revalidate=True.
        assert spec(off)["swr"] is False and spec(on)["swr"] is False
        opted, _ = counted(config=DecoratorConfig(backend=backend, l1=L1CacheConfig(swr_threshold_ratio=0.25)),
                           stale_while_revalidate=True)
        assert spec(opted)["swr"] is True and spec(opted)["swr_threshold_ratio"] == 0.25
