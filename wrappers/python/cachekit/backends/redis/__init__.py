"""cachekit.backends.redis (the reference's names): RedisBackend and RedisBackendConfig,
on the core's Redis backend (docs/python.md "Reference modules")."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Optional, Union

from cachekit._config import REDIS_SCHEMES
from cachekit._core import ConfigurationError, lib
from cachekit._urlbackend import CoreUrlBackend, refuse_fields

_DEFAULT_URL = "redis://localhost:6379"  # the reference's default when the environment names none


def _env_url() -> str:
    return os.environ.get("CACHEKIT_REDIS_URL") or os.environ.get("REDIS_URL") or _DEFAULT_URL


@dataclass
class RedisBackendConfig:
    """The reference's fields and defaults. Only redis_url is the object's own here: pool
    and socket settings are the core's (CACHEKIT_SOCKET_TIMEOUT and
    CACHEKIT_SOCKET_CONNECT_TIMEOUT, read for every cache), so a changed one is refused
    when a RedisBackend is built from it."""

    redis_url: str = field(default_factory=_env_url, repr=False)
    connection_pool_size: int = 50
    socket_timeout: float = 5.0
    socket_connect_timeout: float = 5.0
    socket_keepalive: bool = True
    disable_hiredis: bool = False

    @classmethod
    def from_env(cls) -> "RedisBackendConfig":
        return cls()


_UNHONOURED = {"connection_pool_size": 50, "socket_timeout": 5.0, "socket_connect_timeout": 5.0,
               "socket_keepalive": True}


class RedisBackend(CoreUrlBackend):
    """A Redis L2: RedisBackend(url), RedisBackend(RedisBackendConfig(...)), or
    RedisBackend() for CACHEKIT_REDIS_URL / REDIS_URL / redis://localhost:6379. Its keys
    are bare (no tenant prefix), as the reference's explicit RedisBackend writes them.
    TLS: a rediss:// URL, or redis-py's keywords (ssl=True, ssl_ca_certs=..., ssl_cert_reqs=
    "required"|"optional"|"none" or ssl.CERT_*, ssl_ca_path, ssl_certfile, ssl_keyfile,
    ssl_check_hostname); a URL's own ssl_* parameters win over the keywords."""

    def __init__(self, redis_url: Optional[Union[str, RedisBackendConfig]] = None,
                 client_provider: Any = None, *, ssl: Optional[bool] = None, ssl_cert_reqs: Any = None,
                 ssl_ca_certs: Any = None, ssl_ca_path: Any = None, ssl_certfile: Any = None,
                 ssl_keyfile: Any = None, ssl_check_hostname: Optional[bool] = None) -> None:
        if client_provider is not None:
            raise ConfigurationError(lib.CACHEKIT_EINVAL, "RedisBackend(client_provider=...) is not taken: "
                                     "libcachekit opens and pools its own Redis connections (pass redis_url)")
        if isinstance(redis_url, RedisBackendConfig):
            refuse_fields(redis_url, _UNHONOURED, "libcachekit's pool and timeouts come from its options and "
                          "CACHEKIT_SOCKET_TIMEOUT / CACHEKIT_SOCKET_CONNECT_TIMEOUT")
            url = redis_url.redis_url
        elif redis_url is None:
            url = _env_url()
        elif isinstance(redis_url, str):
            url = redis_url
        else:
            raise TypeError(f"redis_url must be a str or RedisBackendConfig, got {type(redis_url).__name__}")
        if not url or not url.lower().startswith(tuple(scheme + "://" for scheme in REDIS_SCHEMES)):
            raise ConfigurationError(lib.CACHEKIT_EINVAL, "RedisBackend needs a redis://, rediss://, unix://, "
                                     "redis-cluster:// or redis-sentinel:// URL (or rediss-cluster://, "
                                     "rediss-sentinel://)")
        # redis-py's TLS keywords; a rediss:// URL's own ssl_* parameters win over them.
        super().__init__(url, dict(ssl=ssl, ssl_cert_reqs=ssl_cert_reqs, ssl_ca_certs=ssl_ca_certs,
                                   ssl_ca_path=ssl_ca_path, ssl_certfile=ssl_certfile, ssl_keyfile=ssl_keyfile,
                                   ssl_check_hostname=ssl_check_hostname))

    def _kind(self) -> str:
        return "redis"


__all__ = ["RedisBackend", "RedisBackendConfig"]
