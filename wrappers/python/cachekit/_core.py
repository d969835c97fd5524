"""Thin, typed layer over the cffi extension (cachekit._ffi).

Every core call goes through cffi's API mode, which releases the GIL for the
duration of the C call. Output buffers are cachekit_buf structs taken from a
small per-thread pool (a loader callback may re-enter the library on the same
thread while an outer call still owns its buffer). Bytes are copied out with
ffi.buffer(ptr, size)[:].
"""
from __future__ import annotations

import os
import re
import threading
import time
from collections import OrderedDict
from typing import Any, Callable, Optional

try:
    from cachekit._ffi import ffi, lib  # type: ignore[import-not-found]
except ImportError as exc:  # pragma: no cover - depends on the build
    raise ImportError(
        "cachekit._ffi is not built: run `python3 wrappers/python/build_ext.py --build-dir <meson builddir> "
        "--out <dir>` and put <dir> on PYTHONPATH, or `pip install wrappers/python` with libcachekit visible "
        "to pkg-config"
    ) from exc

__all__ = [
    "ffi", "lib", "CacheKitError", "ConfigurationError", "InteropError", "BackendError",
    "IntegrityError", "DecryptionAuthenticationError", "LoadFailed", "LoadTimeout", "CoreCache", "Backend",
    "key_auto", "key_interop", "serializer_code", "msgpack_canonical", "msgpack_check",
    "SOURCE_NONE", "SOURCE_L1", "SOURCE_L2", "SOURCE_LOADED", "SOURCE_WAITED",
]

SOURCE_NONE = lib.CACHEKIT_SOURCE_NONE
SOURCE_L1 = lib.CACHEKIT_SOURCE_L1
SOURCE_L2 = lib.CACHEKIT_SOURCE_L2
SOURCE_LOADED = lib.CACHEKIT_SOURCE_LOADED
SOURCE_WAITED = lib.CACHEKIT_SOURCE_WAITED
OK = lib.CACHEKIT_OK
ENOTFOUND = lib.CACHEKIT_ENOTFOUND
TTL_DEFAULT = lib.CACHEKIT_TTL_DEFAULT
_LOOKUP_INIT = {"struct_size": ffi.sizeof("cachekit_lookup"), "age_seconds": -1.0, "temporal_keys": -1}


class CacheKitError(Exception):
    """A libcachekit failure: `code` is the pinned status, `name` its stable name."""

    def __init__(self, code: int, message: str = "") -> None:
        self.code = code
        self.name = ffi.string(lib.cachekit_error_name(code)).decode()
        self.message = message
        super().__init__(f"{self.name} ({code}): {message}" if message else f"{self.name} ({code})")


class ConfigurationError(CacheKitError, ValueError):
    """Invalid cache configuration (e.g. two backend selectors in the environment)."""


class InteropError(CacheKitError, ValueError):
    """An interop-mode key or value cannot be built (bad segment, unsupported value)."""


class BackendError(CacheKitError):
    """The L2 backend failed and the cache is fail-closed."""


class IntegrityError(CacheKitError):
    """A stored entry failed its checks and the cache is fail-closed."""


class DecryptionAuthenticationError(IntegrityError):
    """A ciphertext did not authenticate (fail-closed)."""


class LoadFailed(CacheKitError):
    """CoreCache.get_or_load: this caller waited for another caller's load of
    the key and that load failed (CACHEKIT_EUSER). `error` is the very
    exception the other caller's loader raised (`traceback` its traceback at
    the time), or None when that loader was interrupted by a BaseException
    (KeyboardInterrupt, cancellation...) or its exception is no longer kept:
    then nothing is known but that the load did not happen."""

    error: Optional[BaseException] = None
    traceback: Any = None


class LoadTimeout(BackendError):
    """CoreCache.get_or_load: this caller waited load_timeout_ms for another
    caller's load of the key and gave up (CACHEKIT_ETIMEOUT). The load itself
    goes on, and stores its value when it ends."""


_BACKEND_CODES = {lib.CACHEKIT_EBACKEND, lib.CACHEKIT_ETIMEOUT, lib.CACHEKIT_ECIRCUIT_OPEN, lib.CACHEKIT_EBUSY}
_INTEGRITY_CODES = {lib.CACHEKIT_ECORRUPT, lib.CACHEKIT_EKEYNOTFOUND, lib.CACHEKIT_ECHECKSUM,
                    lib.CACHEKIT_EFRAME}


def last_error(code: int, cls: type[CacheKitError] | None = None) -> CacheKitError:
    msg = ffi.string(lib.cachekit_error_last_message()).decode("utf-8", "replace")
    return _classify(code, msg) if cls is None else cls(code, msg)


