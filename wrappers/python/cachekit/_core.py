"""Thin, typed layer over the cffi extension (cachekit._ffi).

Every core call goes through cffi's API mode, which releases the GIL for the
duration of the C call. Output buffers are cachekit_buf structs taken from a
small per-thread pool (a loader callback may re-enter the library on the same
thread while an outer call still owns its buffer). Bytes are copied out with
ffi.buffer(ptr, size)[:].
"""
from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Optional

from cachekit._ffi_import import import_ffi

ffi, lib = import_ffi()

__all__ = [
    "ffi", "lib", "CacheKitError", "ConfigurationError", "InteropError", "DecodeError", "ValueTooLargeError",
    "CacheMemoryError", "BackendError", "CacheTimeoutError", "CircuitOpenError", "IntegrityError",
    "DecryptionAuthenticationError", "DeadlockError", "LoadFailed", "LoadTimeout", "CoreCache", "Backend",
    "error_class", "call_error", "UnreadableValue",
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
# Threads of a core's executor (CoreCache.executor): its L2 calls for coroutine
# functions, each bounded by the backend's command timeout.
_L2_WORKERS = 8
_LOOKUP_INIT = {"struct_size": ffi.sizeof("cachekit_lookup"), "age_seconds": -1.0, "temporal_keys": -1}


class CacheKitError(Exception):
    """A libcachekit failure: `code` is the pinned status, `name` its stable name
    (docs/c-api.md; the names of shared/spec/codec-tool.md). The class is chosen
    from the code alone (error_class), never from the message."""

    def __init__(self, code: int, message: str = "") -> None:
        self.code = code
        self.name = ffi.string(lib.cachekit_error_name(code)).decode()
        self.message = message
        super().__init__(f"{self.name} ({code}): {message}" if message else f"{self.name} ({code})")


class ConfigurationError(CacheKitError, ValueError):
    """InvalidArgument, InvalidKey, CryptoUnavailable: the configuration or an
    argument is wrong (e.g. two backend selectors in the environment)."""


class InteropError(CacheKitError, ValueError):
    """UnsupportedType, InvalidSegment: an interop-mode key or value cannot be
    built (bad segment, unsupported value)."""


class DecodeError(CacheKitError, ValueError):
    """DeserializationFailed, DepthExceeded, Truncated, TrailingBytes,
    Overclaim, DecompressionBomb, DecompressionFailed, SizeValidationFailed:
    bytes that do not decode."""


class ValueTooLargeError(CacheKitError, ValueError):
    """InputTooLarge: a value over the cache's max_value_bytes (not stored)."""


class CacheMemoryError(CacheKitError, MemoryError):
    """OutOfMemory."""


class BackendError(CacheKitError):
    """BackendError, Busy: the L2 backend failed and the cache is fail-closed."""


class CacheTimeoutError(BackendError, TimeoutError):
    """Timeout: an L2 command (fail-closed) or a single-flight wait timed out."""


class CircuitOpenError(BackendError):
    """CircuitOpen: the backend's breaker is open (fail-closed)."""


class IntegrityError(CacheKitError):
    """Corrupt, ChecksumMismatch, InvalidFrame, KeyNotFound, InvalidCiphertext:
    a stored entry failed its checks and the cache is fail-closed."""


class DecryptionAuthenticationError(IntegrityError):
    """AuthenticationFailed: a ciphertext did not authenticate (fail-closed)."""


class DeadlockError(CacheKitError, RuntimeError):
    """Deadlock: a loader asked for its own key."""


class UnreadableValue(Exception):
    """CoreCache.get_or_load / peek: the stored payload was read but `decode`
    raised (`cause`): the caller treats the entry as a miss."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(f"a stored value could not be decoded: {cause!r}")
        self.cause = cause


class LoadFailed(CacheKitError):
    """UserError. CoreCache.get_or_load: this caller waited for another
    caller's load of the key and that load failed. `error` is the very
    exception the other caller's loader raised (`traceback` its traceback at
    the time), or None when that loader was interrupted by a BaseException
    (KeyboardInterrupt, cancellation...) or its exception is no longer kept:
    then nothing is known but that the load did not happen."""

    error: Optional[BaseException] = None
    traceback: Any = None


class LoadTimeout(CacheTimeoutError):
    """CoreCache.get_or_load on a fail-open cache: Timeout while this caller did
    not run the loader, i.e. it waited load_timeout_ms for another caller's load
    of the key and gave up (a fail-open cache reports no L2 timeout). The load
    itself goes on, and stores its value when it ends."""


# One class per status family; a code not listed (Internal, NonceExhausted...)
# is a plain CacheKitError.
_FAMILIES: dict[int, type[CacheKitError]] = {}
for _cls, _codes in (
        (ConfigurationError, ("EINVAL", "EKEY", "ECRYPTO_UNAVAILABLE")),
        (InteropError, ("EUNSUPPORTED", "ESEGMENT")),
        (DecodeError, ("EDESERIALIZE", "EDEPTH", "ETRUNCATED", "ETRAILING", "EOVERCLAIM", "EBOMB", "EDECOMPRESS",
                       "ESIZE")),
        (ValueTooLargeError, ("ETOOBIG",)),
        (CacheMemoryError, ("ENOMEM",)),
        (BackendError, ("EBACKEND", "EBUSY")),
        (CacheTimeoutError, ("ETIMEOUT",)),
        (CircuitOpenError, ("ECIRCUIT_OPEN",)),
        (IntegrityError, ("ECORRUPT", "ECHECKSUM", "EFRAME", "EKEYNOTFOUND", "ECIPHERTEXT")),
        (DecryptionAuthenticationError, ("EAUTH",)),
        (DeadlockError, ("EDEADLOCK",)),
        (LoadFailed, ("EUSER",))):
    for _name in _codes:
        _FAMILIES[getattr(lib, "CACHEKIT_" + _name)] = _cls


def error_class(code: int) -> type[CacheKitError]:
    return _FAMILIES.get(code, CacheKitError)


def call_error(err: Any) -> CacheKitError:
    """The exception for a failed `_ex` call, from its cachekit_error."""
    return error_class(err.code)(err.code, ffi.string(err.message).decode("utf-8", "replace"))


# ---------------------------------------------------------------------------
# Call slots: a per-thread pool of (cachekit_buf, cachekit_error) pairs
# ---------------------------------------------------------------------------
#
# Every call that returns a status goes through its `_ex` form with the
# slot's cachekit_error (the bindings' rule: never the thread-local last
# error). A loader callback may re-enter the library on the same thread while
# an outer call still owns its slot, hence a pool rather than one per thread.

_tls = threading.local()
_ERR_INIT = {"struct_size": ffi.sizeof("cachekit_error")}


def _new_slot() -> tuple[Any, Any]:
    return ffi.gc(ffi.new("cachekit_buf *"), lib.cachekit_buf_dispose), ffi.new("cachekit_error *", _ERR_INIT)


def _take() -> tuple[Any, Any]:
    try:
        return _tls.pool.pop()
    except AttributeError:
        _tls.pool = []
        return _new_slot()
    except IndexError:
        return _new_slot()


def _give(slot: tuple[Any, Any]) -> None:
    pool = _tls.pool
    if len(pool) < 8:
        if slot[0].capacity > (1 << 22):  # do not keep huge buffers around
            lib.cachekit_buf_dispose(slot[0])
        pool.append(slot)


def _bytes(buf: Any) -> bytes:
    return ffi.buffer(buf.ptr, buf.size)[:]


def _enc(s: Optional[str]) -> Any:
    return ffi.NULL if s is None else s.encode("utf-8")


def _new_err() -> Any:
    return ffi.new("cachekit_error *", _ERR_INIT)


def _check(rc: int, err: Any) -> None:
    if rc != OK:
        raise call_error(err)


# ---------------------------------------------------------------------------
# Codec calls
# ---------------------------------------------------------------------------

def serializer_code(identity: str) -> str:
    if not isinstance(identity, str) or not identity:
        raise ConfigurationError(lib.CACHEKIT_EINVAL, "a serializer identity is a non-empty string")
    slot = _take()
    buf, err = slot
    try:
        _check(lib.cachekit_serializer_code_ex(buf, identity.encode("utf-8"), err), err)
        return _bytes(buf).decode()
    finally:
        _give(slot)


def key_auto(ns: Optional[str], module: str, qualname: str, args: bytes, integrity: bool, serializer: str) -> str:
    """cachekit_key_auto: the reference SDK's auto-mode key for normalised `[args, kwargs]` MessagePack."""
    if not isinstance(serializer, str) or not serializer:
        raise ConfigurationError(lib.CACHEKIT_EINVAL, "a serializer identity is a non-empty string, "
                                 f"got {serializer!r}")
    slot = _take()
    buf, err = slot
    try:
        _check(lib.cachekit_key_auto_ex(buf, ffi.NULL if not ns else ns.encode("utf-8"), module.encode("utf-8"),
                                        qualname.encode("utf-8"), args, len(args), 1 if integrity else 0,
                                        serializer.encode("utf-8"), err), err)
        return _bytes(buf).decode("utf-8")
    finally:
        _give(slot)


