"""The @cache decorator (names and semantics of cachekit-py's): one _Cached per
decorated function, assembled from the parts in their own modules:

    _config    options, presets, single-value checks
    _cores     core handles (one per configuration and process, fork-safe)
    _keys      the key of a call
    _stats     cache_info() counters
    _objmode   object mode (backend=None)
    _l2mode    L2 mode (a backend), sync
    _async     L2 mode for coroutine functions
    _refresh   stale-while-revalidate refreshes

and the callables that wrap the function (here)."""
from __future__ import annotations

import asyncio
import functools
import inspect
import logging
import os
import threading
import time
from typing import TYPE_CHECKING, Any, Callable, Concatenate, Literal, Mapping, Optional, overload

from cachekit import _codec, _key_registry
from cachekit._async import AsyncL2Mixin
from cachekit._config import (_check_choices, _LOAD_TIMEOUT, _ONE_YEAR, _PRESETS, _UNSET, _check_ttl,
                              _validate)
from cachekit._core import BackendError, ConfigurationError, CoreCache, key_custom, lib
from cachekit._cores import CoreMixin, _check_core, _registry, env_names_backend
from cachekit._defaults import get_default_backend
from cachekit._keys import _SIMPLE, KeysMixin
from cachekit._l2mode import L2ModeMixin
from cachekit._objcache import ObjectCache
from cachekit._objmode import ObjectModeMixin
from cachekit._outcome import InvalidationOutcome
from cachekit._refresh import RefreshMixin
from cachekit._signature import call_signature
from cachekit._stats import StatsMixin, counters_for
from cachekit._tenants import TenantRouter
from cachekit._types import (P, R, S, AnyFirst, CacheDecorator, CachedClassFunction, CachedFunction,
                             TenantExtractor)

if TYPE_CHECKING:
    from cachekit.config.decorator import DecoratorConfig
    from cachekit.config.nested import (BackpressureConfig, CircuitBreakerConfig, EncryptionConfig, L1CacheConfig,
                                        MonitoringConfig)

log = logging.getLogger("cachekit")


# The object-mode hit path in C (cachekit/_fastpath.c), when it is built and
# not switched off with CACHEKIT_PY_FASTPATH=0 (read here, at import). None:
# the pure-Python wrapper of _object_hot_path, its specification.
_CObjectWrapper: Any = None
if os.environ.get("CACHEKIT_PY_FASTPATH", "1").strip().lower() not in ("0", "false", "no", "off"):
    try:
        from cachekit._fastpath import ObjectWrapper as _CObjectWrapper
    except ImportError:
        pass