def _classify(code: int, msg: str) -> CacheKitError:
    if code in _BACKEND_CODES:
        return BackendError(code, msg)
    if code == lib.CACHEKIT_EAUTH:
        return DecryptionAuthenticationError(code, msg)
    if code in _INTEGRITY_CODES:
        return IntegrityError(code, msg)
    return CacheKitError(code, msg)


# ---------------------------------------------------------------------------
# Buffers: a per-thread pool of cachekit_buf
# ---------------------------------------------------------------------------

_tls = threading.local()


def _new_buf() -> Any:
    return ffi.gc(ffi.new("cachekit_buf *"), lib.cachekit_buf_dispose)


def _take() -> Any:
    try:
        return _tls.pool.pop()
    except AttributeError:
        _tls.pool = []
        return _new_buf()
    except IndexError:
        return _new_buf()


def _give(buf: Any) -> None:
    pool = _tls.pool
    if len(pool) < 8:
        if buf.capacity > (1 << 22):  # do not keep huge buffers around
            lib.cachekit_buf_dispose(buf)
        pool.append(buf)


def _bytes(buf: Any) -> bytes:
    return ffi.buffer(buf.ptr, buf.size)[:]


def _enc(s: Optional[str]) -> Any:
    return ffi.NULL if s is None else s.encode("utf-8")


# ---------------------------------------------------------------------------
# Codec calls
# ---------------------------------------------------------------------------

def serializer_code(identity: str) -> str:
    if not isinstance(identity, str) or not identity:
        raise ConfigurationError(lib.CACHEKIT_EINVAL, "a serializer identity is a non-empty string")
    buf = _take()
    try:
        rc = lib.cachekit_serializer_code(buf, identity.encode("utf-8"))
        if rc != OK:
            raise last_error(rc, ConfigurationError)
        return _bytes(buf).decode()
    finally:
        _give(buf)


def key_auto(ns: Optional[str], module: str, qualname: str, args: bytes, integrity: bool, serializer: str) -> str:
    """cachekit_key_auto: the reference SDK's auto-mode key for normalised `[args, kwargs]` MessagePack."""
    if not isinstance(serializer, str) or not serializer:
        raise ConfigurationError(lib.CACHEKIT_EINVAL, "a serializer identity is a non-empty string, "
                                 f"got {serializer!r}")
    buf = _take()
    try:
        rc = lib.cachekit_key_auto(buf, ffi.NULL if not ns else ns.encode("utf-8"), module.encode("utf-8"),
                                   qualname.encode("utf-8"), args, len(args), 1 if integrity else 0,
                                   serializer.encode("utf-8"))
        if rc != OK:
            raise last_error(rc)
        return _bytes(buf).decode("utf-8")
    finally:
        _give(buf)


def key_interop(ns: str, operation: str, args: bytes) -> tuple[str, bytes]:
    """cachekit_key_interop: (key, canonical args bytes)."""
    out = _take()
    canon = _take()
    try:
        rc = lib.cachekit_key_interop(out, canon, ns.encode("utf-8", "surrogatepass"),
                                      operation.encode("utf-8", "surrogatepass"), args, len(args))
        if rc != OK:
            raise last_error(rc, InteropError)
        return _bytes(out).decode("utf-8"), _bytes(canon)
    finally:
        _give(out)
        _give(canon)


def msgpack_canonical(data: bytes, profile: int) -> bytes:
    buf = _take()
    try:
        rc = lib.cachekit_msgpack_canonical(buf, data, len(data), profile)
        if rc != OK:
            raise last_error(rc, InteropError)
        return _bytes(buf)
    finally:
        _give(buf)


def msgpack_check(data: bytes, max_depth: int = 0) -> None:
    rc = lib.cachekit_msgpack_check(data, len(data), max_depth)
    if rc != OK:
        raise last_error(rc)


# ---------------------------------------------------------------------------
# Backends (raw L2 handles; for tests, tools and sharing)
# ---------------------------------------------------------------------------