def key_custom(ns: Optional[str], module: str, qualname: str, key: str) -> str:
    """cachekit_key_custom: the reference SDK's (0.24+) key of a function with
    key=: 16 hex of BLAKE3("{module}.{qualname}"), "-", the namespace (or
    "default"), ":", the key function's string."""
    raw = key.encode("utf-8")
    slot = _take()
    buf, err = slot
    try:
        _check(lib.cachekit_key_custom_ex(buf, ffi.NULL if not ns else ns.encode("utf-8"), module.encode("utf-8"),
                                          qualname.encode("utf-8"), raw, len(raw), err), err)
        return _bytes(buf).decode("utf-8")
    finally:
        _give(slot)


def key_interop(ns: str, operation: str, args: bytes) -> tuple[str, bytes]:
    """cachekit_key_interop: (key, canonical args bytes)."""
    slot = _take()
    canon_slot = _take()
    out, err = slot
    try:
        _check(lib.cachekit_key_interop_ex(out, canon_slot[0], ns.encode("utf-8", "surrogatepass"),
                                           operation.encode("utf-8", "surrogatepass"), args, len(args), err), err)
        return _bytes(out).decode("utf-8"), _bytes(canon_slot[0])
    finally:
        _give(slot)
        _give(canon_slot)


def msgpack_canonical(data: bytes, profile: int) -> bytes:
    slot = _take()
    buf, err = slot
    try:
        _check(lib.cachekit_msgpack_canonical_ex(buf, data, len(data), profile, err), err)
        return _bytes(buf)
    finally:
        _give(slot)


def msgpack_check(data: bytes, max_depth: int = 0) -> None:
    err = _new_err()
    _check(lib.cachekit_msgpack_check_ex(data, len(data), max_depth, err), err)


