"""Options: what the decorator accepts, the presets, and the checks of single
values (TTL, backend) made at decoration."""
from __future__ import annotations

import hashlib
import math
import os
import uuid as _uuid
from typing import Any, Optional

from cachekit import _options
from cachekit._core import ConfigurationError, lib
from cachekit._urlbackend import CoreUrlBackend

_UNSET: Any = object()
_PROCESS_ID = _uuid.uuid4().hex
_ONE_YEAR = 31_536_000.0
_MAX_TRACKED_KEYS = 100_000
# How long an object-mode single-flight waiter waits for the leader before it
# computes for itself: the core's load_timeout_ms default (30000, see
# cachekit_cache_options and src/cache/cache_config.cpp), which bounds the
# core's own single-flight waits.
_LOAD_TIMEOUT = 30.0

_ALLOWED = frozenset({
    "ttl", "namespace", "backend", "serializer", "integrity_checking", "interop", "encryption", "master_key",
    "tenant", "l1", "l1_enabled", "l1_max_size_mb", "stale_while_revalidate", "swr_enabled", "swr_threshold_ratio",
    "fail_closed", "key", "max_entries", "config", "l1_admission",
    # the reference's reliability, freshness and tenancy options (_options.py)
    "stale_ttl", "refresh_ttl_on_get", "ttl_refresh_threshold", "circuit_breaker", "backpressure", "monitoring",
    "tenant_extractor", "single_tenant_mode", "deployment_uuid",
})

# Finite preset TTLs (protocol.md section 8).
_PRESETS: dict[str, dict[str, Any]] = {
    "minimal": {"ttl": 300, "integrity_checking": False, "swr_enabled": False},
    "production": {"ttl": 600},
    "secure": {"ttl": 600, "encryption": True, "integrity_checking": True},
    "dev": {"ttl": 300},
    "test": {"ttl": 60, "integrity_checking": False, "swr_enabled": False},
    "local": {"ttl": 300, "backend": None, "max_entries": 256, "swr_enabled": False, "_local": True},
}

# The serializers encryption may wrap (the reference refuses the auto one).
_ENCRYPTABLE = frozenset({"default", "std", "orjson", "arrow"})

# Cores are shared by configuration; a master key takes part in that identity
# only as a keyed BLAKE2b digest (a random key per process), so the hex key is
# never kept as (part of) a dict key where a memory dump or gc walk finds it.
_SECRET_SALT = os.urandom(32)


def _secret_id(secret: Optional[str]) -> Optional[bytes]:
    if secret is None:
        return None
    return hashlib.blake2b(secret.encode("utf-8", "surrogatepass"), key=_SECRET_SALT, digest_size=16).digest()


def _backend_url(backend: Any) -> Optional[str]:
    if isinstance(backend, str) and not backend.strip():
        # Most often an unset environment variable: never a file cache in the current directory.
        raise ConfigurationError(lib.CACHEKIT_EINVAL, "backend is an empty string: give a URL, a directory, "
                                 "a cachekit.Backend, None (L1 only), or leave it out (the environment's)")
    if isinstance(backend, str):
        if "://" in backend:
            return backend
        _refuse_url_lookalike(backend)
        return "file://" + os.path.abspath(os.path.expanduser(backend))
    if isinstance(backend, os.PathLike):
        return "file://" + os.path.abspath(os.fspath(backend))
    if isinstance(backend, CoreUrlBackend):  # RedisBackend, FileBackend: their URL, as a string would be
        return backend.core_url
    raise TypeError(f"backend must be a URL, a directory path, a cachekit.Backend or None, got {type(backend)!r}")


# The schemes the core opens (src/l2/open_backend.cpp); the Redis ones are
# what RedisBackend takes.
REDIS_SCHEMES = ("redis", "rediss", "redis-cluster", "rediss-cluster", "redis-sentinel", "rediss-sentinel", "unix")
_SCHEMES = REDIS_SCHEMES + ("file", "memory")


def _refuse_url_lookalike(backend: str) -> None:
    """A string without "://" is a directory, unless it looks like a URL: a colon in its
    first segment ("redis:/h", "localhost:6379", "file:/d") or a scheme's name before a
    double slash ("redis//h:6379"). Such a typo is refused, as the core refuses it for
    Rust, Go and the tool, instead of becoming a file cache in ./redis/ (a directory
    whose name has a colon is still taken as "./name:x" or an absolute path)."""
    first = backend.split("/", 1)[0]
    if ":" in first or (first.lower() in _SCHEMES and backend[len(first):].startswith("//")):
        raise ConfigurationError(lib.CACHEKIT_EINVAL,
                                 f'unsupported backend URL "{backend[:64]}": use redis://, rediss://, '
                                 'redis-cluster://, redis-sentinel:// (or their rediss- forms), unix://, '
                                 'file:///absolute/dir or memory:// (a directory: an absolute path or ./name)')


def _check_ttl(ttl: Any) -> Optional[float]:
    """The reference's checks and classes: a non-number is a TypeError (its message is
    math.isfinite's), a non-finite or negative number a ValueError. A bool, which the
    reference takes as 0 or 1 second, is refused here: ttl=True is a mistake, never a TTL."""
    if ttl is None:
        return None
    if isinstance(ttl, bool):
        raise TypeError(f"ttl must be a number of seconds or None, not a bool (ttl={ttl!r} would mean "
                        f"{int(ttl)} s): for no expiry pass ttl=None")
    if not isinstance(ttl, (int, float)):
        raise TypeError(f"must be real number, not {type(ttl).__name__}")
    if not math.isfinite(ttl):
        raise ValueError(f"ttl must be a finite number, got {ttl!r}")
    if ttl < 0:
        raise ValueError(f"ttl must be non-negative, got {ttl}")
    return float(ttl)


