"""The reference decorator's reliability, freshness and tenancy options, checked
at decoration as cachekit-py 0.24.1 checks them, and what each becomes here:

    circuit_breaker   CircuitBreakerConfig-like -> the core's breaker options
    backpressure      BackpressureConfig-like   -> the core's max_concurrency / wait
    CACHEKIT_SOCKET_TIMEOUT, CACHEKIT_SOCKET_CONNECT_TIMEOUT (the reference's Redis
                      timeouts, seconds)        -> command / connect timeouts
    stale_ttl         refused unless 0/None: the reference takes it only with its
                      hosted (CachekitIO) backend, which libcachekit has not
    refresh_ttl_on_get, ttl_refresh_threshold   -> checked; the core's option (an L2
                      hit's TTL reset when below ttl x threshold); a warning for a
                      user-defined backend, as the reference gives for one without TTLs
    deployment_uuid, single_tenant_mode, tenant_extractor -> the encryption tenant
    master_key        any hex the reference takes, in the core's form
"""
from __future__ import annotations

import math
import os
import uuid
from typing import Any, Optional

from cachekit._core import ConfigurationError, lib

_MAX_TOTAL_TTL = 2_592_000  # the reference's 30-day storage cap (ttl + stale_ttl)

# Serializer names the reference's (0.24.1) registry takes; "encrypted" is refused with its own reason.
SERIALIZER_NAMES = frozenset({"default", "std", "auto", "pythonic", "orjson", "arrow"})


def _bad(msg: str) -> ConfigurationError:
    return ConfigurationError(lib.CACHEKIT_EINVAL, msg)


def _field(obj: Any, name: str, default: Any) -> Any:
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def _known_fields(obj: Any, what: str, names: tuple[str, ...]) -> None:
    if isinstance(obj, bool) or obj is None or isinstance(obj, (int, float, str)):
        raise TypeError(f"{what} takes a {what} config object (or a mapping of its fields), got {obj!r}")
    if isinstance(obj, dict):
        extra = set(obj) - set(names)
        if extra:
            raise TypeError(f"unexpected {what} field(s): {', '.join(sorted(extra))}")


def _int_at_least(obj: Any, name: str, default: int, low: int) -> int:
    v = _field(obj, name, default)
    if isinstance(v, bool) or not isinstance(v, int) or v < low:
        raise _bad(f"{name} must be an integer >= {low}, got {v!r}")
    return int(v)


def _seconds(v: Any, name: str, positive: bool) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0 or (positive and v == 0):
        raise _bad(f"{name} must be a finite number {'>' if positive else '>='} 0, got {v!r}")
    return float(v)


def _ms(seconds: float) -> int:
    return max(1, min(int(math.ceil(seconds * 1000)), 0xFFFFFFFF)) if seconds > 0 else 0


_BREAKER_FIELDS = ("enabled", "failure_threshold", "success_threshold", "recovery_timeout", "half_open_requests")
_BACKPRESSURE_FIELDS = ("enabled", "max_concurrent_requests", "queue_size", "timeout")


def breaker_options(cb: Any) -> dict[str, Any]:
    """CircuitBreakerConfig (its four knobs, checked as the reference checks
    them) -> CoreCache keywords. The core's breaker is per backend handle and
    counts consecutive failures; it recovers through half-open."""
    _known_fields(cb, "circuit_breaker", _BREAKER_FIELDS)
    if not _field(cb, "enabled", True):
        return {"breaker_disabled": True}
    failures = _int_at_least(cb, "failure_threshold", 5, 1)
    successes = _int_at_least(cb, "success_threshold", 3, 1)
    half_open = _int_at_least(cb, "half_open_requests", 3, 1)
    if half_open < successes:
        raise _bad(f"half_open_requests ({half_open}) must be >= success_threshold ({successes}): "
                   "a half-open cycle could never close")
    recovery = _seconds(_field(cb, "recovery_timeout", 30.0), "recovery_timeout", True)
    return {"breaker_failures": failures, "breaker_successes": successes, "breaker_half_open_calls": half_open,
            "breaker_recovery_ms": _ms(recovery)}


def backpressure_options(bp: Any) -> dict[str, Any]:
    """BackpressureConfig -> the core's bound on calls in flight and its wait
    (queue_size is not wired in the reference either)."""
    _known_fields(bp, "backpressure", _BACKPRESSURE_FIELDS)
    if not _field(bp, "enabled", True):
        return {"max_concurrency": 0}
    limit = _int_at_least(bp, "max_concurrent_requests", 100, 1)
    wait = _seconds(_field(bp, "timeout", 0.1), "backpressure timeout", False)
    return {"max_concurrency": limit, "backpressure_wait_ms": _ms(wait) if wait else 1}