# ---------------------------------------------------------------------------
# Backends (raw L2 handles; for tests, tools and sharing)
# ---------------------------------------------------------------------------

# redis-py's TLS keywords, as Backend, CoreCache(tls=...) and RedisBackend take them.
TLS_KEYWORDS = ("ssl", "ssl_cert_reqs", "ssl_ca_certs", "ssl_ca_path", "ssl_certfile", "ssl_keyfile",
                "ssl_check_hostname")

_CERT_REQS = {"required": lib.CACHEKIT_TLS_CERT_REQUIRED, "optional": lib.CACHEKIT_TLS_CERT_OPTIONAL,
              "none": lib.CACHEKIT_TLS_CERT_NONE}


def tls_options(**kw: Any) -> dict[str, Any]:
    """The TLS keywords that are set (None and ssl=False are unset), checked by type:
    a typo'd or unknown keyword is a TypeError, as a mistyped keyword argument is."""
    unknown = set(kw) - set(TLS_KEYWORDS)
    if unknown:
        raise TypeError(f"unexpected TLS keyword(s): {', '.join(sorted(unknown))}")
    return {k: v for k, v in kw.items() if v is not None and not (k == "ssl" and v is False)}


def _cert_reqs_name(value: Any) -> str:
    # redis-py takes "required"/"optional"/"none" and ssl.CERT_* (an IntEnum 0 none, 1 optional, 2 required).
    import ssl as _ssl
    if isinstance(value, _ssl.VerifyMode):
        return {_ssl.CERT_REQUIRED: "required", _ssl.CERT_OPTIONAL: "optional", _ssl.CERT_NONE: "none"}[value]
    if isinstance(value, str) and value.lower() in _CERT_REQS:
        return value.lower()
    raise ConfigurationError(lib.CACHEKIT_EINVAL, f'ssl_cert_reqs must be "required", "optional", "none" or an '
                             f"ssl.CERT_* value, got {value!r}")


def _set_tls(bo: Any, tls: Optional[dict[str, Any]], keep: list) -> None:
    """Copy redis-py's TLS keywords into the cachekit_backend_options `bo`; the C strings
    go to `keep`, alive until the open has copied them."""
    if not tls:
        return
    import os as _os
    opts = tls_options(**tls)

    def path(name: str) -> Any:
        v = opts.get(name)
        if v is None:
            return ffi.NULL
        if not isinstance(v, (str, bytes, _os.PathLike)):
            raise TypeError(f"{name} must be a path (str or os.PathLike), got {type(v).__name__}")
        raw = _os.fsencode(v)
        if b"\0" in raw:
            raise ConfigurationError(lib.CACHEKIT_EINVAL, f"{name} contains a NUL byte")
        p = ffi.new("char[]", raw)
        keep.append(p)
        return p

    if "ssl" in opts:
        if not isinstance(opts["ssl"], bool):
            raise TypeError(f"ssl must be a bool, got {type(opts['ssl']).__name__}")
        bo.tls = 1
    if "ssl_cert_reqs" in opts:
        bo.tls_cert_reqs = _CERT_REQS[_cert_reqs_name(opts["ssl_cert_reqs"])]
    if "ssl_check_hostname" in opts:
        if not isinstance(opts["ssl_check_hostname"], bool):
            raise TypeError(f"ssl_check_hostname must be a bool, got {type(opts['ssl_check_hostname']).__name__}")
        bo.tls_check_hostname = (lib.CACHEKIT_TLS_CHECK_HOSTNAME_YES if opts["ssl_check_hostname"]
                                 else lib.CACHEKIT_TLS_CHECK_HOSTNAME_NO)
    bo.tls_ca_certs = path("ssl_ca_certs")
    bo.tls_ca_path = path("ssl_ca_path")
    bo.tls_certfile = path("ssl_certfile")
    bo.tls_keyfile = path("ssl_keyfile")


