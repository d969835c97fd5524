"""cachekit.backends.memcached: the reference's names, which cannot be honoured here:
libcachekit has no Memcached backend, so building one is a ConfigurationError."""
from __future__ import annotations

from typing import Any

from cachekit._core import ConfigurationError, lib

_WHY = ("Memcached is not available in libcachekit (its L2s are Redis, Redis Cluster, files and memory): "
        "use cachekit.backends.RedisBackend or FileBackend")


class MemcachedBackendConfig:
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise ConfigurationError(lib.CACHEKIT_EINVAL, _WHY)


class MemcachedBackend:
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise ConfigurationError(lib.CACHEKIT_EINVAL, _WHY)


__all__ = ["MemcachedBackend", "MemcachedBackendConfig"]
