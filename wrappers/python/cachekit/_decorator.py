"""The @cache decorator (names and semantics of cachekit-py's)."""
from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import functools
import hashlib
import inspect
import logging
import math
import os
import random
import threading
import time
import uuid as _uuid
from typing import Any, Callable, NamedTuple, Optional, TypeVar, overload
from urllib.parse import quote

from cachekit import _codec
from cachekit._core import (SOURCE_L1, SOURCE_L2, SOURCE_LOADED, SOURCE_WAITED, BackendError, CacheKitError,
                            ConfigurationError, CoreCache, Backend, DeadlockError, LoadFailed, LoadTimeout, lib)
from cachekit._objcache import HIT, LEAD, SELF, Flight, ObjectCache, estimate_size

log = logging.getLogger("cachekit")

F = TypeVar("F", bound=Callable[..., Any])

_UNSET: Any = object()
_PROCESS_ID = _uuid.uuid4().hex
_ONE_YEAR = 31_536_000.0
_MAX_TRACKED_KEYS = 100_000
# How long an object-mode single-flight waiter waits for the leader before it
# computes for itself: the core's load_timeout_ms default (30000, see
# cachekit_cache_options and src/cache/cache_config.cpp), which bounds the
# core's own single-flight waits.
_LOAD_TIMEOUT = 30.0

# Simple scalars whose args tuple may key a dict memo directly. bool, float and
# the numeric tower are excluded because they compare equal to ints.
_SIMPLE = frozenset({int, str, bytes, type(None)})
_PACKED = object()  # marks object-mode keys built from packed arguments
_UNCACHED = object()  # key_of_call: this call runs the function uncached
# What building a key may raise for arguments it cannot take (the call then
# runs uncached): object mode, and L2 mode where the core builds the key.
_OBJ_KEY_ERRORS = (_codec.UnsupportedArgument, TypeError)
_L2_KEY_ERRORS = (_codec.UnsupportedArgument, TypeError, CacheKitError)

# The object-mode hit path in C (cachekit/_fastpath.c), when it is built and
# not switched off with CACHEKIT_PY_FASTPATH=0 (read here, at import). None:
# the pure-Python wrapper of _object_hot_path, its specification.
_CObjectWrapper: Any = None
if os.environ.get("CACHEKIT_PY_FASTPATH", "1").strip().lower() not in ("0", "false", "no", "off"):
    try:
        from cachekit._fastpath import ObjectWrapper as _CObjectWrapper
    except ImportError:
        pass

# L2 mode: a loader's holder starts with _FAILED when the function raised;
# l2_settle's verdicts.
_FAILED = object()
_VALUE, _RAISE, _COMPUTE, _RETRY = object(), object(), object(), object()