class Backend:
    """A raw L2 backend handle (cachekit_backend_open). The ssl* keywords are redis-py's
    (docs/redis.md "TLS as options"); the URL's own ssl_* parameters win over them."""

    def __init__(self, url: str, *, command_timeout_ms: int = 0, connect_timeout_ms: int = 0,
                 pool_size: int = 0, fail_closed: bool = False, ssl: Optional[bool] = None, ssl_cert_reqs: Any = None,
                 ssl_ca_certs: Any = None, ssl_ca_path: Any = None, ssl_certfile: Any = None,
                 ssl_keyfile: Any = None, ssl_check_hostname: Optional[bool] = None) -> None:
        err = _new_err()
        opts = ffi.new("cachekit_backend_options *")
        _check(lib.cachekit_backend_options_init_ex(opts, ffi.sizeof("cachekit_backend_options"), err), err)
        opts.command_timeout_ms = command_timeout_ms
        opts.connect_timeout_ms = connect_timeout_ms
        if isinstance(pool_size, bool) or not isinstance(pool_size, int) or not 0 <= pool_size <= 0xFFFFFFFF:
            raise ConfigurationError(lib.CACHEKIT_EINVAL, "pool_size must be 0 (the core's default, 10) "
                                     f"or a positive whole number, not {pool_size!r}")
        opts.pool_size = pool_size  # Redis connections per node at most
        opts.fail_closed = 1 if fail_closed else 0
        keep: list = []
        _set_tls(opts, dict(ssl=ssl, ssl_cert_reqs=ssl_cert_reqs, ssl_ca_certs=ssl_ca_certs, ssl_ca_path=ssl_ca_path,
                            ssl_certfile=ssl_certfile, ssl_keyfile=ssl_keyfile,
                            ssl_check_hostname=ssl_check_hostname), keep)
        out = ffi.new("cachekit_backend **")
        _check(lib.cachekit_backend_open_ex(out, url.encode("utf-8"), opts, err), err)
        self._h = out[0]
        self.url = url

    @property
    def kind(self) -> str:
        return ffi.string(lib.cachekit_backend_kind(self._h)).decode()

    def get(self, key: bytes | str) -> Optional[bytes]:
        k = key.encode() if isinstance(key, str) else key
        slot = _take()
        buf, err = slot
        try:
            rc = lib.cachekit_backend_get_ex(self._h, buf, k, len(k), err)
            if rc == ENOTFOUND:
                return None
            _check(rc, err)
            return _bytes(buf)
        finally:
            _give(slot)

    def set(self, key: bytes | str, value: bytes, ttl: float = 0.0) -> None:
        k = key.encode() if isinstance(key, str) else key
        err = _new_err()
        _check(lib.cachekit_backend_set_ex(self._h, k, len(k), value, len(value), float(ttl), err), err)

    def delete(self, key: bytes | str) -> bool:
        k = key.encode() if isinstance(key, str) else key
        err = _new_err()
        rc = lib.cachekit_backend_delete_ex(self._h, k, len(k), err)
        if rc == ENOTFOUND:
            return False
        _check(rc, err)
        return True

    def exists(self, key: bytes | str) -> bool:
        k = key.encode() if isinstance(key, str) else key
        err = _new_err()
        rc = lib.cachekit_backend_exists_ex(self._h, k, len(k), err)
        if rc == ENOTFOUND:
            return False
        _check(rc, err)
        return True

    def ttl(self, key: bytes | str) -> Optional[float]:
        """Seconds left: -1.0 for a key without expiry, None when the key does not exist."""
        k = key.encode() if isinstance(key, str) else key
        err = _new_err()
        out = ffi.new("double *")
        rc = lib.cachekit_backend_ttl_ex(self._h, out, k, len(k), err)
        if rc == ENOTFOUND:
            return None
        _check(rc, err)
        return float(out[0])

    def incr(self, key: bytes | str, delta: int = 1) -> Optional[int]:
        """Add `delta` to the integer stored as decimal digits, atomically and in one round
        trip (a script on Redis), its TTL kept: the new value, or None when the key does not
        exist (nothing is created). A value that is no 64-bit integer raises the EUNSUPPORTED
        error (InteropError), a result past 64 bits the ETOOBIG one (ValueTooLargeError)."""
        k = key.encode() if isinstance(key, str) else key
        if not -(1 << 63) <= delta < (1 << 63):
            raise OverflowError(f"incr: delta {delta} does not fit in a signed 64-bit integer")
        err = _new_err()
        out = ffi.new("int64_t *")
        rc = lib.cachekit_backend_incr_ex(self._h, out, k, len(k), delta, err)
        if rc == ENOTFOUND:
            return None
        _check(rc, err)
        return int(out[0])

    def add(self, key: bytes | str, value: bytes, ttl: float = 0.0) -> bool:
        """Store only if the key does not exist (SET NX PX on Redis): True when stored."""
        k = key.encode() if isinstance(key, str) else key
        err = _new_err()
        added = ffi.new("int *")
        _check(lib.cachekit_backend_add_ex(self._h, added, k, len(k), value, len(value), float(ttl), err), err)
        return bool(added[0])

    def touch(self, key: bytes | str, ttl: float = 0.0) -> bool:
        """A new TTL from now for an existing key (0: no expiry), its value left alone: True
        when the key existed."""
        k = key.encode() if isinstance(key, str) else key
        err = _new_err()
        rc = lib.cachekit_backend_touch_ex(self._h, k, len(k), float(ttl), err)
        if rc == ENOTFOUND:
            return False
        _check(rc, err)
        return True

    def delete_many(self, keys: list[bytes]) -> int:
        """Delete the keys in one round trip (UNLINK on Redis, one per slot on a cluster):
        how many existed."""
        if not keys:
            return 0
        packed, key_offsets = self._packed(keys)
        err = _new_err()
        deleted = ffi.new("uint64_t *")
        _check(lib.cachekit_backend_delete_many_packed_ex(self._h, deleted, packed, key_offsets, len(keys), err), err)
        return int(deleted[0])

    @staticmethod
    def _packed(items: list[bytes]) -> tuple[bytes, Any]:
        offsets = ffi.new("size_t[]", len(items) + 1)
        pos = 0
        for i, b in enumerate(items):
            offsets[i] = pos
            pos += len(b)
        offsets[len(items)] = pos
        return b"".join(items), offsets

    def get_many(self, keys: list[bytes]) -> list[Optional[bytes]]:
        """One round trip (MGET on Redis): each key's bytes, None for a miss."""
        if not keys:
            return []
        packed, key_offsets = self._packed(keys)
        n = len(keys)
        value_offsets = ffi.new("size_t[]", n + 1)
        results = ffi.new("int[]", n)
        slot = _take()
        buf, err = slot
        try:
            _check(lib.cachekit_backend_get_many_packed_ex(self._h, buf, value_offsets, results, packed,
                                                           key_offsets, n, err), err)
            data = _bytes(buf)
            return [data[value_offsets[i]:value_offsets[i + 1]] if results[i] == OK else None for i in range(n)]
        finally:
            _give(slot)

    def set_many(self, items: list[tuple[bytes, bytes]], ttl: float = 0.0) -> None:
        """One round trip (pipelined SET), every value with the one TTL (0: no expiry)."""
        if not items:
            return
        keys, key_offsets = self._packed([k for k, _ in items])
        values, value_offsets = self._packed([v for _, v in items])
        err = _new_err()
        _check(lib.cachekit_backend_set_many_packed_ex(self._h, keys, key_offsets, values, value_offsets,
                                                       len(items), float(ttl), err), err)

    def clear_prefix(self, prefix: bytes) -> int:
        """Delete every key starting with `prefix` (SCAN + UNLINK on Redis); the count deleted.
        An empty prefix is the whole database or directory: refused here (ValueError)."""
        if not prefix:
            raise ValueError("clear_prefix needs a non-empty prefix (the whole database is clear_all)")
        return self._clear(prefix)

    def clear_all(self) -> int:
        """Delete every key of the backend: the whole Redis database, the whole file directory."""
        return self._clear(b"")

    def _clear(self, prefix: bytes) -> int:
        err = _new_err()
        deleted = ffi.new("uint64_t *")
        _check(lib.cachekit_backend_clear_ex(self._h, deleted, prefix, len(prefix), err), err)
        return int(deleted[0])

    def lock(self, key: bytes, hold_ms: int) -> Optional[bytes]:
        """Take the lock `key` for hold_ms (SET NX PX on Redis): its token, or None when held."""
        slot = _take()
        buf, err = slot
        try:
            rc = lib.cachekit_backend_lock_ex(self._h, buf, key, len(key), hold_ms, err)
            if rc == lib.CACHEKIT_EBUSY:
                return None
            _check(rc, err)
            return _bytes(buf)
        finally:
            _give(slot)

    def unlock(self, key: bytes, token: bytes) -> bool:
        """Release the lock if `token` still owns it (False: it lapsed or another holds it)."""
        err = _new_err()
        rc = lib.cachekit_backend_unlock_ex(self._h, key, len(key), token, len(token), err)
        if rc == ENOTFOUND:
            return False
        _check(rc, err)
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