class Backend:
    """A raw L2 backend handle (cachekit_backend_open)."""

    def __init__(self, url: str, *, command_timeout_ms: int = 0, connect_timeout_ms: int = 0,
                 fail_closed: bool = False) -> None:
        opts = ffi.new("cachekit_backend_options *")
        _check(lib.cachekit_backend_options_init(opts, ffi.sizeof("cachekit_backend_options")), ConfigurationError)
        opts.command_timeout_ms = command_timeout_ms
        opts.connect_timeout_ms = connect_timeout_ms
        opts.fail_closed = 1 if fail_closed else 0
        out = ffi.new("cachekit_backend **")
        _check(lib.cachekit_backend_open(out, url.encode("utf-8"), opts), ConfigurationError)
        self._h = out[0]
        self.url = url

    @property
    def kind(self) -> str:
        return ffi.string(lib.cachekit_backend_kind(self._h)).decode()

    def get(self, key: bytes | str) -> Optional[bytes]:
        k = key.encode() if isinstance(key, str) else key
        buf = _take()
        try:
            rc = lib.cachekit_backend_get(self._h, buf, k, len(k))
            if rc == ENOTFOUND:
                return None
            _check(rc)
            return _bytes(buf)
        finally:
            _give(buf)

    def set(self, key: bytes | str, value: bytes, ttl: float = 0.0) -> None:
        k = key.encode() if isinstance(key, str) else key
        _check(lib.cachekit_backend_set(self._h, k, len(k), value, len(value), float(ttl)))

    def delete(self, key: bytes | str) -> bool:
        k = key.encode() if isinstance(key, str) else key
        rc = lib.cachekit_backend_delete(self._h, k, len(k))
        if rc == ENOTFOUND:
            return False
        _check(rc)
        return True

    def close(self) -> None:
        if self._h is not None:
            lib.cachekit_backend_free(self._h)
            self._h = None

    def __del__(self) -> None:  # pragma: no cover - best effort
        try:
            self.close()
        except Exception:
            pass


def _check(rc: int, cls: type[CacheKitError] | None = None) -> None:
    if rc != OK:
        raise last_error(rc, cls)


# ---------------------------------------------------------------------------
# Loader failures shared with the waiters of the same load
# ---------------------------------------------------------------------------
#
# The core's single-flight hands a failed load's waiters CACHEKIT_EUSER and the
# message the loader set. The Python loader keeps its exception here under a
# fresh token and puts the token in that message, so each waiter can raise the
# very same instance. The core does not say how many callers waited, so an
# exception is kept for _FAILURE_KEEP seconds (a woken waiter only needs the GIL
# to pick it up) and at most _FAILURE_MAX of them; a waiter that finds none
# (much later, or after a storm of failures) is told the load failed without
# the exception (LoadFailed.error None), like one whose loader was interrupted.

_FAILURE_KEEP = 30.0
_FAILURE_MAX = 1024
_LOAD_MARK = "[cachekit-py load "
_LOAD_TOKEN = re.compile(r"\[cachekit-py load (\d+)\] ")
# How the core's single-flight words a waiter's timeout (src/cache/single_flight.cpp);
# backend timeouts (fail-closed reads) say something else and stay BackendErrors.
_WAIT_TIMEOUT = "for another caller's load"


class _Failures:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.items: "OrderedDict[int, tuple]" = OrderedDict()  # token -> (exception, traceback, kept_until)
        self.last = 0

    def add(self, exc: BaseException) -> int:
        now = time.monotonic()
        with self.lock:
            self.last += 1
            self.items[self.last] = (exc, exc.__traceback__, now + _FAILURE_KEEP)
            self._prune(now)
            return self.last

    def get(self, token: int) -> Optional[tuple]:
        with self.lock:
            rec = self.items.get(token)
        return None if rec is None or rec[2] <= time.monotonic() else rec

    def prune(self) -> None:
        with self.lock:
            self._prune(time.monotonic())

    def _prune(self, now: float) -> None:
        items = self.items
        while items:
            token, rec = next(iter(items.items()))
            if rec[2] > now and len(items) <= _FAILURE_MAX:
                break
            del items[token]


_failures = _Failures()


def _reset_after_fork() -> None:  # pragma: no cover - fork only
    global _failures
    _failures = _Failures()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)


def _load_error(rc: int) -> CacheKitError:
    """The error of a get_or_load that did not run the loader itself."""
    msg = ffi.string(lib.cachekit_error_last_message()).decode("utf-8", "replace")
    if rc == lib.CACHEKIT_EUSER:
        err = LoadFailed(rc, msg)
        m = _LOAD_TOKEN.match(msg)
        rec = _failures.get(int(m.group(1))) if m else None
        if rec is not None:
            err.error, err.traceback = rec[0], rec[1]
        return err
    if rc == lib.CACHEKIT_ETIMEOUT and _WAIT_TIMEOUT in msg:
        return LoadTimeout(rc, msg)
    return _classify(rc, msg)


# ---------------------------------------------------------------------------
# The cache handle
# ---------------------------------------------------------------------------