class _Cached(CoreMixin, KeysMixin, StatsMixin, ObjectModeMixin, L2ModeMixin, AsyncL2Mixin, RefreshMixin):
    """State behind one decorated function."""

    def __init__(self, fn: Callable, opts: dict[str, Any]) -> None:
        self.fn = fn
        self.is_async = inspect.iscoroutinefunction(fn)
        self.module = getattr(fn, "__module__", None) or "__main__"
        self.qualname = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", "fn")
        self.ttl = _check_ttl(opts.get("ttl"))
        ns = opts.get("namespace")
        if ns is not None and not isinstance(ns, str):
            raise TypeError("namespace must be a string or None")
        if ns and "\0" in ns:  # the C API takes it NUL-terminated: refuse, never cut
            raise ValueError("namespace must not contain a NUL character")
        if ns is not None and (ns == "ck" or ns.startswith("ck:")):
            # As the reference: a key written there could take the key registry's ck:reg: shape.
            raise ConfigurationError(lib.CACHEKIT_EINVAL,
                                     "namespace 'ck' (and 'ck:*') is reserved for cachekit's key registry")
        self.namespace: Optional[str] = ns or None
        self.key_fn = opts.get("key")
        # key=: every key starts with the function's BLAKE3 identity and namespace (the reference 0.24's form).
        self.key_head = (key_custom(self.namespace, self.module, self.qualname, "")
                         if self.key_fn is not None else "")
        ser = opts.get("serializer", "default")
        if isinstance(ser, str):
            if not ser:
                raise ValueError("serializer must be a non-empty name")
            self.serializer_id = ser
        elif ser is None or isinstance(ser, (int, float, bool)):
            raise TypeError(f"serializer must be a name or a serializer object, got {ser!r}")
        else:
            self.serializer_id = "<custom>:" + type(ser).__name__
        if ser not in ("default", "std") and isinstance(ser, str) and ser not in ("auto", "pythonic"):
            # orjson/arrow/custom formats are not implemented by this wrapper: keys are
            # still computed with the right code, values use the standard MessagePack form.
            log.info("cachekit: serializer %r is keyed as the reference SDK does; values use MessagePack", ser)
        self.integrity = bool(opts.get("integrity_checking", True))
        self.interop_op: Optional[str] = opts.get("interop")
        self.object_mode = opts.get("backend", _UNSET) is None
        self.local = bool(opts.get("_local"))
        self.lock = threading.Lock()
        self.warned = False
        self.written: set = set()
        swr = opts.get("stale_while_revalidate")
        # Object mode: the reference's L1 SWR (L1CacheConfig.swr_enabled, on by default).
        self.swr_enabled = bool(opts.get("swr_enabled", True if swr is None else swr))
        # With a backend the reference 0.24 recomputes only at expiry (it removed backed-mode
        # SWR): the core's refresh ahead of expiry is this wrapper's opt-in, by this name.
        self.l2_swr = bool(swr)
        self.swr_ratio = float(opts.get("swr_threshold_ratio", 0.5))
        if not (0 < self.swr_ratio <= 1):
            raise ValueError("swr_threshold_ratio must be in (0, 1]")
        self.refreshing: set = set()
        self.load_timeout = _LOAD_TIMEOUT  # a single-flight waiter's patience (object mode, async L2 mode)
        self.aflights: dict = {}  # async L2 mode: (event loop, key) -> the future of its load
        self.generation = 0  # bumped by every invalidation: an async load begun before one does not store
        self.ns_bytes = (self.namespace or "").encode("utf-8")
        self.key_memo: dict = {}
        self.backend_at_first_call: Optional[dict[str, Any]] = None
        self.zero_config = False
        self.settle_lock = threading.Lock()
        self.objects: Optional[ObjectCache] = None
        self.core_spec: Optional[tuple] = None
        self.counters = counters_for(self)  # per function identity, as the reference's (_stats.py)
        if self.object_mode:
            if self.interop_op:
                raise ConfigurationError(lib.CACHEKIT_EINVAL, "interop mode needs an L2 backend (not backend=None)")
            self.enter_object_mode(opts)
        else:
            self.core_ttl = self.ttl if self.ttl else 0.0
            # No backend= and no default yet: the backend is chosen again at the first call (build_core).
            if "backend" not in opts and get_default_backend() is None:
                self.backend_at_first_call = opts
                # The reference's zero-config: a plaintext, non-interop function that finds nothing
                # configured at its first call runs as backend=None does (settle_backend, _cores.py).
                self.zero_config = not opts.get("encryption") and self.interop_op is None
            self.core_spec = self._core_spec(opts)
            if self.zero_config and not env_names_backend():
                # Likely in-process only: the options are checked on memory://, so no
                # decoration makes the embedded file backend's directory.
                _check_core(*self._core_spec({**opts, "backend": "memory://"}))
            else:
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

    def enter_object_mode(self, opts: dict[str, Any]) -> None:
        """backend=None: values kept as objects in this process (also a settled zero-config function)."""
        mb = opts.get("l1_max_size_mb")
        max_bytes = int((mb if mb is not None else float(os.environ.get("CACHEKIT_L1_MAX_SIZE_MB", "100")))
                        * (1 << 20))
        self.objects = ObjectCache(opts.get("max_entries"), max_bytes)
        self.obj_ttl = self.ttl if self.ttl else _ONE_YEAR
        self.core_spec = None
        self.backend_at_first_call = None
        self.object_mode = True

    def invalidate(self, args: tuple, kwargs: dict) -> Optional[InvalidationOutcome]:
        """The reference's result: None for the whole function, else what L2 did."""
        self.settle_backend()
        if not args and not kwargs and self._has_params():
            self.invalidate_all()
            # cache.local reports NO_L2 for every call, as the reference's local wrapper does.
            return InvalidationOutcome.NO_L2 if self.local else None
        if self.objects is not None:
            self.objects.invalidate(self.obj_key(args, kwargs))
            return InvalidationOutcome.NO_L2
        key = self.cached_key(args, kwargs)
        self.generation += 1
        deleted = self.core.invalidate_reported(self.ns_bytes, key)
        self.written.discard(key)
        return InvalidationOutcome.SUCCEEDED if deleted else InvalidationOutcome.FAILED

    def _has_params(self) -> bool:
        try:
            return bool(inspect.signature(self.fn).parameters)
        except (TypeError, ValueError):
            return True

    def invalidate_all(self) -> None:
        self.settle_backend()
        if self.objects is not None:
            self.objects.clear()
            return
        core = self.core  # built (and the function declared) before the registry is asked
        with self.lock:
            self.generation += 1
            keys = list(self.written)
            self.written.clear()
        if self.registry_kept:  # every process's entries, the reference SDK's included
            _key_registry.drain(self, core)
        for k in keys:
            try:
                self.core.invalidate(self.ns_bytes, k)
            except BackendError:
                pass

    def clear(self) -> None:
        """Reset this function's counters, then invalidate every entry of it (cache_clear)."""
        self.reset_stats()
        self.invalidate_all()


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