# ---------------------------------------------------------------------------
# Loader failures shared with the waiters of the same load
# ---------------------------------------------------------------------------
#
# The core's single-flight hands a failed load's waiters CACHEKIT_EUSER. The
# Python loader keeps its exception per key here (in the CoreCache), with a
# sequence number, so that each waiter can raise the very same instance: a
# waiter takes the record of its key made after its own call began (the load
# it waited for failed after it asked; should a newer load of the key have
# failed too before the waiter ran, it gets that one, an equally true answer).
# Nothing is read from the error message. The core does not say how many
# callers waited, so a record is kept _FAILURE_KEEP seconds (a woken waiter
# only needs the GIL to pick it up) and at most _FAILURE_MAX of them; a waiter
# that finds none (much later, or after a storm of failures) is told the load
# failed without the exception (LoadFailed.error None), like one whose loader
# was interrupted (its record holds None).

_FAILURE_KEEP = 30.0
_FAILURE_MAX = 1024


class _Failures:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        # key -> (exception or None, traceback, sequence number, kept_until)
        self.items: "OrderedDict[bytes, tuple]" = OrderedDict()
        self.seq = 0  # of the last failure: a caller notes it before its call (an attribute read)

    def add(self, key: bytes, exc: Optional[BaseException]) -> None:
        now = time.monotonic()
        with self.lock:
            self.seq += 1
            self.items.pop(key, None)
            self.items[key] = (exc, exc.__traceback__ if exc is not None else None, self.seq, now + _FAILURE_KEEP)
            self._prune(now)

    def get(self, key: bytes, since: int) -> Optional[tuple]:
        """The failure of `key` recorded after failure number `since`, if still kept."""
        with self.lock:
            rec = self.items.get(key)
        if rec is None or rec[2] <= since or rec[3] <= time.monotonic():
            return None
        return rec

    def prune(self) -> None:
        with self.lock:
            self._prune(time.monotonic())

    def _prune(self, now: float) -> None:
        items = self.items
        while items:
            key, rec = next(iter(items.items()))
            if rec[3] > now and len(items) <= _FAILURE_MAX:
                break
            del items[key]


# ---------------------------------------------------------------------------
# The cache handle
# ---------------------------------------------------------------------------

# The core's failure events (docs/operations.md, "Seeing failures") go to this
# logger: WARNING for backend_down, breaker_open, coherence_suspended, INFO for
# backend_recovered, coherence_resumed (the core passes logging's numbers).
_LOGGER = logging.getLogger("cachekit")


@ffi.def_extern()
def _cachekit_py_log(level: int, event: Any, message: Any, user_data: Any) -> None:  # pragma: no cover - via C
    # Called on whatever thread noticed (a caller's or a coherence feed's): cffi
    # takes the GIL. A static function pointer, so it stays valid after fork().
    try:
        name = ffi.string(event).decode("utf-8", "replace")
        _LOGGER.log(level, "%s", ffi.string(message).decode("utf-8", "replace"),
                    extra={"cachekit_event": name})
    except BaseException:  # nothing may cross back into C
        pass


lib.cachekit_set_log_handler(lib._cachekit_py_log, ffi.NULL)

HEALTH_STATES = {lib.CACHEKIT_HEALTH_OK: "ok", lib.CACHEKIT_HEALTH_DOWN: "down",
                 lib.CACHEKIT_HEALTH_BREAKER_OPEN: "breaker_open"}
