"""Key building: the key of a call in L2 mode (the core's auto or interop key,
or key=) and in object mode (the arguments themselves when exact)."""
from __future__ import annotations

import logging
from typing import Any, Callable

from cachekit import _codec, _ndarray
from cachekit._core import CacheKitError, ConfigurationError

log = logging.getLogger("cachekit")

# Simple scalars whose args tuple may key a dict memo directly. bool, float and
# the numeric tower are excluded because they compare equal to ints.
_SIMPLE = frozenset({int, str, bytes, type(None)})
_PACKED = object()  # marks object-mode keys built from packed arguments
_UNCACHED = object()  # key_of_call: this call runs the function uncached
# What building a key may raise for arguments it cannot take (the call then
# runs uncached): object mode, and L2 mode where the core builds the key.
_OBJ_KEY_ERRORS = (_codec.UnsupportedArgument, TypeError)
_L2_KEY_ERRORS = (_codec.UnsupportedArgument, TypeError, CacheKitError)


class KeysMixin:
    """Part of _Cached: the keys of its calls."""

    def key_for(self, args: tuple, kwargs: dict) -> str:
        if self.interop_op is not None:
            flat = _codec.bind_flat_args(self.signature, args, kwargs)
            return _codec.interop_key(self.namespace or "", self.interop_op, flat)
        if self.key_fn is not None:
            return self.key_head + self.custom_key(args, kwargs)
        return _codec.key_auto(self.namespace, self.module, self.qualname, _codec.pack_auto_args(args, kwargs),
                               self.integrity, self.serializer_id)

    def custom_key(self, args: tuple, kwargs: dict) -> str:
        """key=(*args, **kwargs), which must be a str (as the reference requires)."""
        k = self.key_fn(*args, **kwargs)
        if not isinstance(k, str):
            raise TypeError(f"key function must return str, got {type(k).__name__}")
        return k

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
            if self.local:
                raise  # cache.local lets it through, as the reference's local wrapper does
            self.unsupported(exc)
            return _UNCACHED, kwargs
        except Exception as exc:
            if not self.key_fn_failed(exc):
                raise
            return _UNCACHED, kwargs

    def key_fn_failed(self, exc: Exception) -> bool:
        """A key= function raised during a call: logged on every call and the call runs
        uncached, as the reference does (its cache.local lets it propagate, so does ours).
        Only the exception's type is logged: its message may hold the arguments."""
        if self.key_fn is None or self.local:
            return False
        log.warning("cachekit: %s.%s runs uncached: its key function raised %s", self.module, self.qualname,
                    type(exc).__name__)
        return True

    def unsupported(self, exc: Exception) -> None:
        if not self.warned:
            self.warned = True
            log.warning("cachekit: %s.%s runs uncached: %s", self.module, self.qualname, exc)

    def obj_key(self, args: tuple, kwargs: dict) -> Any:
        """Dict key of a call, equal for the calls whose reference key is equal
        (its normaliser's: a UUID and its str, an Enum and its value, ...): a
        single simple scalar is its own key, several form the args tuple,
        anything else (including bool and float, which compare equal to ints)
        the packed normalised arguments behind a private marker. An int outside
        [-2^63, 2^64-1] is refused (UnsupportedArgument: the call runs uncached),
        as the reference's key (MessagePack) refuses it."""
        if self.key_fn is not None:
            return (_PACKED, "k", self.custom_key(args, kwargs))
        if not kwargs and args:
            if not _SIMPLE.issuperset(map(type, args)):
                # A UUID, Enum, Decimal, Path, aware datetime or a subclass of a simple
                # type keys as what the reference's normaliser makes of it.
                _ndarray.begin_key()
                norm = tuple(_codec.normalize(a) for a in args)
                if not _SIMPLE.issuperset(map(type, norm)):
                    return (_PACKED, _codec.pack_auto_args(args, kwargs))
                args = norm
            for a in args:
                if type(a) is int and not (_codec.INT_MIN <= a <= _codec.INT_MAX):
                    raise _codec.IntOutOfRange(f"integer {a} is outside [-2^63, 2^64-1]")
            return args[0] if len(args) == 1 else args
        return (_PACKED, _codec.pack_auto_args(args, kwargs))
