"""A Django cache backend on libcachekit's L2 backends (docs/django.md).

    CACHES = {"default": {"BACKEND": "cachekit.django.CacheKitCache",
                          "LOCATION": "redis://127.0.0.1:6379/0",   # or file:///dir, memory://, ...
                          "OPTIONS": {"COMMAND_TIMEOUT_MS": 500}}}

Every LOCATION the core opens works (cachekit_backend_open). Values are pickled
(pickle.HIGHEST_PROTOCOL unless OPTIONS PICKLE_PROTOCOL says otherwise); an int is
stored as its decimal digits, as Django's own Redis backend stores it. Keys are
Django's (KEY_PREFIX, VERSION, KEY_FUNCTION through make_and_validate_key), stored
under this cache's namespace, so clear() deletes this cache's keys only.

Django makes a cache object per thread (and per request in async code): they all use
one raw backend handle per (LOCATION, OPTIONS) and per process, so connections do not
climb with requests, and a forked worker opens its own rather than using its parent's.

The async methods (aget, aset, ...) run the blocking calls on this module's own
threads (one pool per process, "cachekit-django"), concurrently, not through asgiref's
sync_to_async, which puts every call of the process on one thread.
"""
from __future__ import annotations

import asyncio
import functools
import os
import pickle
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Iterable, Optional

from django.core.cache.backends.base import DEFAULT_TIMEOUT, BaseCache
from django.core.exceptions import ImproperlyConfigured

from cachekit._core import TLS_KEYWORDS, Backend, CacheKitError, lib

__all__ = ["CacheKitCache"]

# OPTIONS this backend reads; MAX_ENTRIES and CULL_FREQUENCY are BaseCache's (read and
# ignored, as Django's Redis backend ignores them: the server evicts).
_BACKEND_OPTIONS = {"COMMAND_TIMEOUT_MS", "CONNECT_TIMEOUT_MS", "POOL_SIZE", "TLS"}
_OWN_OPTIONS = {"NAMESPACE", "PICKLE_PROTOCOL"}
_BASE_OPTIONS = {"MAX_ENTRIES", "CULL_FREQUENCY"}

# One raw Backend per (LOCATION, backend OPTIONS) and per process.
_handles: dict[tuple, Backend] = {}
_handles_lock = threading.Lock()
_handles_pid = os.getpid()
_inherited: list[Backend] = []  # a forked child's copies of its parent's handles: kept, never freed
# The threads of the async methods (per process: a forked child's pool has no threads).
_ASYNC_WORKERS = 8
_pool: Optional[ThreadPoolExecutor] = None


def _forget_inherited() -> None:
    """In a forked child: the parent's handles are not used (their sockets are the
    parent's) nor freed (freeing may touch them); each configuration opens anew."""
    global _handles_pid, _pool
    _inherited.extend(_handles.values())
    _handles.clear()
    _handles_pid = os.getpid()
    _pool = None  # the parent's threads do not exist here; never shut down from the child


def _after_fork_in_child() -> None:  # pragma: no cover - fork only
    global _handles_lock
    _handles_lock = threading.Lock()
    _forget_inherited()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _shared_backend(location: str, options: dict[str, Any]) -> Backend:
    tls = options.get("TLS") or {}
    ident = (location, options.get("COMMAND_TIMEOUT_MS", 0), options.get("CONNECT_TIMEOUT_MS", 0),
             options.get("POOL_SIZE", 0), tuple(sorted((k, repr(v)) for k, v in tls.items())))
    with _handles_lock:
        if _handles_pid != os.getpid():
            _forget_inherited()
        h = _handles.get(ident)
        if h is None:
            # fail_closed: an L2 failure raises (Django's backends raise on a server that is down).
            h = Backend(location, command_timeout_ms=int(options.get("COMMAND_TIMEOUT_MS", 0)),
                        connect_timeout_ms=int(options.get("CONNECT_TIMEOUT_MS", 0)),
                        pool_size=options.get("POOL_SIZE", 0), fail_closed=True, **tls)
            _handles[ident] = h
        return h


def _executor() -> ThreadPoolExecutor:
    global _pool
    with _handles_lock:
        if _handles_pid != os.getpid():
            _forget_inherited()
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=_ASYNC_WORKERS, thread_name_prefix="cachekit-django")
        return _pool


def open_handles() -> int:
    """How many raw backend handles this process holds (for tests and diagnostics)."""
    with _handles_lock:
        return len(_handles) if _handles_pid == os.getpid() else 0