def timeout_options() -> dict[str, Any]:
    """The reference's Redis socket timeouts from the environment (seconds),
    when set; else the core's fail-fast defaults (250 ms per call, 500 ms connect)."""
    out: dict[str, Any] = {}
    for env, key in (("CACHEKIT_SOCKET_TIMEOUT", "command_timeout_ms"),
                     ("CACHEKIT_SOCKET_CONNECT_TIMEOUT", "connect_timeout_ms")):
        raw = os.environ.get(env)
        if raw is None or not raw.strip():
            continue
        try:
            v = float(raw)
        except ValueError:
            raise _bad(f"{env} must be a number of seconds, got {raw!r}") from None
        out[key] = _ms(_seconds(v, env, True))
    return out


# CACHEKIT_INVALIDATION_LISTENER_ENABLED's spellings, as the reference's settings (pydantic's bool) read them.
_TRUE = frozenset({"1", "on", "t", "true", "y", "yes"})
_FALSE = frozenset({"", "0", "off", "f", "false", "n", "no"})
_COHERENCE = "l1_coherence=pubsub"  # the reference's listener: its invalidation channel (docs/redis.md)


def listener_enabled() -> bool:
    """CACHEKIT_INVALIDATION_LISTENER_ENABLED (default off, as in the reference)."""
    raw = os.environ.get("CACHEKIT_INVALIDATION_LISTENER_ENABLED", "").strip().lower()
    if raw in _TRUE:
        return True
    if raw in _FALSE:
        return False
    raise _bad("CACHEKIT_INVALIDATION_LISTENER_ENABLED must be a boolean (true/false, 1/0, yes/no, on/off)")


def with_listener(url: str) -> str:
    """The environment's Redis URL with the core's L1 coherence on its channel (pubsub),
    unless the URL chooses an l1_coherence itself."""
    if "l1_coherence=" in url.split("?", 1)[-1] and "?" in url:
        return url
    return url + ("&" if "?" in url else "?") + _COHERENCE


_listener_warned = False


def note_listener_elsewhere() -> None:
    """The reference warns once per process when the listener is on and a function's backend
    carries no events (anything but its zero-config Redis); so does this wrapper."""
    global _listener_warned
    if _listener_warned:
        return
    _listener_warned = True
    import logging
    logging.getLogger("cachekit").warning(
        "cachekit: CACHEKIT_INVALIDATION_LISTENER_ENABLED applies to the environment's Redis "
        "(CACHEKIT_REDIS_URL / REDIS_URL) only: for an explicit Redis backend add ?l1_coherence=pubsub "
        "(or auto) to its URL")


def check_freshness(opts: dict[str, Any]) -> None:
    """stale_ttl and refresh_ttl_on_get's threshold, as the reference checks them."""
    thr = opts.get("ttl_refresh_threshold", 0.5)
    if isinstance(thr, bool) or not isinstance(thr, (int, float)) or not 0.0 <= thr <= 1.0:
        raise _bad(f"ttl_refresh_threshold must be 0.0-1.0, got {thr!r}")
    stale = opts.get("stale_ttl")
    if stale is None:
        return
    if isinstance(stale, bool) or not isinstance(stale, int) or stale < 0:
        raise _bad(f"stale_ttl must be a non-negative integer, got {stale!r}")
    if stale == 0:  # the explicit opt-out
        return
    ttl = opts.get("ttl")
    if not ttl or ttl <= 0:
        raise _bad("stale_ttl requires a positive ttl (the stale window starts where freshness ends)")
    if ttl + stale > _MAX_TOTAL_TTL:
        raise _bad(f"ttl + stale_ttl must not exceed {_MAX_TOTAL_TTL} seconds (30-day storage cap)")
    raise _bad("stale_ttl requires an SWR-capable backend (the hosted CachekitIO API), which libcachekit does "
               "not provide: remove stale_ttl (stale_while_revalidate=True refreshes entries ahead of expiry)")


def note_refresh_ttl(opts: dict[str, Any]) -> None:
    """refresh_ttl_on_get with a user-defined backend object: the reference
    refreshes only through backends with get_ttl/refresh_ttl and warns once for
    the others; the core cannot reach a Python object's TTLs, so this warns, at
    decoration. The core's backends refresh (refresh_ttl_fraction)."""
    from cachekit._userbackend import is_user_backend

    if opts.get("refresh_ttl_on_get") and opts.get("ttl") and is_user_backend(opts.get("backend")):
        import logging
        logging.getLogger("cachekit").warning(
            "cachekit: refresh_ttl_on_get is ignored: a user-defined backend's TTLs are not refreshed on read "
            "(entries keep the TTL they were written with)")