COHERENCE_STATES = {lib.CACHEKIT_COHERENCE_OFF: "off", lib.CACHEKIT_COHERENCE_LIVE: "live",
                    lib.CACHEKIT_COHERENCE_SUSPENDED: "suspended"}


def health_dict(h: Any) -> dict[str, Any]:
    """A cachekit_health as a dict (state and coherence by name; None for "never")."""
    return {
        "state": HEALTH_STATES.get(h.state, str(h.state)),
        "backend": ffi.string(h.backend).decode("utf-8", "replace"),
        "last_error": ffi.string(h.last_error).decode("utf-8", "replace") or None,
        "last_error_at": h.last_error_at or None,
        "since": h.since or None,
        "consecutive_failures": int(h.consecutive_failures),
        "coherence": COHERENCE_STATES.get(h.coherence, str(h.coherence)),
    }


class _LoadCtx:
    """What the loader callback needs; also carries the exception back across C."""

    __slots__ = ("compute", "error", "ttl", "ran", "key", "failures")

    def __init__(self, compute: Callable[[], bytes], key: bytes, failures: _Failures) -> None:
        self.compute = compute
        self.error: Optional[BaseException] = None
        self.ttl: Optional[float] = None
        self.ran = False
        self.key = key
        self.failures = failures


@ffi.def_extern()
def _cachekit_py_loader(load: Any, payload: Any) -> int:  # pragma: no cover - exercised via C
    ctx = ffi.from_handle(payload)
    ctx.ran = True
    try:
        data = ctx.compute()
        err = _new_err()
        rc = lib.cachekit_load_set_value_ex(load, data, len(data), err)
        if rc != OK:
            ctx.error = call_error(err)
            _set_load_error(load, ctx, ctx.error)
            return 1
        if ctx.ttl is not None:
            lib.cachekit_load_set_ttl_ex(load, ctx.ttl, err)
        if ctx.failures.items:
            ctx.failures.prune()
        return 0
    except BaseException as exc:  # never let a Python exception cross C
        ctx.error = exc
        _set_load_error(load, ctx, exc)
        return 1


def _set_load_error(load: Any, ctx: _LoadCtx, exc: BaseException) -> None:
    """Keep the exception for this load's waiters (None for a BaseException:
    the waiters then start over, as in object mode) and give the core a
    message for its logs."""
    try:
        ctx.failures.add(ctx.key, exc if isinstance(exc, Exception) else None)
        try:
            text = f"{type(exc).__name__}: {exc}"
        except Exception:
            text = type(exc).__name__
        lib.cachekit_load_set_error_ex(load, text[:500].encode("utf-8", "replace"), _new_err())
    except Exception:
        pass