class CacheKitCache(BaseCache):
    """django.core.cache.backends.base.BaseCache on a libcachekit backend (docs/django.md)."""

    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(params)
        if isinstance(server, (list, tuple)):
            if len(server) != 1:
                raise ImproperlyConfigured("cachekit.django.CacheKitCache takes one LOCATION URL")
            server = server[0]
        if not server:
            raise ImproperlyConfigured("cachekit.django.CacheKitCache needs LOCATION: a backend URL "
                                       "(redis://..., file:///dir, memory://)")
        options = dict(params.get("OPTIONS") or {})
        unknown = set(options) - _BACKEND_OPTIONS - _OWN_OPTIONS - _BASE_OPTIONS
        if unknown:
            raise ImproperlyConfigured(f"cachekit.django.CacheKitCache: unknown OPTIONS {', '.join(sorted(unknown))}")
        tls = options.get("TLS") or {}
        bad_tls = set(tls) - set(TLS_KEYWORDS)
        if bad_tls:
            raise ImproperlyConfigured(f"cachekit.django.CacheKitCache: unknown TLS keywords {', '.join(sorted(bad_tls))}")
        self._location = str(server)
        self._options = options
        self._protocol = int(options.get("PICKLE_PROTOCOL", pickle.HIGHEST_PROTOCOL))
        namespace = str(options.get("NAMESPACE", "django"))
        # The storage prefix: the namespace and KEY_PREFIX, KEY_PREFIX's length first, so that no
        # cache's prefix is the start of another's ("a" and "a:b" are "django:1:a:" and "django:3:a:b:").
        self._prefix = f"{namespace}:{len(self.key_prefix)}:{self.key_prefix}:".encode()
        self._backend_handle: Optional[Backend] = None
        self._backend_pid = 0

    # -- plumbing -----------------------------------------------------------------

    @property
    def _backend(self) -> Backend:
        h = self._backend_handle
        if h is None or self._backend_pid != os.getpid():
            h = _shared_backend(self._location, self._options)
            self._backend_handle, self._backend_pid = h, os.getpid()
        return h

    def _key(self, key: Any, version: Optional[int]) -> bytes:
        return self._prefix + self.make_and_validate_key(key, version=version).encode()

    def _encode(self, value: Any) -> bytes:
        if type(value) is int:  # as Django's Redis backend: digits, so a server-side increment can work on them
            return str(value).encode()
        return pickle.dumps(value, self._protocol)

    @staticmethod
    def _decode(data: bytes) -> Any:
        try:
            return int(data)
        except ValueError:
            return pickle.loads(data)

    def get_backend_timeout(self, timeout: Any = DEFAULT_TIMEOUT) -> Optional[float]:
        """Seconds to keep an entry: None is forever, 0 (or less) is not stored at all."""
        if timeout is DEFAULT_TIMEOUT:
            timeout = self.default_timeout
        return None if timeout is None else max(0.0, float(timeout))

    @staticmethod
    def _core_ttl(seconds: Optional[float]) -> float:
        return 0.0 if seconds is None else seconds  # the core's 0: no expiry

    # -- the cache API ------------------------------------------------------------

    def get(self, key: Any, default: Any = None, version: Optional[int] = None) -> Any:
        data = self._backend.get(self._key(key, version))
        return default if data is None else self._decode(data)

    def set(self, key: Any, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: Optional[int] = None) -> None:
        k = self._key(key, version)
        ttl = self.get_backend_timeout(timeout)
        if ttl == 0:
            self._backend.delete(k)  # Django: a non-positive timeout expires the key now
            return
        self._backend.set(k, self._encode(value), self._core_ttl(ttl))

    def add(self, key: Any, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: Optional[int] = None) -> bool:
        """One round trip (SET NX PX on Redis): exactly one of concurrent adds wins."""
        k = self._key(key, version)
        ttl = self.get_backend_timeout(timeout)
        if ttl == 0:  # answers as if it stored, and stores nothing (Django's Redis backend)
            return not self._backend.exists(k)
        return self._backend.add(k, self._encode(value), self._core_ttl(ttl))

    def touch(self, key: Any, timeout: Any = DEFAULT_TIMEOUT, version: Optional[int] = None) -> bool:
        """One round trip: PEXPIRE, or PERSIST for no expiry; a timeout of 0 deletes."""
        k = self._key(key, version)
        ttl = self.get_backend_timeout(timeout)
        if ttl == 0:
            return self._backend.delete(k)
        return self._backend.touch(k, self._core_ttl(ttl))

    def delete(self, key: Any, version: Optional[int] = None) -> bool:
        return self._backend.delete(self._key(key, version))

    def has_key(self, key: Any, version: Optional[int] = None) -> bool:
        return self._backend.exists(self._key(key, version))

    def get_many(self, keys: Iterable[Any], version: Optional[int] = None) -> dict[Any, Any]:
        keys = list(keys)
        if not keys:
            return {}
        stored = [self._key(key, version) for key in keys]
        found = self._backend.get_many(stored)
        return {key: self._decode(data) for key, data in zip(keys, found) if data is not None}

    def set_many(self, data: dict[Any, Any], timeout: Any = DEFAULT_TIMEOUT,
                 version: Optional[int] = None) -> list[Any]:
        if not data:
            return []
        ttl = self.get_backend_timeout(timeout)
        if ttl == 0:
            self.delete_many(list(data), version=version)
            return []
        items = [(self._key(key, version), self._encode(value)) for key, value in data.items()]
        self._backend.set_many(items, self._core_ttl(ttl))
        return []  # Django's contract: the keys that failed to be stored (none: a failure raises)

    def delete_many(self, keys: Iterable[Any], version: Optional[int] = None) -> None:
        stored = [self._key(key, version) for key in keys]
        if stored:
            self._backend.delete_many(stored)  # one round trip (UNLINK; one per slot on a cluster)

    def incr(self, key: Any, delta: int = 1, version: Optional[int] = None) -> Any:
        """One round trip, atomic on the server (a script running INCRBY on a key that
        exists), the entry's TTL kept. A missing key is ValueError (as in Django); a value
        that is not an integer of 64 bits is TypeError, a result past 64 bits OverflowError."""
        k = self._key(key, version)
        try:
            value = self._backend.incr(k, delta)
        except CacheKitError as e:
            if e.code == lib.CACHEKIT_EUNSUPPORTED:
                raise TypeError(f"Key '{key}' does not hold an integer of 64 bits: cannot increment it") from e
            if e.code == lib.CACHEKIT_ETOOBIG:
                raise OverflowError(f"Key '{key}': the result would not fit in a signed 64-bit integer") from e
            raise
        if value is None:
            raise ValueError(f"Key '{key}' not found")
        return value

    def decr(self, key: Any, delta: int = 1, version: Optional[int] = None) -> Any:
        return self.incr(key, -delta, version)

    def clear(self) -> None:
        """This cache's keys only (its namespace and KEY_PREFIX). The file backend stores
        hashed names: there clear() empties the directory, as Django's FileBasedCache does."""
        if self._backend.kind == "file":
            self._backend.clear_all()
        else:
            self._backend.clear_prefix(self._prefix)

    # -- async: the methods above on this module's threads -----------------------

    async def _off_loop(self, method: Any, *args: Any, **kwargs: Any) -> Any:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(_executor(), functools.partial(method, *args, **kwargs))

    async def aget(self, key: Any, default: Any = None, version: Optional[int] = None) -> Any:
        return await self._off_loop(self.get, key, default, version)

    async def aset(self, key: Any, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: Optional[int] = None) -> None:
        return await self._off_loop(self.set, key, value, timeout, version)

    async def aadd(self, key: Any, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: Optional[int] = None) -> bool:
        return await self._off_loop(self.add, key, value, timeout, version)

    async def atouch(self, key: Any, timeout: Any = DEFAULT_TIMEOUT, version: Optional[int] = None) -> bool:
        return await self._off_loop(self.touch, key, timeout, version)

    async def adelete(self, key: Any, version: Optional[int] = None) -> bool:
        return await self._off_loop(self.delete, key, version)

    async def ahas_key(self, key: Any, version: Optional[int] = None) -> bool:
        return await self._off_loop(self.has_key, key, version)

    async def aget_many(self, keys: Iterable[Any], version: Optional[int] = None) -> dict[Any, Any]:
        return await self._off_loop(self.get_many, list(keys), version)

    async def aset_many(self, data: dict[Any, Any], timeout: Any = DEFAULT_TIMEOUT,
                        version: Optional[int] = None) -> list[Any]:
        return await self._off_loop(self.set_many, data, timeout, version)

    async def adelete_many(self, keys: Iterable[Any], version: Optional[int] = None) -> None:
        return await self._off_loop(self.delete_many, list(keys), version)

    async def aincr(self, key: Any, delta: int = 1, version: Optional[int] = None) -> Any:
        return await self._off_loop(self.incr, key, delta, version)

    async def adecr(self, key: Any, delta: int = 1, version: Optional[int] = None) -> Any:
        return await self._off_loop(self.incr, key, -delta, version)

    async def aclear(self) -> None:
        return await self._off_loop(self.clear)

    async def aget_or_set(self, key: Any, default: Any, timeout: Any = DEFAULT_TIMEOUT,
                          version: Optional[int] = None) -> Any:
        """BaseCache.get_or_set's steps on the async methods above; a callable default
        runs on the event loop's thread, as in BaseCache.aget_or_set."""
        value = await self.aget(key, self._missing_key, version=version)
        if value is not self._missing_key:
            return value
        if callable(default):
            default = default()
        await self.aadd(key, default, timeout=timeout, version=version)
        return await self.aget(key, default, version=version)

    def close(self, **kwargs: Any) -> None:
        """Django calls this at the end of every request: the shared handle stays open
        (one per configuration and process), so the next request does not reconnect."""
        self._backend_handle = None