def refresh_ttl_fraction(opts: dict[str, Any]) -> float:
    """The core's refresh_ttl_on_get: on an L2 hit with less than ttl x
    ttl_refresh_threshold left, the entry gets ttl again (the reference's test);
    0.0 = off (no option, no ttl, or a threshold of 0, which never refreshes there)."""
    if not opts.get("refresh_ttl_on_get") or not opts.get("ttl"):
        return 0.0
    return float(opts.get("ttl_refresh_threshold", 0.5))


def encryption_tenant(opts: dict[str, Any], interop: bool) -> Optional[str]:
    """The single-tenant encryption tenant: tenant= (this wrapper's), else
    deployment_uuid, else CACHEKIT_DEPLOYMENT_UUID (a UUID, canonicalised; interop
    mode wants it canonical already), else None (the protocol's "default")."""
    extractor = opts.get("tenant_extractor")
    if extractor is not None and opts.get("single_tenant_mode"):
        raise _bad("Cannot use both tenant_extractor and single_tenant_mode. Choose multi-tenant "
                   "(tenant_extractor) OR single-tenant (single_tenant_mode=True).")
    if extractor is not None and interop:
        raise _bad("interop mode does not take tenant_extractor: every SDK derives an interop entry's keys "
                   "from one configured tenant")
    if extractor is not None and not (callable(getattr(extractor, "extract", None)) or callable(extractor)):
        raise TypeError("tenant_extractor must have .extract(args, kwargs) or be a callable (args, kwargs) -> str")
    if opts.get("tenant") is not None:
        return str(opts["tenant"])
    for raw, source in ((opts.get("deployment_uuid"), "deployment_uuid parameter"),
                        (os.environ.get("CACHEKIT_DEPLOYMENT_UUID"), "CACHEKIT_DEPLOYMENT_UUID")):
        if not raw:
            continue
        try:
            canonical = str(uuid.UUID(str(raw)))
        except ValueError:
            canonical = None
        if canonical is None:  # the source is named, never the value (it may be a pasted key)
            raise _bad(f"Invalid {source} (must be valid UUID)")
        if interop and str(raw).strip() != canonical:
            raise _bad(f"interop mode requires the deployment UUID from {source} in canonical lowercase-hyphenated "
                       f"form ({canonical!r}): other SDKs derive keys from the raw string")
        return canonical
    return None


def tenant_of_call(extractor: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    """A multi-tenant call's tenant: the extractor's answer, a UUID (canonical)."""
    ext = getattr(extractor, "extract", None)
    raw = ext(args, kwargs) if callable(ext) else extractor(args, kwargs)
    return str(uuid.UUID(str(raw)))


def master_key_hex(key: Any, source: str = "master_key") -> Optional[str]:
    """A master key as the core takes it (64 lowercase hex digits). The
    reference takes any hex that bytes.fromhex() decodes (white space between
    bytes, either case) to at least 32 bytes and derives from all of it; the
    core derives from exactly 32 (protocol.md section 6), so a longer key would
    derive other keys than the reference's: it is refused, never cut."""
    if key is None:
        return None
    if isinstance(key, (bytes, bytearray)):  # this wrapper's extension: the raw key (the reference refuses bytes)
        if len(key) != 32:
            raise _bad(f"a raw {source} is exactly 32 bytes, got {len(key)}")
        return bytes(key).hex()
    if not isinstance(key, str):
        raise TypeError(f"{source} takes a hex string, got {type(key).__name__}")
    try:
        raw = bytes.fromhex(key)
    except ValueError:
        raise _bad(f"{source} must be hex-encoded") from None
    if len(raw) < 32:
        raise _bad(f"{source} must be at least 32 bytes (256 bits). Got {len(raw)} bytes. "
                   "Generate with: python -c 'import secrets; print(secrets.token_hex(32))'")
    if len(raw) > 32:
        raise _bad(f"{source} decodes to {len(raw)} bytes: libcachekit derives keys from exactly 32 "
                   "(the reference would derive from all of them, so the two would not read each other)")
    return raw.hex()


def check_serializer_name(ser: Any) -> None:
    if not isinstance(ser, str):
        return
    if ser == "encrypted":
        raise _bad("serializer='encrypted' is not taken: encrypt with encryption=True (or cache.secure) and "
                   "omit serializer= for the default MessagePack")
    if ser not in SERIALIZER_NAMES:
        raise ValueError(f"Unknown serializer: {ser!r}. Valid options: {', '.join(sorted(SERIALIZER_NAMES))}. "
                         "To use a custom serializer, pass an instance")