def _plain_function(fn: Callable, hot: Callable) -> Callable:
    """The object-mode hit path behind a real function, as the reference's wrapper is
    one (inspect.isfunction, and everything that tells functions apart, holds): the
    Python path itself, or a def that hands its call to the C path (one vectorcall)."""
    if inspect.isfunction(hot):
        wrapper = hot
    else:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            return hot(*args, **kwargs)

    wrapper = functools.wraps(fn)(wrapper)
    wrapper._cachekit_hot = hot  # which path serves it (the tests look)
    return wrapper


def _sync_invalidate(state: _Cached) -> Callable[..., Any]:
    def invalidate_cache(*args: Any, **kwargs: Any) -> Optional[InvalidationOutcome]:
        """Drop the entry of these arguments (none, on a function with parameters: every entry)."""
        return state.invalidate(args, kwargs)

    return invalidate_cache


def _ainvalidate(state: _Cached) -> Callable[..., Any]:
    """invalidate_cache as a coroutine: an L2's I/O runs on the core's executor."""

    async def ainvalidate_cache(*args: Any, **kwargs: Any) -> Optional[InvalidationOutcome]:
        """invalidate_cache as a coroutine: drop the entry of these arguments (none: every entry)."""
        state.settle_backend()
        if state.objects is not None:
            return state.invalidate(args, kwargs)
        core = state._core or state.build_core()
        return await asyncio.get_running_loop().run_in_executor(core.executor(), state.invalidate, args, kwargs)

    return ainvalidate_cache


def _sync_entry(state: _Cached) -> Callable[..., Any]:
    """The callable serving a settled zero-config sync function's calls."""
    if state.objects is not None and state.key_fn is None:
        return _object_hot_path(state)
    call = state.call if state.objects is None else state.obj_slow
    return lambda *args, **kwargs: call(args, kwargs)


def _zero_config_wrapper(state: _Cached) -> Callable:
    """A function decorated with nothing configured: its first call settles it
    (object mode or an L2, state.settle_backend) and picks the callable of that mode,
    which serves every later call."""
    fn = state.fn
    box: list = [None]
    if state.is_async:
        @functools.wraps(fn)
        async def awrapper(*args: Any, **kwargs: Any) -> Any:
            entry = box[0]
            if entry is None:
                state.settle_backend()
                entry = box[0] = state.acall if state.objects is None else state.obj_aslow
            return await entry(args, kwargs)

        return awrapper

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        entry = box[0]
        if entry is None:
            state.settle_backend()
            entry = box[0] = _sync_entry(state)  # racing first callers may each build one: equivalent
        return entry(*args, **kwargs)

    return wrapper


