"""A user-defined backend (the reference's BaseBackend protocol: get(key) ->
bytes | None, set(key, value, ttl=None), delete(key), exists(key)) as the L2.

The core keeps doing everything but the I/O: its L2 is a private memory://
store (the staging store) and this core moves bytes between that store and
the user's object around each core call, so the keys the user's backend sees
are the core's keys (the reference's: the cache key string, behind the backend's
own key_prefix if it has one) and the values are the bytes the core would store
(CK v3 frame around the envelope or the ciphertext; interop: plain MessagePack),
verified and decrypted by the core on the way back.

    read miss in L1 -> user.get(key) -> staged -> the core reads it (verifies,
                       promotes to L1) -> unstaged
    write           -> the core writes L1 + staging -> user.set(key, bytes, ttl)
                       -> unstaged
    invalidate      -> the core + user.delete(key)

Errors raised by the user's object are the backend's errors: the call degrades
(computes, does not store) unless the cache is fail-closed, where they are
raised as BackendError.
"""
from __future__ import annotations

import logging
import os
import threading
from typing import Any, Callable, Optional

from cachekit._core import Backend, BackendError, CoreCache, UnreadableValue, lib
from cachekit._urlbackend import CoreUrlBackend

log = logging.getLogger("cachekit")


def is_user_backend(obj: Any) -> bool:
    if obj is None or isinstance(obj, (str, bytes, os.PathLike, Backend, CoreUrlBackend)):
        return False
    return all(callable(getattr(obj, m, None)) for m in ("get", "set", "delete"))