def _check_choices(opts: dict[str, Any]) -> None:
    """The reference's decoration-time refusals: encryption over a serializer it cannot seal, a master key (given or in
    CACHEKIT_MASTER_KEY) with no explicit encryption choice when values go to
    an L2, a negative or non-numeric L1 budget, cache.local without a TTL."""
    ser = opts.get("serializer", "default")
    _options.check_serializer_name(ser)
    _options.check_freshness(opts)
    _options.note_refresh_ttl(opts)
    if opts.get("encryption") and isinstance(ser, str) and ser not in _ENCRYPTABLE:
        raise ConfigurationError(lib.CACHEKIT_EINVAL, f"encryption=True cannot seal serializer={ser!r} values: "
                                 f"use one of {', '.join(sorted(_ENCRYPTABLE))}")
    has_l2 = opts.get("backend", _UNSET) is not None
    if has_l2 and "encryption" not in opts and (opts.get("master_key") is not None
                                               or os.environ.get("CACHEKIT_MASTER_KEY")):
        raise ConfigurationError(lib.CACHEKIT_EINVAL, "a master key is set (master_key= or CACHEKIT_MASTER_KEY) "
                                 "but encryption is not chosen: pass encryption=True (or cache.secure) to "
                                 "encrypt, or encryption=False to store plaintext")
    mb = opts.get("l1_max_size_mb")
    if mb is not None and (isinstance(mb, bool) or not isinstance(mb, (int, float)) or not math.isfinite(mb)
                           or mb <= 0):
        raise ValueError(f"l1_max_size_mb must be a finite number > 0, got {mb!r}")
    adm = opts.get("l1_admission")
    if adm is not None and adm not in ("lru", "tinylfu"):
        raise ConfigurationError(lib.CACHEKIT_EINVAL, f'l1_admission must be "lru" or "tinylfu", got {adm!r}')
    n = opts.get("max_entries")
    if n is not None:  # the reference's cache.local checks, with its types and messages
        if not isinstance(n, int):
            raise TypeError(f"max_entries must be an int, got {type(n).__name__}")
        if n < 1:
            raise ValueError(f"max_entries must be >= 1, got {n}")
    if opts.get("_local"):  # the reference's cache.local: whole seconds, at least 1
        ttl = opts.get("ttl")
        if isinstance(ttl, bool):
            _check_ttl(ttl)  # refused, as everywhere
        if not isinstance(ttl, int):
            raise TypeError(f"ttl must be an int, got {type(ttl).__name__}")
        if ttl < 1:
            raise ValueError(f"ttl must be >= 1, got {ttl}")


# The reference's nested option objects (EncryptionConfig, L1CacheConfig): each
# field this wrapper takes -> its flat option; a field it does not take, when set,
# is refused rather than dropped.
_NESTED: dict[str, dict[str, str]] = {
    "encryption": {"enabled": "encryption", "master_key": "master_key", "tenant_extractor": "tenant_extractor",
                   "single_tenant_mode": "single_tenant_mode", "deployment_uuid": "deployment_uuid",
                   "fail_closed": "fail_closed"},
    "l1": {"enabled": "l1", "max_size_mb": "l1_max_size_mb", "swr_enabled": "swr_enabled",
           "swr_threshold_ratio": "swr_threshold_ratio"},
}


def _fields(obj: Any) -> dict[str, Any]:
    if isinstance(obj, dict):
        return dict(obj)
    if hasattr(obj, "__dict__"):
        return dict(vars(obj))
    return {n: getattr(obj, n) for n in getattr(obj, "__slots__", ()) if hasattr(obj, n)}


def _flatten(kw: dict[str, Any]) -> dict[str, Any]:
    """`encryption=` / `l1=` given as the reference's config objects (or
    mappings): their fields as flat options (an explicit flat option wins)."""
    out = dict(kw)
    for name, fields in _NESTED.items():
        obj = kw.get(name)
        if obj is None or isinstance(obj, (bool, int)):
            continue
        got = _fields(obj)
        unknown = set(got) - set(fields)
        if isinstance(obj, dict) and unknown:
            raise TypeError(f"unexpected {name} field(s): {', '.join(sorted(unknown))}")
        del out[name]
        for f, flat in fields.items():
            if got.get(f) is not None and (flat == name or flat not in kw):
                out[flat] = got[f]
    return out


def _validate(kw: dict[str, Any]) -> dict[str, Any]:
    unknown = set(kw) - _ALLOWED
    if unknown:
        raise TypeError(f"unexpected cache parameter(s): {', '.join(sorted(unknown))}")
    cfg = kw.pop("config", None)
    if cfg is not None:
        # The reference's DecoratorConfig marks an omitted backend with its own sentinel.
        base = {k: v for k, v in _fields(cfg).items() if k in _ALLOWED
                and not (k == "backend" and type(v).__name__ == "_Unset")}
        base = _flatten(base)
        base.update(_flatten(kw))
        return base
    return _flatten(kw)