def _make_wrapper(state: _Cached) -> Callable:
    fn = state.fn
    if state.zero_config:
        wrapper: Any = _zero_config_wrapper(state)
        wrapper.invalidate_cache = _ainvalidate(state) if state.is_async else _sync_invalidate(state)
    elif state.is_async:
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

        wrapper = awrapper
        # cache.local's is a plain function on coroutine functions too (the reference's local
        # wrapper: nothing to await without an L2); the others' a coroutine, as there.
        wrapper.invalidate_cache = (_sync_invalidate(state) if state.local else _ainvalidate(state))
    elif state.objects is not None and state.key_fn is None:
        wrapper = _plain_function(fn, _object_hot_path(state))
        wrapper.invalidate_cache = _sync_invalidate(state)
    else:
        call = state.call if state.objects is None else state.obj_slow

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            return call(args, kwargs)

        wrapper.invalidate_cache = _sync_invalidate(state)
    # Awaitable on sync functions too (as the reference's): the static type declares it on both.
    wrapper.ainvalidate_cache = (wrapper.invalidate_cache if state.is_async and not state.local
                                 else _ainvalidate(state))
    wrapper.cache_info = state.info
    wrapper.cache_clear = state.clear
    wrapper._cachekit = state
    return wrapper


# ---------------------------------------------------------------------------
# The public `cache` object and presets
# ---------------------------------------------------------------------------

class _Base:
    """A decorator (`cache` or a preset): usable as @x, @x(...), and x(fn).
    Each subclass names its preset; it gets its own __call__ whose signature has
    that preset's defaults (inspect.signature, help())."""

    _preset = "cache"

    def __init_subclass__(cls, preset: str = "", **kw: Any) -> None:
        """A preset's class: its own __call__, whose signature has the preset's defaults."""
        super().__init_subclass__(**kw)
        if not preset:
            return
        cls._preset = preset
        impl = getattr(cls, "__call__")

        def __call__(self: _Base, fn: Optional[Callable[..., Any]] = None, **kw: Any) -> Any:
            return impl(self, fn, **kw)

        __call__.__doc__ = impl.__doc__
        __call__.__qualname__ = f"{cls.__qualname__}.__call__"
        setattr(__call__, "__signature__", call_signature(preset))
        setattr(cls, "__call__", __call__)

    def __init__(self) -> None:
        self._defaults = dict(_PRESETS.get(self._preset, {}))
        self._name = self._preset

    def __repr__(self) -> str:
        return "<cachekit cache>" if self._name == "cache" else f"<cachekit cache.{self._name}>"

    def _decorate(self, fn: Optional[Callable[..., Any]], kw: dict[str, Any]) -> Any:
        if fn is not None:
            return self._build(fn, kw)
        _validate(dict(kw))  # unknown parameters fail at decoration time, before the function is seen

        def deco(f: Callable) -> Callable:
            return self._build(f, kw)

        return deco

    def _build(self, fn: Callable, kw: dict[str, Any]) -> Callable:
        if not callable(fn):
            # @cache above @classmethod: the classmethod object is no function, and a wrapper
            # of it would fail at every call; refused here, at import, as the reference does.
            raise TypeError(f"{fn!r} is not a callable object: put @cache below @classmethod "
                            "(@classmethod, then @cache, then def)")
        opts = dict(self._defaults)
        opts.update(_validate(dict(kw)))
        if opts.get("_local"):
            allowed_local = {"ttl", "max_entries", "namespace", "key"}
            extra = set(kw) - allowed_local
            if extra:
                raise TypeError(f"cache.local takes only ttl, max_entries, namespace, key (got {sorted(extra)})")
        if self._name == "secure":
            # Refused, never dropped (the reference 0.20+, protocol intent-presets: integrity is forced on).
            if opts.get("integrity_checking", True) is not True:
                raise ConfigurationError(lib.CACHEKIT_EINVAL, "The secure preset does not accept integrity_checking="
                                         f"{opts['integrity_checking']!r} — it forces integrity checking on. "
                                         "Omit integrity_checking.")
            opts["encryption"] = True
            opts["integrity_checking"] = True
        if opts.get("encryption") and opts.get("backend", _UNSET) is None:
            # Object mode keeps Python objects in process memory: nothing there could be ciphertext.
            raise ConfigurationError(lib.CACHEKIT_EINVAL, "encryption requires a backend: backend=None is L1-only "
                                     "and stores raw Python objects, which cannot be ciphertext. Drop backend=None "
                                     "or pass a backend explicitly to keep @cache.secure / encryption=True.")
        _check_choices(opts)
        state = _Cached(fn, opts)
        if opts.get("tenant_extractor") is not None and opts.get("encryption") and state.objects is None:
            TenantRouter(state, lambda t: _Cached(fn, {**opts, "tenant": t, "tenant_extractor": None}),
                         opts["tenant_extractor"]).install()
        return _make_wrapper(state)


