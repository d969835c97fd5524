"""Core handles: one per distinct configuration and per process, built on first
use, never shared with a forked child (docs/python.md "Backends")."""
from __future__ import annotations

import os
import threading
from typing import Any, Optional
from urllib.parse import quote

from cachekit import _key_registry, _options
from cachekit._codec import AUTO_SERIALIZERS
from cachekit._config import _UNSET, _backend_url, _secret_id
from cachekit._core import Backend, ConfigurationError, CoreCache, lib
from cachekit._defaults import get_default_backend
from cachekit._urlbackend import CoreUrlBackend
from cachekit._userbackend import is_user_backend, make_core

_ZERO_CONFIG_TENANT = "default"  # the reference Redis provider's tenant when no request context sets one

_handles: dict[tuple, CoreCache] = {}
_handles_lock = threading.Lock()
_handles_pid = os.getpid()  # the process whose cores _handles holds
_validated: set = set()  # configurations whose core was built once at decoration (to check them)
_registry: list = []  # every decorated function's _Cached (for metrics and the fork hook)


def _core_for(cfg: tuple, kw: dict[str, Any]) -> CoreCache:
    """The process's core for a configuration, built on first use. A core is
    never handed to another process than the one that built it: the fork hook
    empties the table in the child, and the pid check catches a fork that did
    not run the hook."""
    with _handles_lock:
        if _handles_pid != os.getpid():
            _forget_inherited_cores()
        h = _handles.get(cfg)
        if h is None:
            h = make_core(**kw)
            _handles[cfg] = h
        return h


def _check_core(cfg: tuple, kw: dict[str, Any]) -> None:
    """Decoration-time check of a configuration (bad key, two backend
    selectors...): a core is built and freed at once, so nothing of it
    outlives the decorator (a prefork parent hands no core to its workers)."""
    with _handles_lock:
        if cfg in _validated or cfg in _handles:
            return
    make_core(**kw).close()
    with _handles_lock:
        _validated.add(cfg)


def env_names_backend() -> bool:
    """The environment chooses an L2 (the core's selectors; an empty value is unset)."""
    return any(os.environ.get(v) for v in ("CACHEKIT_REDIS_URL", "CACHEKIT_FILE_CACHE_DIR", "REDIS_URL"))


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


def _refuse_interop_prefix(backend: Any) -> None:
    """Interop keys are bare on the wire in every SDK: a backend that prefixes them
    would store entries no other SDK reads (and an encrypted entry's AAD would bind
    the prefix). Refused with the reference's class and rule (cachekit-py 0.24.1
    interop.ensure_interop_backend_compatible: a truthy `key_prefix` or `_key_prefix`)."""
    prefix = getattr(backend, "key_prefix", None) or getattr(backend, "_key_prefix", None)
    if prefix:
        raise ConfigurationError(
            lib.CACHEKIT_EINVAL,
            f"interop mode cannot be used with a key-prefixing backend ({type(backend).__name__} has "
            f"key_prefix={prefix!r}): other SDKs read interop entries under the bare key; pass a backend "
            f"without a prefix")


