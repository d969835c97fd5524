"""L2 mode (a backend): every call is the core's cachekit_cache_get_or_load
(single-flight in the core); the settling of its rare outcomes is shared by
the sync path here and the async one (_async.py)."""
from __future__ import annotations

from typing import Any, Callable

from cachekit import _codec
from cachekit._config import _MAX_TRACKED_KEYS
import logging

from cachekit._core import (SOURCE_LOADED, SOURCE_WAITED, BackendError, CacheKitError, LoadFailed, LoadTimeout,
                            UnreadableValue)
from cachekit._keys import _L2_KEY_ERRORS, _UNCACHED

# A loader's holder starts with _FAILED when the function raised; l2_settle's verdicts.
_FAILED = object()
_VALUE, _RAISE, _COMPUTE, _RETRY, _UNREADABLE = object(), object(), object(), object(), object()

log = logging.getLogger("cachekit")


class _Unstorable(Exception):
    """A computed value the serializer cannot store: every caller of that load
    gets the object itself, nothing is cached."""

    def __init__(self, value: Any, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.value = value
        self.cause = cause



class L2ModeMixin:
    """Part of _Cached: its L2-mode calls (sync)."""

    def encode_checked(self, v: Any) -> tuple[bytes, bool]:
        """(v's payload, whether it may fail to decode): _codec's *_checked encoders."""
        if self.interop_op is not None:
            return _codec.encode_interop_value(v), True
        if self.serializer_id in _codec.AUTO_SERIALIZERS:
            return _codec.encode_auto_value_checked(v)
        return _codec.encode_value_checked(v)

    def decode(self, data: Any, temporal_keys: int = -1) -> Any:
        if self.serializer_id in _codec.AUTO_SERIALIZERS:
            return _codec.decode_auto_value(data, temporal_keys)
        return _codec.decode_value(data, temporal_keys)

    def call(self, args: tuple, kwargs: dict) -> Any:
        key, kwargs = self.key_of_call(args, kwargs, self.cached_key, _L2_KEY_ERRORS)
        if key is _UNCACHED:
            return self.fn(*args, **kwargs)
        # A loop only for the rare retry (an interrupted leader): the first
        # pass is the hit path, one core call.
        core = self._core or self.build_core()
        unreadable = False
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
            if what is _UNREADABLE:
                if unreadable:  # unreadable again (another writer): this call runs uncached
                    return self.fn(*args, **kwargs)
                unreadable = True
                self.drop_unreadable(core, key, x)

    def drop_unreadable(self, core: Any, key: bytes, exc: UnreadableValue) -> None:
        """A stored value that does not decode is a miss: removed, so that the
        next load recomputes and replaces it."""
        log.warning("cachekit: %s.%s: a stored value could not be read (%s): it is recomputed", self.module,
                    self.qualname, exc.cause)
        try:
            core.invalidate(self.ns_bytes, key)
        except BackendError:
            pass

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
        """v's stored bytes; _Unstorable when it cannot be serialised exactly
        (a type the serializer would bring back as another) or its bytes do not
        decode (a dict with tuple keys): never stored, so that it cannot break
        or change the later calls. The bytes are decoded to prove it only when
        the encoder says they may fail (_codec.encode_value_checked)."""
        try:
            data, may_fail = self.encode_checked(v)
        except CacheKitError:
            raise
        except (TypeError, ValueError, OverflowError) as exc:
            raise _Unstorable(v, exc) from None
        if may_fail:
            try:
                self.decode(data)
            except Exception as exc:
                raise _Unstorable(v, exc) from None
        return data

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
        if isinstance(outcome, UnreadableValue):
            return _UNREADABLE, outcome
        return _RAISE, outcome

    def settle(self, key: bytes, source: int) -> bool:
        """Count a lookup; True when this caller ran the loader (its value is in the holder)."""
        self.count(source)
        if source != SOURCE_LOADED:
            return False
        self.note_written(key)
        return True

    def note_written(self, key: bytes) -> None:
        """Remember a key this process stored (for invalidate_cache() without
        arguments), unless a key registry lists it (_key_registry.py)."""
        if not self.registry_kept and len(self.written) < _MAX_TRACKED_KEYS:
            self.written.add(key)