class _Decorator(_Base):
    """A decorator that takes every keyword (`cache` and its presets but cache.local)."""

    # The overloads' order is CacheDecorator's (_types.py), which says why. The keywords'
    # names, order and annotations are _signature.PARAMS's (tests/test_decorator_docs.py).
    @overload
    def __call__(self, fn: Callable[Concatenate[AnyFirst, P], Any]) -> CachedFunction[..., Any]: ...

    @overload
    def __call__(self, fn: Callable[Concatenate[type[S], P], R]) -> CachedClassFunction[S, P, R]: ...

    @overload
    def __call__(self, fn: Callable[P, R]) -> CachedFunction[P, R]: ...

    @overload
    def __call__(self, fn: None = None, *,
                 ttl: float | None = ...,
                 namespace: str | None = ...,
                 backend: Any = ...,
                 serializer: str | Any = ...,
                 integrity_checking: bool = ...,
                 key: Callable[..., str] | None = ...,
                 interop: str | None = ...,
                 encryption: bool | EncryptionConfig | Mapping[str, Any] | None = ...,
                 master_key: str | bytes | None = ...,
                 tenant: str | None = ...,
                 fail_closed: bool | None = ...,
                 l1: bool | L1CacheConfig | Mapping[str, Any] | None = ...,
                 l1_enabled: bool = ...,
                 l1_max_size_mb: float | None = ...,
                 l1_admission: Literal['lru', 'tinylfu'] | None = ...,
                 max_entries: int | None = ...,
                 stale_while_revalidate: bool | None = ...,
                 swr_enabled: bool = ...,
                 swr_threshold_ratio: float = ...,
                 stale_ttl: int | None = ...,
                 refresh_ttl_on_get: bool = ...,
                 ttl_refresh_threshold: float = ...,
                 circuit_breaker: CircuitBreakerConfig | Mapping[str, Any] | None = ...,
                 backpressure: BackpressureConfig | Mapping[str, Any] | None = ...,
                 monitoring: MonitoringConfig | Mapping[str, Any] | None = ...,
                 tenant_extractor: TenantExtractor | Callable[[tuple[Any, ...], dict[str, Any]], object] | None = ...,
                 single_tenant_mode: bool = ...,
                 deployment_uuid: str | None = ...,
                 config: DecoratorConfig | Mapping[str, Any] | None = ...) -> CacheDecorator: ...

    def __call__(self, fn: Optional[Callable[..., Any]] = None, **kw: Any) -> Any:
        """Decorate a function: @x, @x(keyword=...), or x(fn). Keywords (all optional):

        ttl: seconds an entry lives (None: no expiry); a finite number >= 0.
        namespace: the keys' first segment and the L1 partition (None: "default").
        backend: "redis://...", "redis-cluster://...", "unix://...", "file:///dir", a directory,
            "memory://", a cachekit.Backend, RedisBackend / FileBackend, an object with
            get/set/delete, or None (L1 only: values kept as objects in this process); not
            given: the environment's (CACHEKIT_REDIS_URL / REDIS_URL, set_default_backend()),
            decided at the first call.
        serializer: "default"/"std", "auto"/"pythonic", "orjson", "arrow", or an instance.
        integrity_checking: checksum each stored value (a damaged one is a miss).
        key: a function of the call's arguments returning the key's own part (a str).
        interop: the operation name of an interop/v1 entry, readable by every CacheKit SDK.
        encryption: True / False, or an EncryptionConfig (or mapping) of the fields below;
            not given: no choice (refused when a master key is set and values go to an L2).
        master_key: the encryption master key, hex of 32 bytes (or CACHEKIT_MASTER_KEY).
        tenant: the single encryption tenant (this wrapper's; wins over deployment_uuid).
        fail_closed: a refused (undecryptable, damaged) entry raises instead of being a miss.
        l1: True / False, or an L1CacheConfig (or mapping) of the L1 fields below.
        l1_enabled: keep an in-process L1 in front of the backend.
        l1_max_size_mb: the L1's memory budget in MiB (CACHEKIT_L1_MAX_SIZE_MB, else 100).
        l1_admission: the L1's admission policy, "lru" or "tinylfu" (None: the core's).
        max_entries: the most entries kept in process (L1-only mode).
        stale_while_revalidate: with a backend, refresh entries ahead of expiry (off by default).
        swr_enabled: L1-only mode's stale-while-revalidate (not given: on, unless
            stale_while_revalidate=False).
        swr_threshold_ratio: the share of ttl, in (0, 1], after which an entry is refreshed.
        stale_ttl: the reference's past-expiry window: 0/None only (no backend here serves it).
        refresh_ttl_on_get: an L2 hit close to expiry gets its ttl again.
        ttl_refresh_threshold: "close to expiry" for refresh_ttl_on_get: below ttl x this (0..1).
        circuit_breaker: a CircuitBreakerConfig (or mapping): when to stop calling a failing backend.
        backpressure: a BackpressureConfig (or mapping): the bound on backend calls in flight.
        monitoring: a MonitoringConfig (or mapping): accepted, not used (metrics are always on).
        tenant_extractor: multi-tenant encryption: an object with .extract(args, kwargs), or a
            callable (args, kwargs), giving each call's tenant UUID.
        single_tenant_mode: one tenant for every call (the reference's; not with tenant_extractor).
        deployment_uuid: the encryption tenant as a UUID (or CACHEKIT_DEPLOYMENT_UUID).
        config: a DecoratorConfig (or mapping) of the above; keywords given beside it win.

        Another keyword is a TypeError, a bad value a TypeError, ValueError or
        ConfigurationError naming it, all at decoration. The decorated function keeps its
        signature and gains cache_info(), cache_clear(), invalidate_cache(*args) and
        ainvalidate_cache(*args); its call takes _bypass_cache=True to skip the cache.
        """
        return self._decorate(fn, kw)