class _Unstorable(Exception):
    """A computed value the serializer cannot store: every caller of that load
    gets the object itself, nothing is cached."""

    def __init__(self, value: Any, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.value = value
        self.cause = cause


# Async L2 loads: the marks [core, key, running] of the loads the current
# task's context runs (the core's EDEADLOCK sees threads, not tasks).
_LEADING: contextvars.ContextVar[tuple] = contextvars.ContextVar("cachekit_leading", default=())


async def _lead(fn: Callable, args: tuple, kwargs: dict, mark: list) -> tuple:
    """An async function run for a load, as (True, value) or (False, exception)
    (returned, not raised: futures would copy a TimeoutError)."""
    _LEADING.set(_LEADING.get() + (mark,))
    try:
        return True, await fn(*args, **kwargs)
    except Exception as exc:
        return False, exc


def _leading(core: Any, key: bytes) -> bool:
    return any(m[2] and m[0] is core and m[1] == key for m in _LEADING.get())


class CacheInfo(NamedTuple):
    hits: int
    misses: int
    l1_hits: int
    l2_hits: int
    maxsize: Optional[int]
    currsize: Optional[int]
    l2_avg_latency_ms: float
    last_operation_at: Optional[float]
    session_id: str


_ALLOWED = frozenset({
    "ttl", "namespace", "backend", "serializer", "integrity_checking", "interop", "encryption", "master_key",
    "tenant", "l1", "l1_enabled", "l1_max_size_mb", "stale_while_revalidate", "swr_enabled", "swr_threshold_ratio",
    "fail_closed", "key", "max_entries", "config",
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


# ---------------------------------------------------------------------------
# Shared core handles: one per distinct configuration
# ---------------------------------------------------------------------------

_handles: dict[tuple, CoreCache] = {}
_handles_lock = threading.Lock()
_handles_pid = os.getpid()  # the process whose cores _handles holds
_validated: set = set()  # configurations whose core was built once at decoration (to check them)
_registry: list["_Cached"] = []  # every decorated function (for metrics and the fork hook)


# Cores are shared by configuration; a master key takes part in that identity
# only as a keyed BLAKE2b digest (a random key per process), so the hex key is
# never kept as (part of) a dict key where a memory dump or gc walk finds it.
_SECRET_SALT = os.urandom(32)


def _secret_id(secret: Optional[str]) -> Optional[bytes]:
    if secret is None:
        return None
    return hashlib.blake2b(secret.encode("utf-8", "surrogatepass"), key=_SECRET_SALT, digest_size=16).digest()


def _core_for(cfg: tuple, kw: dict[str, Any]) -> CoreCache:
    """The process's core for a configuration, built on first use. A core is
    never handed to another process than the one that built it: the fork hook
    empties the table in the child, and the pid check catches a fork that did
    not run the hook."""
    global _handles_pid
    with _handles_lock:
        if _handles_pid != os.getpid():
            _forget_inherited_cores()
        h = _handles.get(cfg)
        if h is None:
            h = CoreCache(**kw)
            _handles[cfg] = h
        return h


def _check_core(cfg: tuple, kw: dict[str, Any]) -> None:
    """Decoration-time check of a configuration (bad key, two backend
    selectors...): a core is built and freed at once, so nothing of it
    outlives the decorator (a prefork parent hands no core to its workers)."""
    with _handles_lock:
        if cfg in _validated or cfg in _handles:
            return
    CoreCache(**kw).close()
    with _handles_lock:
        _validated.add(cfg)


def all_core_caches() -> list[CoreCache]:
    with _handles_lock:
        if _handles_pid != os.getpid():
            return []
        return list(_handles.values())


def _forget_inherited_cores() -> None:
    """In a forked child: drop the parent's cores without freeing them (their
    threads and connections belong to the parent; freeing could wait on a thread
    that does not exist here). Each decorated function builds its own on its
    next call."""
    global _handles_pid
    _handles.clear()
    _handles_pid = os.getpid()
    for state in list(_registry):
        state.after_fork()


def _reset_after_fork() -> None:  # pragma: no cover - fork only
    global _handles_lock
    _handles_lock = threading.Lock()
    _forget_inherited_cores()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)


def _backend_url(backend: Any) -> Optional[str]:
    if isinstance(backend, str):
        if "://" in backend:
            return backend
        return "file://" + os.path.abspath(os.path.expanduser(backend))
    if isinstance(backend, os.PathLike):
        return "file://" + os.path.abspath(os.fspath(backend))
    raise TypeError(f"backend must be a URL, a directory path, a cachekit.Backend or None, got {type(backend)!r}")


def _check_ttl(ttl: Any) -> Optional[float]:
    if ttl is None:
        return None
    if isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or not math.isfinite(ttl) or ttl < 0:
        raise ValueError(f"ttl must be None or a finite number >= 0, got {ttl!r}")
    return float(ttl)


# ---------------------------------------------------------------------------
# Decorated functions
# ---------------------------------------------------------------------------

class _Cached:
    """State behind one decorated function."""

    def __init__(self, fn: Callable, opts: dict[str, Any]) -> None:
        self.fn = fn
        self.is_async = inspect.iscoroutinefunction(fn)
        self.module = getattr(fn, "__module__", None) or "__main__"
        self.qualname = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", "fn")
        self.session_id = f"{_PROCESS_ID}:{self.module}.{self.qualname}"
        self.ttl = _check_ttl(opts.get("ttl"))
        ns = opts.get("namespace")
        if ns is not None and not isinstance(ns, str):
            raise TypeError("namespace must be a string or None")
        if ns and "\0" in ns:  # the C API takes it NUL-terminated: refuse, never cut
            raise ValueError("namespace must not contain a NUL character")
        self.namespace: Optional[str] = ns or None
        self.key_fn = opts.get("key")
        ser = opts.get("serializer", "default")
        if isinstance(ser, str):
            if not ser:
                raise ValueError("serializer must be a non-empty name")
            self.serializer_id = ser
        elif ser is None or isinstance(ser, (int, float, bool)):
            raise TypeError(f"serializer must be a name or a serializer object, got {ser!r}")
        else:
            self.serializer_id = "<custom>:" + type(ser).__name__
        if ser not in ("default", "std", "standard") and isinstance(ser, str) and ser not in ("auto", "pythonic"):
            # orjson/arrow/custom formats are not implemented by this wrapper: keys are
            # still computed with the right code, values use the standard MessagePack form.
            log.info("cachekit: serializer %r is keyed as the reference SDK does; values use MessagePack", ser)
        self.integrity = bool(opts.get("integrity_checking", True))
        self.interop_op: Optional[str] = opts.get("interop")
        self.object_mode = opts.get("backend", _UNSET) is None
        self.local = bool(opts.get("_local"))
        self.lock = threading.Lock()
        self.warned = False
        self.hits = self.misses = self.l1_hits = self.l2_hits = 0
        self.last_op: Optional[float] = None
        self.clears = 0
        self.written: set = set()
        self.swr_enabled = bool(opts.get("swr_enabled", opts.get("stale_while_revalidate", True)))
        self.swr_ratio = float(opts.get("swr_threshold_ratio", 0.5))
        if not (0 < self.swr_ratio <= 1):
            raise ValueError("swr_threshold_ratio must be in (0, 1]")
        self.refreshing: set = set()
        self.ns_bytes = (self.namespace or "").encode("utf-8")
        self.key_memo: dict = {}
        if self.object_mode:
            if self.interop_op:
                raise ConfigurationError(lib.CACHEKIT_EINVAL, "interop mode needs an L2 backend (not backend=None)")
            mb = opts.get("l1_max_size_mb")
            max_bytes = int((mb if mb is not None else float(os.environ.get("CACHEKIT_L1_MAX_SIZE_MB", "100")))
                            * (1 << 20))
            self.objects = ObjectCache(opts.get("max_entries"), max_bytes)
            self.obj_ttl = self.ttl if self.ttl else _ONE_YEAR
            self.load_timeout = _LOAD_TIMEOUT
            self.core_spec: Optional[tuple] = None
        else:
            self.objects = None
            self.core_spec = self._core_spec(opts)
            _check_core(*self.core_spec)
        self._core: Optional[CoreCache] = None
        if self.interop_op is not None:
            if not self.namespace:
                raise ConfigurationError(lib.CACHEKIT_EINVAL, "interop mode needs namespace= (the key's first segment)")
            if self.key_fn is not None:
                raise ConfigurationError(lib.CACHEKIT_EINVAL, "interop mode does not take key=")
            self.signature = inspect.signature(fn)
            # validate both segments now
            _codec.interop_key(self.namespace, self.interop_op, [])
        self.core_ttl = self.ttl if self.ttl else 0.0
        _registry.append(self)

    @property
    def core(self) -> Optional[CoreCache]:
        """The core of this process (None in object mode), built on first use."""
        return self._core or self.build_core()

    @core.setter
    def core(self, value: CoreCache) -> None:
        self._core = value

    def build_core(self) -> Optional[CoreCache]:
        if self.core_spec is None:
            return None
        self._core = _core_for(*self.core_spec)
        return self._core

    def after_fork(self) -> None:
        """In a forked child: no core, lock or refresh of the parent's is used."""
        self._core = None
        self.lock = threading.Lock()
        self.refreshing = set()
        if self.objects is not None:
            self.objects.after_fork()

    def _core_spec(self, opts: dict[str, Any]) -> tuple:
        """(configuration identity, CoreCache keyword arguments)."""
        backend = opts.get("backend", _UNSET)
        interop = self.interop_op is not None
        encryption = bool(opts.get("encryption", False))
        master_key = opts.get("master_key")
        if encryption and master_key is None and not os.environ.get("CACHEKIT_MASTER_KEY"):
            raise ValueError("encryption needs master_key= or CACHEKIT_MASTER_KEY (64 hex digits)")
        if isinstance(master_key, bytes):
            master_key = master_key.hex()
        tenant = opts.get("tenant")
        l1 = bool(opts.get("l1", opts.get("l1_enabled", True)))
        mb = opts.get("l1_max_size_mb")
        l1_bytes = int(mb * (1 << 20)) if mb else 0
        swr = bool(opts.get("stale_while_revalidate", False)) and l1
        fail_closed = opts.get("fail_closed")
        backend_obj = None
        url: Optional[str] = None
        key_prefix: Optional[str] = None
        if isinstance(backend, Backend):
            backend_obj = backend
        elif backend is not _UNSET:
            url = _backend_url(backend)
        else:
            # Unset: the core resolves the environment. The reference SDK's
            # zero-configuration Redis provider prefixes keys with t:{tenant}:.
            if not interop and not os.environ.get("CACHEKIT_FILE_CACHE_DIR") and (
                    os.environ.get("CACHEKIT_REDIS_URL") or os.environ.get("REDIS_URL")):
                key_prefix = "t:" + quote(tenant or "default", safe="") + ":"
        cfg = (url, id(backend_obj) if backend_obj else None, interop, None if interop else self.integrity, encryption,
               _secret_id(master_key), tenant, key_prefix, l1, l1_bytes, swr, self.swr_ratio if swr else 0.0, fail_closed,
               os.environ.get("CACHEKIT_REDIS_URL"), os.environ.get("CACHEKIT_FILE_CACHE_DIR"),
               os.environ.get("REDIS_URL"),
               _secret_id(os.environ.get("CACHEKIT_MASTER_KEY")) if encryption else None)
        return cfg, dict(backend_url=url, backend=backend_obj, interop=interop,
                         integrity=None if interop else self.integrity, encryption=encryption, master_key=master_key,
                         tenant=tenant, key_prefix=key_prefix, l1=l1, l1_max_bytes=l1_bytes, swr=swr,
                         swr_threshold_ratio=self.swr_ratio if swr else 0.0, fail_closed=fail_closed)

    # Keys -------------------------------------------------------------------

    def key_for(self, args: tuple, kwargs: dict) -> str:
        if self.interop_op is not None:
            bound = self.signature.bind(*args, **kwargs)
            bound.apply_defaults()
            flat: list = []
            for name, p in self.signature.parameters.items():
                v = bound.arguments.get(name)
                if p.kind is inspect.Parameter.VAR_POSITIONAL:
                    flat.append(list(v or ()))
                elif p.kind is inspect.Parameter.VAR_KEYWORD:
                    flat.append(dict(v or {}))
                else:
                    flat.append(v)
            return _codec.interop_key(self.namespace or "", self.interop_op, flat)
        if self.key_fn is not None:
            return f"{self.namespace or 'default'}:{self.key_fn(*args, **kwargs)}"
        return _codec.key_auto(self.namespace, self.module, self.qualname, _codec.pack_auto_args(args, kwargs),
                               self.integrity, self.serializer_id)

    def cached_key(self, args: tuple, kwargs: dict) -> bytes:
        """The key as bytes, memoised for simple positional scalars."""
        if not kwargs:
            try:
                k = self.key_memo.get(args)
            except TypeError:
                k = None
            else:
                if k is not None and k[1] == tuple(map(type, args)):
                    return k[0]
            kb = self.key_for(args, kwargs).encode("utf-8")
            types = tuple(map(type, args))
            if _SIMPLE.issuperset(types):
                if len(self.key_memo) > 4096:
                    self.key_memo.clear()
                self.key_memo[args] = (kb, types)
            return kb
        return self.key_for(args, kwargs).encode("utf-8")

    def key_of_call(self, args: tuple, kwargs: dict, key_fn: Callable[[tuple, dict], Any],
                    errors: tuple) -> tuple:
        """(key, kwargs) of a call: kwargs without `_bypass_cache`, and
        key_fn's key, or _UNCACHED when the function is to run uncached
        (bypassed, or arguments key_fn refuses with one of `errors`: logged
        once; a ConfigurationError is the caller's mistake and raised)."""
        if "_bypass_cache" in kwargs:
            kwargs = dict(kwargs)
            if kwargs.pop("_bypass_cache"):
                return _UNCACHED, kwargs
        try:
            return key_fn(args, kwargs), kwargs
        except ConfigurationError:
            raise
        except errors as exc:
            self.unsupported(exc)
            return _UNCACHED, kwargs

    def unsupported(self, exc: Exception) -> None:
        if not self.warned:
            self.warned = True
            log.warning("cachekit: %s.%s runs uncached: %s", self.module, self.qualname, exc)

    # Values -------------------------------------------------------------------

    def encode(self, v: Any) -> bytes:
        if self.interop_op is not None:
            return _codec.encode_interop_value(v)
        return _codec.encode_value(v)

    def decode(self, data: Any, temporal_keys: int = -1) -> Any:
        return _codec.decode_value(data, temporal_keys)

    # Stats --------------------------------------------------------------------

    def count(self, source: int) -> None:
        with self.lock:
            self.last_op = time.time()
            if source == SOURCE_L1 or source == SOURCE_WAITED:
                self.hits += 1
                self.l1_hits += 1
            elif source == SOURCE_L2:
                self.hits += 1
                self.l2_hits += 1
            else:
                self.misses += 1

    def info(self) -> CacheInfo:
        if self.objects is not None:
            hits = self.objects.total_hits() + self.l1_hits
            return CacheInfo(hits, self.misses, hits, 0, self.objects.max_entries, len(self.objects), 0.0,
                             self.last_op, self.session_id)
        avg = 0.0
        try:
            st = self.core.stats(self.ns_bytes)
            if st["l2_latency_count"]:
                avg = st["l2_latency_sum_ms"] / st["l2_latency_count"]
        except CacheKitError:
            pass
        return CacheInfo(self.hits, self.misses, self.l1_hits, self.l2_hits, None, None, avg, self.last_op,
                         self.session_id)

    def reset_stats(self) -> None:
        with self.lock:
            self.hits = self.misses = self.l1_hits = self.l2_hits = 0
            self.clears += 1
            self.session_id = f"{_PROCESS_ID}:{self.module}.{self.qualname}#{self.clears}"
            if self.objects is not None:
                with self.objects.lock:
                    self.objects.evicted_hits = 0
                    for e in self.objects.data.values():
                        e[2] = 0
                        e[6] = 0

    # Invalidation -------------------------------------------------------------

    def invalidate(self, args: tuple, kwargs: dict) -> None:
        if not args and not kwargs and self._has_params():
            self.invalidate_all()
            return
        if self.objects is not None:
            self.objects.invalidate(self.obj_key(args, kwargs))
            return
        key = self.cached_key(args, kwargs)
        self.core.invalidate(self.ns_bytes, key)
        self.written.discard(key)

    def _has_params(self) -> bool:
        try:
            return bool(inspect.signature(self.fn).parameters)
        except (TypeError, ValueError):
            return True

    def invalidate_all(self) -> None:
        if self.objects is not None:
            self.objects.clear()
            return
        with self.lock:
            keys = list(self.written)
            self.written.clear()
        for k in keys:
            try:
                self.core.invalidate(self.ns_bytes, k)
            except BackendError:
                pass

    def clear(self) -> None:
        self.reset_stats()
        self.invalidate_all()

    # Object mode ----------------------------------------------------------------

    def obj_key(self, args: tuple, kwargs: dict) -> Any:
        """Dict key of a call. Exact by construction: a single simple scalar is
        its own key, several form the args tuple, anything else (including
        bool and float, which compare equal to ints) the packed normalised
        arguments behind a private marker."""
        if self.key_fn is not None:
            return (_PACKED, "k", self.key_fn(*args, **kwargs))
        if not kwargs:
            if len(args) == 1 and type(args[0]) in _SIMPLE:
                return args[0]
            if args and _SIMPLE.issuperset(map(type, args)):
                return args
        return (_PACKED, _codec.pack_auto_args(args, kwargs))

    def obj_entry(self, key: Any, value: Any, types: Any) -> list:
        now = time.monotonic()
        ttl = self.obj_ttl
        stale = now + ttl * self.swr_ratio * random.uniform(0.9, 1.1) if self.swr_enabled else now + ttl
        size = estimate_size(value) + (estimate_size(key) if not isinstance(key, tuple) else 64)
        return [value, now + ttl, 0, min(stale, now + ttl), size, types, 0]

    def count_miss(self) -> None:
        with self.lock:
            self.misses += 1
            self.last_op = time.time()

    def count_waited(self) -> None:
        # A caller that got another caller's load counts as an L1 hit (as with an L2).
        with self.lock:
            self.l1_hits += 1
            self.last_op = time.time()

    def deadlock(self) -> CacheKitError:
        return DeadlockError(lib.CACHEKIT_EDEADLOCK,
                             f"{self.module}.{self.qualname} called itself with the same arguments while computing "
                             "them: the value it is computing cannot be waited for")

    def waited(self, f: Flight) -> Any:
        """A settled flight's outcome for one of its waiters (not abandoned)."""
        if f.error is not None:
            self.count_miss()
            raise f.error.with_traceback(f.tb)
        self.count_waited()
        return f.value

    def obj_slow(self, args: tuple, kwargs: dict) -> Any:
        # key_of_call written out: this is the hit path of calls the short path
        # does not take (several arguments, kwargs), where its call costs ~20 %.
        if "_bypass_cache" in kwargs:
            kwargs = dict(kwargs)
            if kwargs.pop("_bypass_cache"):
                return self.fn(*args, **kwargs)
        try:
            key = self.obj_key(args, kwargs)
        except _OBJ_KEY_ERRORS as exc:
            self.unsupported(exc)
            return self.fn(*args, **kwargs)
        types = None
        e = self.objects.data.get(key)
        now = time.monotonic()
        if e is not None:
            if now < e[1]:
                e[2] += 1
                if now >= e[3] and self.swr_enabled:
                    self.obj_refresh(key, args, kwargs, types, e)
                return e[0]
            self.objects.discard(key, e)
        return self.obj_load(key, args, kwargs, types)

    def obj_load(self, key: Any, args: tuple, kwargs: dict, types: Any) -> Any:
        """A miss in object mode, single-flight across threads: the first caller
        computes, the others wait (up to load_timeout, then compute for
        themselves) and get the very same object or exception."""
        objects = self.objects
        me = threading.get_ident()
        while True:
            role, x = objects.join(key, me, time.monotonic())
            if role == HIT:
                return x
            if role == LEAD:
                return self.obj_lead(key, x, args, kwargs, types)
            if role == SELF:
                raise self.deadlock()
            f: Flight = x
            if not f.event.wait(self.load_timeout):
                # The leader is too slow: compute here; store only while its flight is current.
                self.count_miss()
                value = self.fn(*args, **kwargs)
                objects.land(key, f, self.obj_entry(key, value, types), time.monotonic())
                return value
            if not f.abandoned:
                return self.waited(f)
            # The leader was interrupted (KeyboardInterrupt, SystemExit...): start over.

    def obj_lead(self, key: Any, f: Flight, args: tuple, kwargs: dict, types: Any) -> Any:
        objects = self.objects
        self.count_miss()
        try:
            value = self.fn(*args, **kwargs)
        except Exception as exc:
            objects.settle(key, f, error=exc, tb=exc.__traceback__)
            raise
        except BaseException:
            objects.settle(key, f, abandoned=True)
            raise
        try:
            objects.land(key, f, self.obj_entry(key, value, types), time.monotonic())
        finally:
            objects.settle(key, f, value=value)
        return value

    async def obj_aslow(self, args: tuple, kwargs: dict) -> Any:
        """obj_slow for coroutine functions (without stale-while-revalidate)."""
        key, kwargs = self.key_of_call(args, kwargs, self.obj_key, _OBJ_KEY_ERRORS)
        if key is _UNCACHED:
            return await self.fn(*args, **kwargs)
        e = self.objects.data.get(key)
        if e is not None:
            if time.monotonic() < e[1]:
                e[2] += 1
                return e[0]
            self.objects.discard(key, e)
        return await self.obj_aload(key, args, kwargs, None)

    async def obj_aload(self, key: Any, args: tuple, kwargs: dict, types: Any) -> Any:
        """obj_load for coroutine functions: one task computes, the others await
        its outcome (from any event loop) without blocking their loop."""
        objects = self.objects
        me = asyncio.current_task() or object()
        loop = asyncio.get_running_loop()
        while True:
            role, x = objects.join(key, me, time.monotonic())
            if role == HIT:
                return x
            if role == LEAD:
                return await self.obj_alead(key, x, args, kwargs, types)
            if role == SELF:
                raise self.deadlock()
            f: Flight = x
            fut = objects.listen(f, loop)
            if fut is not None:
                try:
                    await asyncio.wait_for(fut, self.load_timeout)
                except asyncio.TimeoutError:
                    self.count_miss()
                    value = await self.fn(*args, **kwargs)
                    objects.land(key, f, self.obj_entry(key, value, types), time.monotonic())
                    return value
            if not f.abandoned:
                return self.waited(f)

    async def obj_alead(self, key: Any, f: Flight, args: tuple, kwargs: dict, types: Any) -> Any:
        objects = self.objects
        self.count_miss()
        try:
            value = await self.fn(*args, **kwargs)
        except Exception as exc:
            objects.settle(key, f, error=exc, tb=exc.__traceback__)
            raise
        except BaseException:  # cancelled: the waiters start over
            objects.settle(key, f, abandoned=True)
            raise
        try:
            objects.land(key, f, self.obj_entry(key, value, types), time.monotonic())
        finally:
            objects.settle(key, f, value=value)
        return value

    def obj_refresh(self, key: Any, args: tuple, kwargs: dict, types: Any, e: list) -> None:
        with self.lock:
            if key in self.refreshing or len(self.refreshing) >= 32:
                return
            self.refreshing.add(key)
        e[3] = e[1]  # one refresh per staleness period

        def run() -> None:
            try:
                value = self.fn(*args, **kwargs)
                # Lands only over the entry it refreshes (not after an invalidation or a newer fill).
                self.objects.replace(key, e, self.obj_entry(key, value, types), time.monotonic())
            except Exception:
                log.debug("cachekit: background refresh failed", exc_info=True)
            finally:
                with self.lock:
                    self.refreshing.discard(key)

        threading.Thread(target=run, daemon=True, name="cachekit-swr").start()

    # L2 mode --------------------------------------------------------------------
    #
    # Misses are the core's single-flight (cachekit_cache_get_or_load): one
    # caller runs the function through the loader, the others wait in the core.
    # Their rare outcomes (CoreCache raises them) are settled by l2_settle:
    #   LoadFailed   the leader's function raised: its very exception, kept by
    #                the loader per key (see _core._Failures), or None
    #                when the leader was interrupted -> start over;
    #   LoadTimeout  the leader is too slow: compute here, uncached (only the
    #                leader's flight stores, so an invalidation during this
    #                compute cannot be undone by it);
    #   _Unstorable  the value cannot be serialised: everyone gets the leader's
    #                object, nothing is stored.
    # The hit path is one core call, as before: nothing here runs on a hit.

    def call(self, args: tuple, kwargs: dict) -> Any:
        key, kwargs = self.key_of_call(args, kwargs, self.cached_key, _L2_KEY_ERRORS)
        if key is _UNCACHED:
            return self.fn(*args, **kwargs)
        # A loop only for the rare retry (an interrupted leader): the first
        # pass is the hit path, one core call.
        core = self._core or self.build_core()
        while True:
            holder: list = []
            try:
                value, info = core.get_or_load(self.ns_bytes, key, self.core_ttl, self.l2_loader(holder, args, kwargs),
                                               self.decode)
            except BaseException as exc:
                outcome = exc
            else:
                if self.settle(key, info.source):
                    return holder[0]
                if info.refresh:
                    self.refresh_in_background(key, args, kwargs, info.refresh_claim)
                return value
            # Settled outside the except clause: a shared exception is raised
            # without this caller's LoadFailed as its __context__.
            what, x = self.l2_settle(outcome, holder)
            if what is _VALUE:
                return x
            if what is _RAISE:
                raise x
            if what is _COMPUTE:
                return self.fn(*args, **kwargs)

    def l2_loader(self, holder: list, args: tuple, kwargs: dict) -> Callable[[], bytes]:
        """The loader handed to the core: runs the function, keeps its value
        (or _FAILED) in the holder, returns the bytes to store."""
        fn = self.fn
        storable = self.storable

        def compute() -> bytes:
            try:
                v = fn(*args, **kwargs)
            except BaseException:
                holder.append(_FAILED)
                raise
            holder.append(v)
            return storable(v)

        return compute

    def storable(self, v: Any) -> bytes:
        """v's stored bytes; _Unstorable when it cannot be serialised."""
        try:
            return self.encode(v)
        except CacheKitError:
            raise
        except (TypeError, ValueError, OverflowError) as exc:
            raise _Unstorable(v, exc) from None

    def l2_settle(self, outcome: BaseException, holder: list) -> tuple:
        """What a get_or_load that raised means for its caller: (_VALUE, v),
        (_RAISE, exc), (_COMPUTE, None) or (_RETRY, None). Counts the call."""
        if holder and holder[0] is _FAILED:
            # This caller ran the function and it raised: that exception, whatever it is.
            self.count_miss()
            return _RAISE, holder[1] if len(holder) > 1 else outcome
        if isinstance(outcome, _Unstorable):  # this caller's value
            self.unsupported(outcome.cause)
            self.count(SOURCE_LOADED)
            return _VALUE, outcome.value
        if isinstance(outcome, LoadFailed):
            err = outcome.error
            if err is None:
                return _RETRY, None  # interrupted leader (or its exception is gone): start over
            if isinstance(err, _Unstorable):  # the leader's value, not storable
                self.count(SOURCE_WAITED)
                return _VALUE, err.value
            self.count_miss()
            return _RAISE, err.with_traceback(outcome.traceback)
        if isinstance(outcome, LoadTimeout):
            self.count(SOURCE_LOADED)
            return _COMPUTE, None
        return _RAISE, outcome

    def settle(self, key: bytes, source: int) -> bool:
        """Count a lookup; True when this caller ran the loader (its value is in the holder)."""
        self.count(source)
        if source != SOURCE_LOADED:
            return False
        if len(self.written) < _MAX_TRACKED_KEYS:
            self.written.add(key)
        return True

    def refresh_in_background(self, key: bytes, args: tuple, kwargs: dict, claim: int) -> None:
        def run() -> None:
            try:
                v = self.fn(*args, **kwargs)
                self.core.put_refresh(self.ns_bytes, key, self.encode(v), self.core_ttl, claim)
            except BaseException:
                self.core.abandon_refresh(key, claim)
                log.debug("cachekit: background refresh failed", exc_info=True)

        threading.Thread(target=run, daemon=True, name="cachekit-swr").start()

    async def acall(self, args: tuple, kwargs: dict) -> Any:
        key, kwargs = self.key_of_call(args, kwargs, self.cached_key, _L2_KEY_ERRORS)
        if key is _UNCACHED:
            return await self.fn(*args, **kwargs)
        loop = asyncio.get_running_loop()
        # As in call: the first pass is the hit path; the loop is for retries.
        while True:
            holder: list = []
            try:
                value, info = await asyncio.to_thread(self.core.get_or_load, self.ns_bytes, key, self.core_ttl,
                                                      self.l2_aloader(holder, key, args, kwargs, loop), self.decode)
            except BaseException as exc:
                outcome = exc
            else:
                if self.settle(key, info.source):
                    return holder[0]
                if info.refresh:
                    self.arefresh(loop, key, args, kwargs, info.refresh_claim)
                return value
            if isinstance(outcome, LoadTimeout) and _leading(self.core, key):
                # This task runs the key's load itself (the function awaited itself
                # with the same arguments): the core cannot see it across threads.
                outcome = self.deadlock()
            what, x = self.l2_settle(outcome, holder)
            holder.clear()  # drops the exception it may hold (a cycle through its traceback)
            if what is _VALUE:
                return x
            if what is _RAISE:
                raise x
            if what is _COMPUTE:
                return await self.fn(*args, **kwargs)

    def l2_aloader(self, holder: list, key: bytes, args: tuple, kwargs: dict,
                   loop: asyncio.AbstractEventLoop) -> Callable[[], bytes]:
        fn = self.fn
        storable = self.storable
        core = self.core

        def compute() -> bytes:
            # Runs on the worker thread that holds the single-flight claim; the
            # coroutine itself runs on the caller's event loop.
            mark = [core, key, True]
            try:
                try:
                    ok, v = asyncio.run_coroutine_threadsafe(_lead(fn, args, kwargs, mark), loop).result()
                except concurrent.futures.CancelledError:
                    # Its task was cancelled (the loop shuts down): an interrupted
                    # load, which the waiters start over.
                    raise asyncio.CancelledError() from None
                if not ok:
                    raise v
            except BaseException as exc:
                # The instance itself: passing futures would copy a TimeoutError.
                holder.append(_FAILED)
                holder.append(exc)
                raise
            finally:
                mark[2] = False
            holder.append(v)
            return storable(v)

        return compute

    def arefresh(self, loop: asyncio.AbstractEventLoop, key: bytes, args: tuple, kwargs: dict, claim: int) -> None:
        async def refresh() -> None:
            try:
                v = await self.fn(*args, **kwargs)
                await asyncio.to_thread(self.core.put_refresh, self.ns_bytes, key, self.encode(v),
                                        self.core_ttl, claim)
            except BaseException:
                self.core.abandon_refresh(key, claim)

        task = loop.create_task(refresh())
        self.refreshing.add(task)
        task.add_done_callback(self.refreshing.discard)


def _object_hot_path(state: _Cached) -> Callable:
    """The sync object-mode callable, before functools.wraps: the C one when
    available, else this Python one, which is its specification."""
    if _CObjectWrapper is not None:
        return _CObjectWrapper(state.objects.data, state.obj_slow, _SIMPLE)
    memo_get = state.objects.data.get
    mono = time.monotonic
    slow = state.obj_slow
    simple = _SIMPLE

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        # Hot path: one positional simple scalar (int, str, bytes, None) is
        # its own dict key (no key hashing, no serialisation); then a TTL /
        # staleness check and a per-entry hit count.
        if not kwargs:
            try:
                (a,) = args
            except ValueError:
                return slow(args, kwargs)
            if type(a) in simple:
                e = memo_get(a)
                if e is not None and mono() < e[3]:
                    e[2] += 1
                    return e[0]
        return slow(args, kwargs)

    return wrapper


def _make_wrapper(state: _Cached) -> Callable:
    fn = state.fn
    if state.is_async:
        if state.objects is not None and state.key_fn is None:
            amemo_get = state.objects.data.get
            amono = time.monotonic
            aslow = state.obj_aslow
            asimple = _SIMPLE

            @functools.wraps(fn)
            async def awrapper(*args: Any, **kwargs: Any) -> Any:
                # The sync hot path's, against the expiry (no SWR for coroutines).
                if not kwargs:
                    try:
                        (a,) = args
                    except ValueError:
                        return await aslow(args, kwargs)
                    if type(a) in asimple:
                        e = amemo_get(a)
                        if e is not None and amono() < e[1]:
                            e[2] += 1
                            return e[0]
                return await aslow(args, kwargs)
        else:
            acall = state.acall if state.objects is None else state.obj_aslow

            @functools.wraps(fn)
            async def awrapper(*args: Any, **kwargs: Any) -> Any:
                return await acall(args, kwargs)

        async def ainvalidate_cache(*args: Any, **kwargs: Any) -> None:
            if state.objects is not None:
                state.invalidate(args, kwargs)
            else:
                await asyncio.to_thread(state.invalidate, args, kwargs)

        wrapper: Any = awrapper
        wrapper.invalidate_cache = ainvalidate_cache
        wrapper.ainvalidate_cache = ainvalidate_cache
    elif state.objects is not None and state.key_fn is None:
        wrapper = functools.wraps(fn)(_object_hot_path(state))
        wrapper.invalidate_cache = lambda *a, **k: state.invalidate(a, k)
    else:
        call = state.call if state.objects is None else state.obj_slow

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            return call(args, kwargs)

        wrapper.invalidate_cache = lambda *a, **k: state.invalidate(a, k)
    wrapper.cache_info = state.info
    wrapper.cache_clear = state.clear
    wrapper._cachekit = state
    return wrapper


# ---------------------------------------------------------------------------
# The public `cache` object and presets
# ---------------------------------------------------------------------------

def _validate(kw: dict[str, Any]) -> dict[str, Any]:
    unknown = set(kw) - _ALLOWED
    if unknown:
        raise TypeError(f"unexpected cache parameter(s): {', '.join(sorted(unknown))}")
    cfg = kw.pop("config", None)
    if cfg is not None:
        base = {k: v for k, v in vars(cfg).items() if k in _ALLOWED} if hasattr(cfg, "__dict__") else dict(cfg)
        base.update(kw)
        kw = base
    return kw


class _Decorator:
    """`cache` and its presets: usable as @x, @x(...), and x(fn, ...)."""

    def __init__(self, defaults: Optional[dict[str, Any]] = None, name: str = "cache") -> None:
        self._defaults = defaults or {}
        self._name = name

    def _build(self, fn: Callable, kw: dict[str, Any]) -> Callable:
        opts = dict(self._defaults)
        opts.update(_validate(dict(kw)))
        if opts.get("_local"):
            allowed_local = {"ttl", "max_entries", "namespace", "key"}
            extra = set(kw) - allowed_local
            if extra:
                raise TypeError(f"cache.local takes only ttl, max_entries, namespace, key (got {sorted(extra)})")
        if self._name == "secure":
            opts["encryption"] = True
            opts["integrity_checking"] = True
        return _make_wrapper(_Cached(fn, opts))

    @overload
    def __call__(self, fn: F) -> F: ...

    @overload
    def __call__(self, fn: None = None, **kw: Any) -> Callable[[F], F]: ...

    def __call__(self, fn: Optional[Callable] = None, **kw: Any) -> Any:
        if fn is not None and callable(fn):
            return self._build(fn, kw)
        if fn is not None:
            raise TypeError("cache() takes the function or keyword arguments only")
        _validate(dict(kw))  # unknown parameters fail at decoration time, before the function is seen

        def deco(f: Callable) -> Callable:
            return self._build(f, kw)

        return deco


class _Cache(_Decorator):
    def __init__(self) -> None:
        super().__init__({}, "cache")
        for name, d in _PRESETS.items():
            setattr(self, name, _Decorator(dict(d), name))

    @property
    def io(self) -> Any:
        raise NotImplementedError(
            "cache.io (the hosted CachekitIO HTTP backend) is not available in libcachekit: "
            "use backend='redis://...' or a file/memory backend")


cache = _Cache()
