"""cachekit: the CacheKit @cache decorator on libcachekit (a drop-in for cachekit-py).

    from cachekit import cache

    @cache(ttl=600, namespace="users")
    def get_user(user_id: int) -> dict: ...
"""
from __future__ import annotations

import pkgutil as _pkgutil
from typing import Any

# The compiled extension (cachekit/_ffi*.so) may live in another sys.path entry
# than these sources (build_ext.py --out <dir>): let the package span both.
__path__ = _pkgutil.extend_path(__path__, __name__)

from cachekit._core import (Backend, BackendError, CacheKitError, CacheMemoryError, CacheTimeoutError,
                            CircuitOpenError, ConfigurationError, CoreCache, DeadlockError, DecodeError,
                            DecryptionAuthenticationError, IntegrityError, InteropError, LoadFailed, LoadTimeout,
                            ValueTooLargeError)
from cachekit._codec import (UnsupportedArgument, decode_interop_value, encode_interop_value, interop_key)
from cachekit._decorator import cache
from cachekit._defaults import get_default_backend, set_default_backend
from cachekit._outcome import InvalidationOutcome
from cachekit._unavailable import module_getattr as _module_getattr
from cachekit.config import CircuitBreakerConfig, DecoratorConfig
from cachekit.health import UNAVAILABLE as _HEALTH_UNAVAILABLE, HealthLevel, HealthStatus
from cachekit._stats import CacheInfo

def generate_interop_key(namespace: str, operation: str, args: list[Any]) -> str:
    """The interop/v1 key for the flat, already-bound argument list `args`."""
    return interop_key(namespace, operation, list(args))


def library_version() -> str:
    from cachekit._core import ffi, lib
    return str(ffi.string(lib.cachekit_version_string()).decode())


# The reference's health helpers: an ImportError saying why (cachekit.health).
__getattr__ = _module_getattr(__name__, _HEALTH_UNAVAILABLE)


# The package is versioned as the libcachekit it was built against (setup.py) or that
# it carries (pyproject.toml at the root: meson's project version), so the
# loaded library's version is the package's.
__version__ = library_version()


__all__ = [
    "cache", "CacheInfo", "InvalidationOutcome", "DecoratorConfig", "CircuitBreakerConfig", "HealthLevel",
    "HealthStatus", "Backend", "CoreCache", "CacheKitError", "ConfigurationError", "BackendError",
    "IntegrityError", "DecryptionAuthenticationError", "InteropError", "LoadFailed", "LoadTimeout",
    "DecodeError", "ValueTooLargeError", "CacheMemoryError", "CacheTimeoutError", "CircuitOpenError", "DeadlockError",
    "UnsupportedArgument", "set_default_backend", "get_default_backend",
    "generate_interop_key", "encode_interop_value", "decode_interop_value", "library_version",
]