class _Local(_Base, preset="local"):
    """cache.local: an in-process object cache (L1 only, no backend, no serialisation),
    the reference's local preset: ttl 300 s, max_entries 256, no stale-while-revalidate;
    invalidate_cache() is a plain function (on coroutine functions too) and reports NO_L2.

        @cache.local(ttl=60, max_entries=1000)
        def parse(text: str) -> Tree: ...
    """

    @overload
    def __call__(self, fn: Callable[Concatenate[AnyFirst, P], Any]) -> CachedFunction[..., Any]: ...

    @overload
    def __call__(self, fn: Callable[Concatenate[type[S], P], R]) -> CachedClassFunction[S, P, R]: ...

    @overload
    def __call__(self, fn: Callable[P, R]) -> CachedFunction[P, R]: ...

    @overload
    def __call__(self, fn: None = None, *,
                 ttl: int = ...,
                 max_entries: int = ...,
                 namespace: str | None = ...,
                 key: Callable[..., str] | None = ...) -> CacheDecorator: ...

    def __call__(self, fn: Optional[Callable[..., Any]] = None, **kw: Any) -> Any:
        """Decorate a function: @cache.local, @cache.local(keyword=...), or cache.local(fn).
        Keywords (all optional; any other is a TypeError):

        ttl: seconds an entry lives, a whole number >= 1.
        max_entries: the most entries kept (least recently used dropped first).
        namespace: the L1 partition (None: "default").
        key: a function of the call's arguments returning the entry's key (a str).
        """
        return self._decorate(fn, kw)


