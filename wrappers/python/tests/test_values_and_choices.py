"""Round trips that never poison, and the reference's decoration-time refusals."""
from __future__ import annotations

import asyncio
import logging

import msgpack
import pytest

from cachekit import Backend, ConfigurationError, cache

KEY = "ab" * 32


def _counter():
    calls = []

    def f(x):
        calls.append(x)
        return {(1, 2): "tuple key", "n": len(calls)}

    f.calls = calls
    return f


def test_a_value_that_would_not_read_back_is_not_stored(caplog):
    """A dict with tuple keys packs, but does not unpack (unhashable list
    keys): it is returned uncached, with a warning, never stored."""
    backend = Backend("memory://")
    f = _counter()
    g = cache(backend=backend, namespace="poison")(f)
    with caplog.at_level(logging.WARNING, logger="cachekit"):
        assert g(1) == {(1, 2): "tuple key", "n": 1}
    assert g(1)["n"] == 2  # computed again: nothing stored
    assert backend.get(g._cachekit.key_for((1,), {})) is None
    assert "runs uncached" in caplog.text


def test_a_stored_value_that_fails_to_decode_is_a_miss_and_is_replaced(caplog):
    backend = Backend("memory://")
    calls = []

    @cache(backend=backend, namespace="unread", l1=False)
    def g(x):
        calls.append(x)
        return {"n": len(calls)}

    g(1)
    key = g._cachekit.cached_key((1,), {})
    # Another writer stored a map with an array key (it packs, but does not unpack).
    bad = msgpack.packb({(1, 2): "x"}, use_bin_type=True)
    g._cachekit.core.put(g._cachekit.ns_bytes, key, bad, 0.0)
    with caplog.at_level(logging.WARNING, logger="cachekit"):
        assert g(1) == {"n": 2}  # a miss: recomputed
    assert "could not be read" in caplog.text
    assert g(1) == {"n": 2}  # ... and replaced: a hit now
    assert len(calls) == 2


def test_async_unreadable_value_is_a_miss():
    backend = Backend("memory://")
    calls = []

    @cache(backend=backend, namespace="aunread")
    async def g(x):
        calls.append(x)
        return {"n": len(calls)}

    async def main():
        await g(1)
        key = g._cachekit.cached_key((1,), {})
        g._cachekit.core.put(g._cachekit.ns_bytes, key, msgpack.packb({(1, 2): "x"}, use_bin_type=True), 0.0)
        assert await g(1) == {"n": 2}
        assert await g(1) == {"n": 2}

    asyncio.run(main())
    assert len(calls) == 2


def test_env_master_key_without_an_encryption_choice_is_refused(monkeypatch):
    monkeypatch.setenv("CACHEKIT_MASTER_KEY", KEY)
    for deco in (cache, cache.production):
        with pytest.raises(ConfigurationError, match="encryption"):
            deco(backend="memory://")(lambda x: x)
    # An explicit choice either way is accepted.
    backend = Backend("memory://")
    plain = cache(backend=backend, namespace="plain", encryption=False)(lambda x: {"x": x})
    plain(1)
    assert b'"encrypted"' not in backend.get(plain._cachekit.key_for((1,), {}))
    sealed = cache(backend=backend, namespace="sealed", encryption=True)(lambda x: {"x": x})
    assert sealed(1) == {"x": 1}
    assert cache.secure(backend="memory://")(lambda x: x)(2) == 2
    # Object mode stores nothing outside the process: no choice needed.
    assert cache(backend=None)(lambda x: x)(3) == 3


def test_master_key_argument_without_an_encryption_choice_is_refused():
    with pytest.raises(ConfigurationError, match="encryption"):
        cache(backend="memory://", master_key=KEY)(lambda x: x)


def test_encryption_with_the_auto_serializer_is_refused():
    with pytest.raises(ConfigurationError, match="auto"):
        cache(backend="memory://", encryption=True, master_key=KEY, serializer="auto")(lambda x: x)


@pytest.mark.parametrize("mb", [-1, 0, float("nan"), "10", True])
def test_bad_l1_budget_is_refused_at_decoration(mb):
    with pytest.raises(ValueError, match="l1_max_size_mb"):
        cache(backend=None, l1_max_size_mb=mb)(lambda x: x)


@pytest.mark.parametrize("ttl,error", [(0, ValueError), (None, TypeError)])
def test_local_without_a_ttl_is_refused(ttl, error):
    with pytest.raises(error, match="ttl"):
        cache.local(ttl=ttl)(lambda x: x)


@pytest.mark.parametrize("backend", ["", "  "])
def test_empty_backend_is_refused_not_a_file_cache_here(backend):
    with pytest.raises(ConfigurationError, match="empty"):
        cache(backend=backend)(lambda x: x)


def test_nested_config_objects_are_read_field_by_field():
    """config=DecoratorConfig(...) with the reference's nested EncryptionConfig and
    L1CacheConfig: their fields, not bool(obj)."""
    from dataclasses import dataclass, field

    @dataclass
    class L1CacheConfig:
        enabled: bool = True
        max_size_mb: float | None = None
        swr_enabled: bool = True
        swr_threshold_ratio: float = 0.5

    @dataclass
    class EncryptionConfig:
        enabled: bool | None = None
        master_key: str | None = None

    @dataclass
    class DecoratorConfig:
        ttl: int = 60
        backend: object = "memory://"
        l1: L1CacheConfig = field(default_factory=L1CacheConfig)
        encryption: EncryptionConfig = field(default_factory=EncryptionConfig)

    plain = cache(config=DecoratorConfig(l1=L1CacheConfig(enabled=False, swr_enabled=False)))(lambda x: x)
    st = plain._cachekit
    assert st.swr_enabled is False and st.core_spec[1]["l1"] is False and st.core_spec[1]["encryption"] is False

    backend = Backend("memory://")
    sealed = cache(config=DecoratorConfig(backend=backend, encryption=EncryptionConfig(enabled=True, master_key=KEY)),
                   namespace="nested")(lambda x: {"x": x})
    assert sealed(1) == {"x": 1}
    assert b'"encrypted":true' in backend.get(sealed._cachekit.key_for((1,), {})).replace(b" ", b"")


def test_nested_option_not_supported_is_refused():
    with pytest.raises(ConfigurationError, match="deployment_uuid"):
        cache(backend="memory://", encryption={"enabled": True, "master_key": KEY, "deployment_uuid": "x"})(
            lambda x: x)