class _LoadCtx:
    """What the loader callback needs; also carries the exception back across C."""

    __slots__ = ("compute", "error", "ttl")

    def __init__(self, compute: Callable[[], bytes]) -> None:
        self.compute = compute
        self.error: Optional[BaseException] = None
        self.ttl: Optional[float] = None


@ffi.def_extern()
def _cachekit_py_loader(load: Any, payload: Any) -> int:  # pragma: no cover - exercised via C
    ctx = ffi.from_handle(payload)
    try:
        data = ctx.compute()
        rc = lib.cachekit_load_set_value(load, data, len(data))
        if rc != OK:
            ctx.error = last_error(rc)
            _set_load_error(load, ctx.error)
            return 1
        if ctx.ttl is not None:
            lib.cachekit_load_set_ttl(load, ctx.ttl)
        if _failures.items:
            _failures.prune()
        return 0
    except BaseException as exc:  # never let a Python exception cross C
        ctx.error = exc
        _set_load_error(load, exc)
        return 1


def _set_load_error(load: Any, exc: BaseException) -> None:
    """The message the core hands this load's waiters: the token under which
    the exception is kept for them, or "interrupted" for a BaseException (the
    waiters then start over, as in object mode)."""
    try:
        tag = str(_failures.add(exc)) if isinstance(exc, Exception) else "interrupted"
        try:
            text = f"{type(exc).__name__}: {exc}"
        except Exception:
            text = type(exc).__name__
        msg = f"{_LOAD_MARK}{tag}] {text}"[:500]
        lib.cachekit_load_set_error(load, msg.encode("utf-8", "replace"))
    except Exception:
        pass