class CoreCache:
    """One cachekit_cache handle (L1 -> L2 with single-flight, SWR, verification).

    ``interop=True`` stores interop/v1 (no ``key_prefix``); ``plain=True`` stores the same
    plain MessagePack under any key, a ``key_prefix`` allowed: cachekit-rs's get/set under a
    client ``.namespace(ns)`` is ``plain=True, key_prefix=ns + ":"``.
    """

    def __init__(self, *, backend_url: Optional[str] = None, backend: Optional[Backend] = None,
                 interop: bool = False, plain: bool = False, auto_serializer: bool = False, integrity: Optional[bool] = None,
                 encryption: bool = False, master_key: Optional[str] = None, tenant: Optional[str] = None, key_prefix: Optional[str] = None,
                 default_ttl: float = 0.0, l1: bool = True, l1_max_bytes: int = 0, swr: bool = False,
                 swr_threshold_ratio: float = 0.0, fail_closed: Optional[bool] = None,
                 command_timeout_ms: int = 0, connect_timeout_ms: int = 0, breaker_disabled: bool = False,
                 load_timeout_ms: int = 0, breaker_failures: int = 0, breaker_successes: int = 0,
                 breaker_half_open_calls: int = 0, breaker_recovery_ms: int = 0, max_concurrency: int = 0,
                 backpressure_wait_ms: int = 0, refresh_ttl_on_get: float = 0.0,
                 l1_admission: Optional[str] = None, tls: Optional[dict[str, Any]] = None) -> None:
        err = _new_err()
        o = ffi.new("cachekit_cache_options *")
        _check(lib.cachekit_cache_options_init_ex(o, ffi.sizeof("cachekit_cache_options"), err), err)
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
        o.format = (lib.CACHEKIT_FORMAT_INTEROP if interop else lib.CACHEKIT_FORMAT_PLAIN if plain else
                    lib.CACHEKIT_FORMAT_AUTO_PYTHON if auto_serializer else lib.CACHEKIT_FORMAT_AUTO)
        if integrity is not None:
            o.integrity = lib.CACHEKIT_ON if integrity else lib.CACHEKIT_OFF
        o.encryption = lib.CACHEKIT_ON if encryption else lib.CACHEKIT_OFF
        secret = cstr(master_key)
        o.master_key_hex = secret
        o.tenant = cstr(tenant)
        o.key_prefix = cstr(key_prefix)
        o.default_ttl_seconds = float(default_ttl)
        o.refresh_ttl_on_get = float(refresh_ttl_on_get)
        o.l1 = lib.CACHEKIT_ON if l1 else lib.CACHEKIT_OFF
        o.l1_max_bytes = int(l1_max_bytes)
        # None and "lru" leave the field at LRU (0), where CACHEKIT_L1_ADMISSION may choose.
        if l1_admission not in (None, "lru", "tinylfu"):
            raise ConfigurationError(lib.CACHEKIT_EINVAL, f'l1_admission must be "lru" or "tinylfu", got {l1_admission!r}')
        o.l1_admission = lib.CACHEKIT_L1_ADMISSION_TINYLFU if l1_admission == "tinylfu" else lib.CACHEKIT_L1_ADMISSION_LRU
        o.swr = lib.CACHEKIT_ON if swr else lib.CACHEKIT_OFF
        o.swr_threshold_ratio = float(swr_threshold_ratio)
        if fail_closed is not None:
            o.fail_closed = lib.CACHEKIT_ON if fail_closed else lib.CACHEKIT_OFF
        o.load_timeout_ms = int(load_timeout_ms)
        bo = ffi.new("cachekit_backend_options *")
        _check(lib.cachekit_backend_options_init_ex(bo, ffi.sizeof("cachekit_backend_options"), err), err)
        bo.command_timeout_ms = int(command_timeout_ms)
        bo.connect_timeout_ms = int(connect_timeout_ms)
        bo.breaker_disabled = 1 if breaker_disabled else 0
        bo.breaker_failures = int(breaker_failures)  # 0 keeps each default
        bo.breaker_successes = int(breaker_successes)
        bo.breaker_half_open_calls = int(breaker_half_open_calls)
        bo.breaker_recovery_ms = int(breaker_recovery_ms)
        bo.max_concurrency = int(max_concurrency)
        bo.backpressure_wait_ms = int(backpressure_wait_ms)
        _set_tls(bo, tls, keep)  # redis-py's ssl* keywords (a RedisBackend's)
        o.backend_options = bo  # read during cachekit_cache_new only; `bo` lives until then
        out = ffi.new("cachekit_cache **")
        try:
            _check(lib.cachekit_cache_new_ex(out, o, err), err)
        finally:
            if secret != ffi.NULL:  # the core decoded it: wipe our copy of the hex
                ffi.memmove(secret, bytes(ffi.sizeof(secret)), ffi.sizeof(secret))
        self._h = out[0]
        self._lock = threading.Lock()
        # Fail-closed is only ever explicit (the core's default is off): on a
        # fail-open cache a Timeout of a call that ran no loader is a wait.
        self._fail_closed = bool(fail_closed)
        self._failures = _Failures()
        self._executor: Optional[ThreadPoolExecutor] = None

    # Reads -----------------------------------------------------------------

    def get(self, ns: Optional[bytes], key: bytes) -> tuple[Optional[bytes], Any]:
        """(payload or None, cachekit_lookup)."""
        return self._lookup(lib.cachekit_cache_get_ex, ns, key)

    def get_for_load(self, ns: Optional[bytes], key: bytes) -> tuple[Optional[bytes], Any]:
        """get for a caller that computes a missing value itself: on a miss
        (None), info.refresh_claim is a load claim, to land with put_refresh
        or release with abandon_refresh (cachekit_cache_get_for_load)."""
        return self._lookup(lib.cachekit_cache_get_for_load_ex, ns, key)

    def _lookup(self, call: Any, ns: Optional[bytes], key: bytes) -> tuple[Optional[bytes], Any]:
        info = ffi.new("cachekit_lookup *", _LOOKUP_INIT)
        slot = _take()
        buf, err = slot
        try:
            rc = call(self._h, buf, info, ns if ns is not None else ffi.NULL, key, len(key), err)
            if rc == OK:
                return ffi.buffer(buf.ptr, buf.size)[:], info
            if rc == ENOTFOUND:
                return None, info
            raise call_error(err)
        finally:
            _give(slot)

    def peek(self, ns: Optional[bytes], key: bytes, decode: Callable[[Any, int], Any]) -> Optional[tuple[Any, Any]]:
        """An L1 hit as (decode(payload, -1), info), else None: cachekit_cache_peek,
        which never reads or waits on L2 (safe on an event loop)."""
        info = ffi.new("cachekit_lookup *", _LOOKUP_INIT)
        slot = _take()
        buf, err = slot
        try:
            rc = lib.cachekit_cache_peek_ex(self._h, buf, info, ns if ns is not None else ffi.NULL, key, len(key),
                                            err)
            if rc == OK:
                try:
                    return decode(ffi.buffer(buf.ptr, buf.size)[:], -1), info
                except Exception as exc:
                    raise UnreadableValue(exc) from None
            if rc == ENOTFOUND:
                return None
            raise call_error(err)
        finally:
            _give(slot)

    def executor(self) -> ThreadPoolExecutor:
        """The threads this core's blocking L2 calls run on for coroutine
        functions (never the event loop's default executor, which user code
        may fill)."""
        ex = self._executor
        if ex is None:
            with self._lock:
                if self._executor is None:
                    self._executor = ThreadPoolExecutor(max_workers=_L2_WORKERS, thread_name_prefix="cachekit-l2")
                ex = self._executor
        return ex

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
        ctx = _LoadCtx(compute, key, self._failures)
        handle = ffi.new_handle(ctx)
        slot = _take()
        buf, err = slot
        since = self._failures.seq
        try:
            rc = lib.cachekit_cache_get_or_load_ex(self._h, buf, info, ns if ns is not None else ffi.NULL, key,
                                                   len(key), ttl, lib._cachekit_py_loader, handle, err)
            if ctx.error is not None:
                raise ctx.error
            if rc != OK:
                raise self._load_error(err, ctx, since)
            if info.source == SOURCE_LOADED:
                return None, info
            payload = ffi.buffer(buf.ptr, buf.size)
            if decode is None:
                return payload[:], info
            try:
                return decode(payload if info.temporal_keys >= 0 else payload[:], info.temporal_keys), info
            except Exception as exc:
                raise UnreadableValue(exc) from None
        finally:
            _give(slot)
            ctx.error = None

    def _load_error(self, err: Any, ctx: _LoadCtx, since: int) -> CacheKitError:
        """The error of a get_or_load whose loader (if it ran) succeeded."""
        code = err.code
        if code == lib.CACHEKIT_EUSER:
            exc = LoadFailed(code, ffi.string(err.message).decode("utf-8", "replace"))
            rec = self._failures.get(ctx.key, since)
            if rec is not None:
                exc.error, exc.traceback = rec[0], rec[1]
            return exc
        if code == lib.CACHEKIT_ETIMEOUT and not ctx.ran and not self._fail_closed:
            return LoadTimeout(code, ffi.string(err.message).decode("utf-8", "replace"))
        return call_error(err)

    # Writes ----------------------------------------------------------------

    def put(self, ns: Optional[bytes], key: bytes, value: bytes, ttl: float) -> None:
        err = _new_err()
        _check(lib.cachekit_cache_put_ex(self._h, ns if ns is not None else ffi.NULL, key, len(key), value,
                                         len(value), ttl, err), err)

    def put_refresh(self, ns: Optional[bytes], key: bytes, value: bytes, ttl: float, claim: int) -> bool:
        err = _new_err()
        rc = lib.cachekit_cache_put_refresh_ex(self._h, ns if ns is not None else ffi.NULL, key, len(key), value,
                                               len(value), ttl, claim, err)
        if rc == ENOTFOUND:
            return False
        _check(rc, err)
        return True

    def abandon_refresh(self, key: bytes, claim: int) -> None:
        lib.cachekit_cache_abandon_refresh_ex(self._h, key, len(key), claim, _new_err())

    def invalidate(self, ns: Optional[bytes], key: bytes) -> None:
        err = _new_err()
        _check(lib.cachekit_cache_invalidate_ex(self._h, ns if ns is not None else ffi.NULL, key, len(key), err), err)

    def invalidate_reported(self, ns: Optional[bytes], key: bytes) -> bool:
        """invalidate, and whether the L2 delete returned normally. Under fail-open the
        core counts a failed delete (backend_errors / timeouts) and returns OK, so the
        counters tell; summed over every namespace (one's own series may be folded), so
        another thread's failure meanwhile can turn True into False, never the reverse."""
        before = self._l2_failures()
        self.invalidate(ns, key)
        return self._l2_failures() == before

    def _l2_failures(self) -> int:
        st = self.stats(None)
        return int(st["backend_errors"]) + int(st["timeouts"])

    def invalidate_namespace(self, ns: bytes) -> None:
        err = _new_err()
        _check(lib.cachekit_cache_invalidate_namespace_ex(self._h, ns, err), err)

    def clear(self) -> None:
        err = _new_err()
        _check(lib.cachekit_cache_clear_ex(self._h, err), err)

    def track_function(self, ns: bytes, function: bytes, head: bytes) -> bool:
        """Declare a function for the key registry (docs/redis.md "Key registry"):
        True when the L2 keeps registries (Redis)."""
        err = _new_err()
        kept = ffi.new("int *")
        _check(lib.cachekit_cache_track_function_ex(self._h, ns, function, head, len(head), kept, err), err)
        return bool(kept[0])

    def invalidate_function(self, ns: bytes, function: bytes) -> int:
        """Delete every key the function's registry lists (any process's); the number drained."""
        err = _new_err()
        deleted = ffi.new("uint64_t *")
        _check(lib.cachekit_cache_invalidate_function_ex(self._h, ns, function, deleted, err), err)
        return int(deleted[0])

    # Introspection -----------------------------------------------------------

    def stats(self, ns: Optional[bytes] = None) -> dict[str, Any]:
        st = ffi.new("cachekit_cache_stats *")
        st.struct_size = ffi.sizeof("cachekit_cache_stats")
        err = _new_err()
        _check(lib.cachekit_cache_stats_get_ex(self._h, st, ns if ns is not None else ffi.NULL, err), err)
        names = [n for n, _ in ffi.typeof("cachekit_cache_stats").fields if n != "struct_size"]
        return {n: getattr(st, n) for n in names}

    def claims_held(self) -> int:
        """Refresh and load claims not yet landed or abandoned (a debug count)."""
        out = ffi.new("uint64_t *")
        err = _new_err()
        _check(lib.cachekit_cache_claims_held_ex(self._h, out, err), err)
        return int(out[0])

    def health(self) -> dict[str, Any]:
        """The L2's health as the core saw it (no round trip): see health_dict."""
        h = ffi.new("cachekit_health *")
        h.struct_size = ffi.sizeof("cachekit_health")
        err = _new_err()
        _check(lib.cachekit_cache_health_get_ex(self._h, h, err), err)
        return health_dict(h)

    def metrics_text(self) -> str:
        slot = _take()
        buf, err = slot
        try:
            _check(lib.cachekit_cache_metrics_text_ex(self._h, buf, err), err)
            return _bytes(buf).decode("utf-8", "replace")
        finally:
            _give(slot)

    def close(self) -> None:
        with self._lock:
            if self._executor is not None:
                self._executor.shutdown(wait=True)
                self._executor = None
            if self._h is not None:
                lib.cachekit_cache_free(self._h)
                self._h = None