class BridgedCore(CoreCache):
    """A CoreCache whose L2 is a Python object (see the module docstring)."""

    def __init__(self, *, user_backend: Any, ttl: float, **kw: Any) -> None:
        # The staging store reports its errors to the core (it never has any).
        staging = Backend("memory://", fail_closed=True)
        prefix = getattr(user_backend, "key_prefix", None)
        kw["key_prefix"] = prefix if isinstance(prefix, str) and prefix else None
        kw.pop("backend_url", None)
        kw.pop("backend", None)
        super().__init__(backend=staging, **kw)
        self._staging = staging
        self._user = user_backend
        self._prefix = (kw["key_prefix"] or "").encode("utf-8")
        self._user_ttl: Optional[float] = ttl if ttl else None
        # Bumped by every invalidation through this core (never held across the user's I/O).
        self._epoch_lock = threading.Lock()
        self._epoch = 0

    # The user's object -------------------------------------------------------

    def _failed(self, op: str, exc: Exception) -> None:
        if self._fail_closed:
            raise BackendError(lib.CACHEKIT_EBACKEND, f"user backend {op} failed: {exc!r}") from exc
        log.warning("cachekit: user backend %s failed (served uncached): %r", op, exc)

    def _user_get(self, key: bytes) -> Optional[bytes]:
        try:
            data = self._user.get(key.decode("utf-8"))
        except Exception as exc:
            self._failed("get", exc)
            return None
        if data is None:
            return None
        if not isinstance(data, (bytes, bytearray, memoryview)):
            self._failed("get", TypeError(f"get returned {type(data).__name__}, not bytes"))
            return None
        return bytes(data)

    def _user_set(self, key: bytes, data: bytes, ttl: float) -> None:
        t = ttl if ttl and ttl > 0 else self._user_ttl
        if t is not None and float(t).is_integer():
            t = int(t)
        try:
            self._user.set(key.decode("utf-8"), data, ttl=t)
        except Exception as exc:
            self._failed("set", exc)

    def _user_delete(self, key: bytes) -> bool:
        try:
            self._user.delete(key.decode("utf-8"))
        except Exception as exc:
            self._failed("delete", exc)
            return False
        return True

    # Staging -----------------------------------------------------------------

    def _stage(self, key: bytes) -> Optional[bytes]:
        """The user's entry for `key` copied into the staging store (or None)."""
        data = self._user_get(key)
        if data is not None:
            self._staging.set(self._prefix + key, data)
        return data

    def _settle(self, ns: Optional[bytes], key: bytes, staged: Optional[bytes], ttl: float, epoch: int) -> None:
        """After a core call: what the staging store holds now goes back to the
        user's backend. The staged bytes untouched: nothing to do; gone (the core
        evicted an entry it refused): deleted there too, if it still holds them;
        new bytes (a load or a write): written there. Bytes staged before an
        invalidation that came during the call are not kept in L1 (the caller
        still gets its value, as any read racing an invalidation may)."""
        if staged is not None and epoch != self._epoch:
            CoreCache.invalidate(self, ns, key)
            return
        pk = self._prefix + key
        cur = self._staging.get(pk)
        if cur is None:
            if staged is not None and self._user_get(key) == staged:
                self._user_delete(key)
            return
        self._staging.delete(pk)
        if cur != staged:
            self._user_set(key, cur, ttl)

    # Reads -------------------------------------------------------------------

    def _read(self, ns: Optional[bytes], first: Callable[[], tuple[Optional[bytes], Any]],
              again: Callable[[], tuple[Optional[bytes], Any]], key: bytes) -> tuple[Optional[bytes], Any]:
        value, info = first()
        if value is not None:
            return value, info
        epoch = self._epoch
        staged = self._stage(key)
        if staged is None:
            return again()
        try:
            return again()
        finally:
            self._settle(ns, key, staged, 0.0, epoch)

    def get(self, ns: Optional[bytes], key: bytes) -> tuple[Optional[bytes], Any]:
        return self._read(ns, lambda: CoreCache.get(self, ns, key), lambda: CoreCache.get(self, ns, key), key)

    def get_for_load(self, ns: Optional[bytes], key: bytes) -> tuple[Optional[bytes], Any]:
        # The first look takes no claim (an L1 hit needs none); the second does on a miss.
        return self._read(ns, lambda: CoreCache.get(self, ns, key), lambda: CoreCache.get_for_load(self, ns, key),
                          key)

    def get_or_load(self, ns: Optional[bytes], key: bytes, ttl: float, compute: Callable[[], bytes],
                    decode: Optional[Callable[[Any, int], Any]] = None) -> tuple[Any, Any]:
        value, info = CoreCache.get(self, ns, key)
        if value is not None:
            if decode is None:
                return value, info
            try:
                return decode(value, info.temporal_keys), info
            except Exception as exc:
                raise UnreadableValue(exc) from None
        epoch = self._epoch
        staged = self._stage(key)
        try:
            return CoreCache.get_or_load(self, ns, key, ttl, compute, decode)
        finally:
            self._settle(ns, key, staged, ttl, epoch)  # a load this caller ran (or led) lands in the user's backend

    # Writes ------------------------------------------------------------------

    def put(self, ns: Optional[bytes], key: bytes, value: bytes, ttl: float) -> None:
        CoreCache.put(self, ns, key, value, ttl)
        self._settle(ns, key, None, ttl, self._epoch)

    def put_refresh(self, ns: Optional[bytes], key: bytes, value: bytes, ttl: float, claim: int) -> bool:
        stored = CoreCache.put_refresh(self, ns, key, value, ttl, claim)
        if stored:
            self._settle(ns, key, None, ttl, self._epoch)
        return stored

    def invalidate(self, ns: Optional[bytes], key: bytes) -> None:
        self.invalidate_reported(ns, key)

    def invalidate_reported(self, ns: Optional[bytes], key: bytes) -> bool:
        """The L2 here is the user's object: its delete's own result."""
        with self._epoch_lock:
            self._epoch += 1
        CoreCache.invalidate(self, ns, key)
        return self._user_delete(key)

    def close(self) -> None:
        super().close()
        self._staging.close()


def make_core(**kw: Any) -> CoreCache:
    """A CoreCache, or a BridgedCore when the L2 is a user's object."""
    user = kw.pop("user_backend", None)
    if user is None:
        return CoreCache(**kw)
    return BridgedCore(user_backend=user, ttl=kw.get("default_ttl", 0.0), **kw)
