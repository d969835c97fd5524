"""cachekit.backends: the reference SDK's (cachekit-py 0.24.1) public names here.

RedisBackend and FileBackend (also in .redis and .file) are the core's Redis and file
L2s: construct one and pass it as backend= or to set_default_backend. Any other object
with get/set/delete (the BaseBackend protocol) is a user-defined L2. MemcachedBackend
is refused when built: libcachekit has no Memcached backend."""
from __future__ import annotations

from enum import Enum
from typing import Any, Iterable, Optional, Protocol, runtime_checkable

from cachekit._core import BackendError
from cachekit.backends.file import FileBackend, FileBackendConfig
from cachekit.backends.memcached import MemcachedBackend
from cachekit.backends.redis import RedisBackend, RedisBackendConfig


class BackendErrorType(str, Enum):
    """The reference's error classification (its circuit breaker's input). Here a
    backend failure is classified by the core's status, on BackendError.code."""

    TRANSIENT = "transient"
    PERMANENT = "permanent"
    TIMEOUT = "timeout"
    AUTHENTICATION = "authentication"
    UNKNOWN = "unknown"


class CapabilityNotAvailableError(BackendError):
    """An optional backend capability (locks, TTL inspection...) is not offered."""

    def __init__(self, message: str) -> None:
        from cachekit._core import lib
        super().__init__(lib.CACHEKIT_EINVAL, message)


@runtime_checkable
class BaseBackend(Protocol):
    """The L2 contract a user-defined backend meets (bytes under str keys)."""

    def get(self, key: str) -> Optional[bytes]: ...

    def set(self, key: str, value: bytes, ttl: Optional[int] = None) -> None: ...

    def delete(self, key: str) -> bool: ...

    def exists(self, key: str) -> bool: ...

    def health_check(self) -> tuple[bool, dict[str, Any]]: ...


@runtime_checkable
class TTLInspectableBackend(Protocol):
    async def get_ttl(self, key: str) -> Optional[int]: ...

    async def refresh_ttl(self, key: str, ttl: int) -> bool: ...


@runtime_checkable
class LockableBackend(Protocol):
    def acquire_lock(self, key: str, timeout: float, blocking_timeout: Optional[float] = None) -> Any: ...


@runtime_checkable
class KeyTrackableBackend(Protocol):
    def track_key(self, registry_id: str, key: str) -> None: ...

    def drain_tracked(self, registry_id: str, local_keys: Iterable[str]) -> set[str]: ...


@runtime_checkable
class TimeoutConfigurableBackend(Protocol):
    def with_timeout(self, operation: str, timeout_ms: int) -> Any: ...


class BackendProvider(Protocol):
    """Dependency injection: anything with get_backend() -> a backend."""

    def get_backend(self) -> BaseBackend: ...


class BaseBackendConfig:
    """The reference's base of backend settings classes (pydantic there); the backend
    configs here are dataclasses of the same fields."""


def inherit_config(parent: type) -> dict[str, Any]:
    """The reference's pydantic settings helper: nothing to inherit here (no pydantic)."""
    return {}


__all__ = [
    "BaseBackend", "BaseBackendConfig", "inherit_config", "TTLInspectableBackend", "LockableBackend",
    "KeyTrackableBackend", "TimeoutConfigurableBackend", "BackendProvider", "BackendError", "BackendErrorType",
    "CapabilityNotAvailableError", "RedisBackend", "MemcachedBackend", "FileBackend", "FileBackendConfig",
    "RedisBackendConfig",
]