class CoreCache:
    """One cachekit_cache handle (L1 -> L2 with single-flight, SWR, verification)."""

    def __init__(self, *, backend_url: Optional[str] = None, backend: Optional[Backend] = None,
                 interop: bool = False, integrity: Optional[bool] = None, encryption: bool = False,
                 master_key: Optional[str] = None, tenant: Optional[str] = None, key_prefix: Optional[str] = None,
                 default_ttl: float = 0.0, l1: bool = True, l1_max_bytes: int = 0, swr: bool = False,
                 swr_threshold_ratio: float = 0.0, fail_closed: Optional[bool] = None,
                 command_timeout_ms: int = 0, connect_timeout_ms: int = 0, breaker_disabled: bool = False,
                 load_timeout_ms: int = 0) -> None:
        o = ffi.new("cachekit_cache_options *")
        _check(lib.cachekit_cache_options_init(o, ffi.sizeof("cachekit_cache_options")), ConfigurationError)
        keep = []  # keep the C strings alive until cachekit_cache_new copied them

        def cstr(s: Optional[str]) -> Any:
            if s is None:
                return ffi.NULL
            p = ffi.new("char[]", s.encode("utf-8"))
            keep.append(p)
            return p

        self._backend = backend  # borrowed by the core: keep it alive as long as the cache
        if backend is not None:
            o.backend = backend._h
        else:
            o.backend_url = cstr(backend_url)
        o.format = lib.CACHEKIT_FORMAT_INTEROP if interop else lib.CACHEKIT_FORMAT_AUTO
        if integrity is not None:
            o.integrity = lib.CACHEKIT_ON if integrity else lib.CACHEKIT_OFF
        o.encryption = lib.CACHEKIT_ON if encryption else lib.CACHEKIT_OFF
        secret = cstr(master_key)
        o.master_key_hex = secret
        o.tenant = cstr(tenant)
        o.key_prefix = cstr(key_prefix)
        o.default_ttl_seconds = float(default_ttl)
        o.l1 = lib.CACHEKIT_ON if l1 else lib.CACHEKIT_OFF
        o.l1_max_bytes = int(l1_max_bytes)
        o.swr = lib.CACHEKIT_ON if swr else lib.CACHEKIT_OFF
        o.swr_threshold_ratio = float(swr_threshold_ratio)
        if fail_closed is not None:
            o.fail_closed = lib.CACHEKIT_ON if fail_closed else lib.CACHEKIT_OFF
        o.load_timeout_ms = int(load_timeout_ms)
        bo = ffi.new("cachekit_backend_options *")
        _check(lib.cachekit_backend_options_init(bo, ffi.sizeof("cachekit_backend_options")), ConfigurationError)
        bo.command_timeout_ms = int(command_timeout_ms)
        bo.connect_timeout_ms = int(connect_timeout_ms)
        bo.breaker_disabled = 1 if breaker_disabled else 0
        o.backend_options = bo  # read during cachekit_cache_new only; `bo` lives until then
        out = ffi.new("cachekit_cache **")
        try:
            _check(lib.cachekit_cache_new(out, o), ConfigurationError)
        finally:
            if secret != ffi.NULL:  # the core decoded it: wipe our copy of the hex
                ffi.memmove(secret, bytes(ffi.sizeof(secret)), ffi.sizeof(secret))
        self._h = out[0]
        self._lock = threading.Lock()

    # Reads -----------------------------------------------------------------

    def get(self, ns: Optional[bytes], key: bytes) -> tuple[Optional[bytes], Any]:
        """(payload or None, cachekit_lookup)."""
        info = ffi.new("cachekit_lookup *", _LOOKUP_INIT)
        buf = _take()
        try:
            rc = lib.cachekit_cache_get(self._h, buf, info, ns if ns is not None else ffi.NULL, key, len(key))
            if rc == OK:
                return ffi.buffer(buf.ptr, buf.size)[:], info
            if rc == ENOTFOUND:
                return None, info
            raise last_error(rc)
        finally:
            _give(buf)

    def get_or_load(self, ns: Optional[bytes], key: bytes, ttl: float, compute: Callable[[], bytes],
                    decode: Optional[Callable[[Any, int], Any]] = None) -> tuple[Any, Any]:
        """Single-flight get-or-compute. `compute` returns the payload bytes;
        its exception is re-raised here, after the C call returned. Returns
        (payload bytes, info), or with `decode` (decode(payload,
        info.temporal_keys), info) where the payload is read in place (no
        copy) when the core checked it; (None, info) when this caller ran the
        loader (it has its own value). A caller that waited for another
        caller's load gets its value, or LoadFailed (carrying that loader's
        exception) or LoadTimeout."""
        info = ffi.new("cachekit_lookup *", _LOOKUP_INIT)
        ctx = _LoadCtx(compute)
        handle = ffi.new_handle(ctx)
        buf = _take()
        try:
            rc = lib.cachekit_cache_get_or_load(self._h, buf, info, ns if ns is not None else ffi.NULL, key,
                                                len(key), ttl, lib._cachekit_py_loader, handle)
            if ctx.error is not None:
                raise ctx.error
            if rc != OK:
                raise _load_error(rc)
            if info.source == SOURCE_LOADED:
                return None, info
            payload = ffi.buffer(buf.ptr, buf.size)
            if decode is None:
                return payload[:], info
            return decode(payload if info.temporal_keys >= 0 else payload[:], info.temporal_keys), info
        finally:
            _give(buf)
            ctx.error = None

    # Writes ----------------------------------------------------------------

    def put(self, ns: Optional[bytes], key: bytes, value: bytes, ttl: float) -> None:
        _check(lib.cachekit_cache_put(self._h, ns if ns is not None else ffi.NULL, key, len(key), value,
                                      len(value), ttl))

    def put_refresh(self, ns: Optional[bytes], key: bytes, value: bytes, ttl: float, claim: int) -> bool:
        rc = lib.cachekit_cache_put_refresh(self._h, ns if ns is not None else ffi.NULL, key, len(key), value,
                                            len(value), ttl, claim)
        if rc == ENOTFOUND:
            return False
        _check(rc)
        return True

    def abandon_refresh(self, key: bytes, claim: int) -> None:
        lib.cachekit_cache_abandon_refresh(self._h, key, len(key), claim)

    def invalidate(self, ns: Optional[bytes], key: bytes) -> None:
        _check(lib.cachekit_cache_invalidate(self._h, ns if ns is not None else ffi.NULL, key, len(key)))

    def invalidate_namespace(self, ns: bytes) -> None:
        _check(lib.cachekit_cache_invalidate_namespace(self._h, ns))

    def clear(self) -> None:
        _check(lib.cachekit_cache_clear(self._h))

    # Introspection -----------------------------------------------------------

    def stats(self, ns: Optional[bytes] = None) -> dict[str, Any]:
        st = ffi.new("cachekit_cache_stats *")
        st.struct_size = ffi.sizeof("cachekit_cache_stats")
        _check(lib.cachekit_cache_stats_get(self._h, st, ns if ns is not None else ffi.NULL))
        names = [n for n, _ in ffi.typeof("cachekit_cache_stats").fields if n != "struct_size"]
        return {n: getattr(st, n) for n in names}

    def metrics_text(self) -> str:
        buf = _take()
        try:
            _check(lib.cachekit_cache_metrics_text(self._h, buf))
            return _bytes(buf).decode("utf-8", "replace")
        finally:
            _give(buf)

    def close(self) -> None:
        with self._lock:
            if self._h is not None:
                lib.cachekit_cache_free(self._h)
                self._h = None
