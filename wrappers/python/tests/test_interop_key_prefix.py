"""Interop mode refuses a key-prefixing backend at decoration time, as the reference
cachekit-py 0.24.1 does (interop.ensure_interop_backend_compatible: a truthy
`key_prefix` or `_key_prefix` attribute -> ConfigurationError): such a backend
stores `app:ns:op:hash` on its wire, a key no other SDK reads."""
from __future__ import annotations

import pytest

from cachekit import ConfigurationError, cache, set_default_backend


class DictBackend:
    """The reference's BaseBackend protocol over a dict."""

    def __init__(self) -> None:
        self.data: dict = {}

    def get(self, key):
        return self.data.get(key)

    def set(self, key, value, ttl=None):
        self.data[key] = value

    def delete(self, key):
        return self.data.pop(key, None) is not None


class PrefixedBackend(DictBackend):
    key_prefix = "app:"


class PrivatePrefixedBackend(DictBackend):
    _key_prefix = "app:"


class EmptyPrefixBackend(DictBackend):
    key_prefix = ""


def get_user(user_id):
    return {"id": user_id}


@pytest.mark.parametrize("backend_cls", [PrefixedBackend, PrivatePrefixedBackend])
def test_prefixing_backend_refused_at_decoration(backend_cls):
    with pytest.raises(ConfigurationError, match="key-prefixing backend"):
        cache(backend=backend_cls(), namespace="users", interop="get_user")(get_user)


def test_prefixing_default_backend_refused_before_any_store():
    """A default backend is chosen at the first call: checked then, before anything is stored."""
    b = PrefixedBackend()
    g = cache(namespace="users", interop="get_user")(get_user)
    set_default_backend(b)
    try:
        with pytest.raises(ConfigurationError, match="key-prefixing backend"):
            g(42)
    finally:
        set_default_backend(None)
    assert b.data == {}


def test_unprefixed_backend_stores_the_bare_interop_key():
    for b in (DictBackend(), EmptyPrefixBackend()):
        g = cache(backend=b, namespace="users", interop="get_user")(get_user)
        assert g(42) == {"id": 42}
        assert list(b.data) == ["users:get_user:61598716255080080f6456eb065c2e51badfaa4320b0efe97469c29cffee8875"]


def test_auto_mode_takes_a_prefixing_backend():
    """Only interop mode refuses it: in auto mode the object gets the bare cache key
    and applies its prefix on its own wire, as with the reference."""
    b = PrefixedBackend()
    g = cache(backend=b, namespace="users")(get_user)
    assert g(42) == {"id": 42}
    assert list(b.data) == [g._cachekit.cached_key((42,), {}).decode()]


def test_core_cache_plain_format_takes_a_prefix_interop_refuses_it():
    """CoreCache(interop=True) refuses a key_prefix (the core's check);
    plain=True stores the same MessagePack under it (cachekit-rs's client
    .namespace() layout)."""
    from cachekit._core import CacheKitError, CoreCache

    with pytest.raises(CacheKitError, match="interop mode keys carry no prefix"):
        CoreCache(backend_url="memory://", interop=True, key_prefix="rsapp:")
    plain = CoreCache(backend_url="memory://", plain=True, key_prefix="rsapp:")
    plain.put(None, b"k", b"\x07", 0.0)
    value, _ = plain.get(None, b"k")
    assert value == b"\x07"