class CoreMixin:
    """Part of _Cached: its core handle (L2 mode)."""

    registry_kept = False  # its core lists its keys in a key registry (_key_registry.py)

    @property
    def core(self) -> Optional[CoreCache]:
        """The core of this process (None in object mode), built on first use."""
        return self._core or self.build_core()

    @core.setter
    def core(self, value: CoreCache) -> None:
        self._core = value

    def settle_backend(self) -> None:
        """A zero-config function (no backend=, no default, plaintext, not interop), before
        its first call or invalidation: with still no default and no backend in the
        environment it runs in object mode for life, as backend=None does (the reference's
        zero-config L1-only mode: no entry outlives the process); else build_core chooses
        the L2 as before."""
        if not self.zero_config:
            return
        with self.settle_lock:
            if not self.zero_config:
                return
            if get_default_backend() is None and not env_names_backend():
                self.enter_object_mode(self.backend_at_first_call or {})
            self.zero_config = False

    def build_core(self) -> Optional[CoreCache]:
        self.settle_backend()
        if self.core_spec is None:
            return None
        if self.backend_at_first_call is not None:
            # The reference's choice at the first call: set_default_backend(), then the environment.
            self.core_spec = self._core_spec(self.backend_at_first_call)
            _check_core(*self.core_spec)
            self.backend_at_first_call = None
        core = _core_for(*self.core_spec)
        # Before the first write: the core lists this function's keys in its key registry.
        self.registry_kept = _key_registry.declare(self, core)
        self._core = core
        return core

    def after_fork(self) -> None:
        """In a forked child: no core, lock or refresh of the parent's is used."""
        self._core = None
        self.registry_kept = False
        self.lock = threading.Lock()
        self.settle_lock = threading.Lock()
        self.refreshing = set()
        self.aflights = {}
        self.refresh_pool = None
        self.refresh_pending = 0
        if self.objects is not None:
            self.objects.after_fork()

    def _core_spec(self, opts: dict[str, Any]) -> tuple:
        """(configuration identity, CoreCache keyword arguments)."""
        backend = opts.get("backend", _UNSET)
        if backend is _UNSET:
            backend = get_default_backend() or _UNSET
        interop = self.interop_op is not None
        # The reference's "auto" serializer tags its frames "auto" (the core writes and reads that tag).
        auto_serializer = not interop and self.serializer_id in AUTO_SERIALIZERS
        encryption = bool(opts.get("encryption", False))
        master_key = _options.master_key_hex(opts.get("master_key"))
        env_key = os.environ.get("CACHEKIT_MASTER_KEY")
        if encryption and master_key is None:
            if not env_key:
                raise ValueError("encryption needs master_key= or CACHEKIT_MASTER_KEY (hex, 32 bytes)")
            canonical = _options.master_key_hex(env_key, "CACHEKIT_MASTER_KEY")
            if canonical != env_key:  # another spelling the reference reads: hand the core its form
                master_key = canonical
        # The encryption tenant (deployment_uuid, CACHEKIT_DEPLOYMENT_UUID...) is resolved only when encrypting, as
        # in the reference: a malformed one never stops a plaintext cache.
        tenant = _options.encryption_tenant(opts, interop) if encryption else opts.get("tenant")
        tuning: dict[str, Any] = _options.timeout_options()
        if opts.get("circuit_breaker") is not None:
            tuning.update(_options.breaker_options(opts["circuit_breaker"]))
        if opts.get("backpressure") is not None:
            tuning.update(_options.backpressure_options(opts["backpressure"]))
        refresh = _options.refresh_ttl_fraction(opts) if not is_user_backend(backend) else 0.0
        if refresh:  # the core resets TTLs to its default_ttl: a core per (ttl, threshold)
            tuning.update(refresh_ttl_on_get=refresh, default_ttl=self.core_ttl)
        l1 = bool(opts.get("l1", opts.get("l1_enabled", True)))
        mb = opts.get("l1_max_size_mb")
        l1_bytes = int(mb * (1 << 20)) if mb else 0
        l1_admission = opts.get("l1_admission")
        swr = self.l2_swr and l1  # the core's SWR on L1 hits: stale_while_revalidate=True only
        fail_closed = opts.get("fail_closed")
        backend_obj = None
        user_backend = None
        url: Optional[str] = None
        tls: dict[str, Any] = {}  # a RedisBackend's TLS keywords
        key_prefix: Optional[str] = None
        if (backend is not _UNSET and l1 and _options.listener_enabled()
                and not (isinstance(backend, str) and "l1_coherence=" in backend)):
            _options.note_listener_elsewhere()
        if isinstance(backend, Backend):
            backend_obj = backend
        elif is_user_backend(backend):
            user_backend = backend
            if interop:
                _refuse_interop_prefix(backend)
        elif backend is not _UNSET:
            url = _backend_url(backend)
            tls = backend.core_tls if isinstance(backend, CoreUrlBackend) else {}
        else:
            # Unset: the core resolves the environment. The reference SDK's
            # zero-configuration Redis provider prefixes keys with t:{tenant}:, its
            # request tenant context's tenant, which is "default" unless the application
            # sets one per request; never the encryption tenant (its deployment_uuid, our
            # tenant=), as live interop with cachekit-py 0.24.1 showed. This wrapper has
            # no request tenant context: always t:default:.
            env_redis = None if os.environ.get("CACHEKIT_FILE_CACHE_DIR") else (
                os.environ.get("CACHEKIT_REDIS_URL") or os.environ.get("REDIS_URL"))
            if not interop and env_redis:
                key_prefix = "t:" + quote(_ZERO_CONFIG_TENANT, safe="") + ":"
            if env_redis and l1 and _options.listener_enabled():
                # The reference's invalidation listener: the core's L1 coherence on its channel,
                # so another process's invalidation drops this process's L1 copy.
                url = _options.with_listener(env_redis)
        cfg = (url, id(backend_obj) if backend_obj else id(user_backend) if user_backend else None,
               tuple(sorted(tuning.items())), self.core_ttl if user_backend else None, interop, None if interop else self.integrity, encryption,
               _secret_id(master_key), tenant, key_prefix, l1, l1_bytes, swr, self.swr_ratio if swr else 0.0, fail_closed,
               os.environ.get("CACHEKIT_REDIS_URL"), os.environ.get("CACHEKIT_FILE_CACHE_DIR"),
               os.environ.get("REDIS_URL"), l1_admission, os.environ.get("CACHEKIT_L1_ADMISSION"),
               _secret_id(os.environ.get("CACHEKIT_MASTER_KEY")) if encryption else None, auto_serializer,
               tuple(sorted((k, str(v)) for k, v in tls.items())))
        return cfg, dict(backend_url=url, backend=backend_obj, interop=interop, auto_serializer=auto_serializer,
                         integrity=None if interop else self.integrity, encryption=encryption, master_key=master_key,
                         tenant=tenant, key_prefix=key_prefix, l1=l1, l1_max_bytes=l1_bytes,
                         l1_admission=l1_admission, swr=swr,
                         swr_threshold_ratio=self.swr_ratio if swr else 0.0, fail_closed=fail_closed,
                         **({"tls": tls} if tls else {}), **tuning, **({"user_backend": user_backend, "default_ttl": self.core_ttl}
                                      if user_backend is not None else {}))