class _Minimal(_Decorator, preset="minimal"):
    """cache.minimal: speed first: ttl 300 s, integrity checking off, no
    stale-while-revalidate; every keyword of cache (below) may override.

        @cache.minimal(backend="redis://127.0.0.1:6379")
        def score(user_id: int) -> float: ...
    """


class _Production(_Decorator, preset="production"):
    """cache.production: the reliable default: ttl 600 s, integrity checking on;
    every keyword of cache (below) may override.

        @cache.production(namespace="users")
        def get_user(user_id: int) -> dict: ...
    """


class _Secure(_Decorator, preset="secure"):
    """cache.secure: encrypted values (AES-256-GCM, keys derived per tenant): ttl 600 s,
    encryption and integrity checking forced on. Needs master_key= or CACHEKIT_MASTER_KEY;
    integrity_checking other than True and backend=None are refused.

        @cache.secure(master_key=os.environ["APP_CACHE_KEY"], backend="redis://127.0.0.1:6379")
        def get_ssn(user_id: int) -> str: ...
    """


class _Dev(_Decorator, preset="dev"):
    """cache.dev: for development: ttl 300 s, integrity checking on; every keyword of
    cache (below) may override.

        @cache.dev(backend=None)
        def render(page: str) -> str: ...
    """


class _Test(_Decorator, preset="test"):
    """cache.test: for test suites: ttl 60 s, integrity checking off, no
    stale-while-revalidate; every keyword of cache (below) may override.

        @cache.test(backend="memory://")
        def lookup(x: int) -> int: ...
    """


class _Unavailable:
    """cache.io: an attribute like the reference's (its decorator partial), so reading it
    never raises (inspect.getmembers, mock.create_autospec, hasattr); applying it to a
    function is a ConfigurationError at decoration, where the reference refuses a missing
    api_key: libcachekit has no CachekitIO HTTP backend."""

    def __call__(self, fn: Optional[Callable[..., Any]] = None, **kw: Any) -> Any:
        if fn is not None:
            self._refuse()

        def deco(f: Callable) -> Callable:
            self._refuse()
            return f

        return deco

    @staticmethod
    def _refuse() -> None:
        raise ConfigurationError(lib.CACHEKIT_EINVAL,
                                 "cache.io (the hosted CachekitIO HTTP backend) is not available in libcachekit: "
                                 "use backend='redis://...', a file directory or 'memory://'")

    def __repr__(self) -> str:
        return "<cachekit cache.io: not available in libcachekit>"


class _Cache(_Decorator, preset="cache"):
    """cache: the CacheKit decorator (cachekit-py's, on libcachekit): a function's
    results cached in process (L1) and in a backend (L2: Redis, a shared directory,
    memory), keyed by its arguments, with single-flight loads, integrity checks and
    optional encryption. Presets: cache.minimal, cache.production, cache.secure,
    cache.dev, cache.test, cache.local (help(cache.secure) ...); cache.io is refused.

        from cachekit import cache

        @cache(ttl=600, namespace="users", backend="redis://127.0.0.1:6379")
        def get_user(user_id: int) -> dict: ...

        get_user(42)                   # computed, then served from the cache
        get_user.invalidate_cache(42)  # that entry dropped
    """

    minimal: _Minimal
    production: _Production
    secure: _Secure
    dev: _Dev
    test: _Test
    local: _Local
    io: _Unavailable

    def __init__(self) -> None:
        super().__init__()
        self.minimal = _Minimal()
        self.production = _Production()
        self.secure = _Secure()
        self.dev = _Dev()
        self.test = _Test()
        self.local = _Local()
        self.io = _Unavailable()


cache = _Cache()
