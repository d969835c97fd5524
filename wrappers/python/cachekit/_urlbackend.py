"""The reference's backend classes that name one of the core's L2s (RedisBackend,
FileBackend): a user constructs one and passes it as backend= (or to
set_default_backend). The decorator takes its URL, as it takes a URL string: a core
per configuration and per process, so an object made at import in a prefork parent
hands no connection to its workers. Its own get/set/delete/exists/health_check (the
reference's BaseBackend protocol) go through a raw cachekit.Backend opened in the
calling process on first use."""
from __future__ import annotations

import os
import threading
import time
from typing import Any, Optional

from cachekit._core import Backend, BackendError, ConfigurationError, lib, tls_options


class CoreUrlBackend:
    """Base of the classes whose L2 is one of the core's backends, named by `url`, with
    redis-py's TLS keywords (`tls`, see cachekit._core.TLS_KEYWORDS) when set."""

    def __init__(self, url: str, tls: Optional[dict[str, Any]] = None) -> None:
        self._core_tls = tls_options(**(tls or {}))
        Backend(url, **self._core_tls).close()  # the core checks the URL and TLS options now (it does not connect)
        self._core_url = url
        self._raw: Optional[Backend] = None
        self._raw_pid = 0
        self._lock = threading.Lock()

    @property
    def core_url(self) -> str:
        """The URL the decorator opens (may hold a password: never logged)."""
        return self._core_url

    @property
    def core_tls(self) -> dict[str, Any]:
        """The TLS keywords that are set (a copy), for the cache the decorator opens."""
        return dict(self._core_tls)

    def _backend(self) -> Backend:
        with self._lock:
            if self._raw is None or self._raw_pid != os.getpid():
                # A forked child never uses its parent's handle (its sockets are the parent's).
                self._raw, self._raw_pid = Backend(self._core_url, fail_closed=True, **self._core_tls), os.getpid()
            return self._raw

    def get(self, key: str) -> Optional[bytes]:
        return self._backend().get(key)

    def set(self, key: str, value: bytes, ttl: Optional[int] = None) -> None:
        self._backend().set(key, bytes(value), float(ttl or 0))

    def delete(self, key: str) -> bool:
        return self._backend().delete(key)

    def exists(self, key: str) -> bool:
        return self._backend().exists(key)  # one EXISTS, not a GET of the value

    def health_check(self) -> tuple[bool, dict[str, Any]]:
        """(healthy, details) from one round trip, as the reference's backends answer."""
        start = time.monotonic()
        details: dict[str, Any] = {"backend_type": self._kind()}
        try:
            self._backend().get("cachekit:health_check")
        except BackendError as exc:
            details.update(latency_ms=(time.monotonic() - start) * 1000, error=exc.message)
            return False, details
        details["latency_ms"] = (time.monotonic() - start) * 1000
        return True, details

    def _kind(self) -> str:
        return type(self).__name__.replace("Backend", "").lower()

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {self._kind()} via libcachekit>"


def refuse_fields(obj: Any, defaults: dict[str, Any], why: str) -> None:
    """Fields of a reference config object this wrapper cannot honour: accepted at their
    defaults (which are the core's), refused with the reason when set to anything else."""
    changed = sorted(n for n, d in defaults.items() if getattr(obj, n, d) != d)
    if changed:
        raise ConfigurationError(lib.CACHEKIT_EINVAL, f"{type(obj).__name__}: {', '.join(changed)} cannot be "
                                 f"set here ({why}); leave {'it' if len(changed) == 1 else 'them'} at the default")
