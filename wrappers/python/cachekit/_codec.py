"""Python-side value models: auto-mode argument normalisation, the standard
and auto serializers' values, and interop-mode conversion to MessagePack with the
core's input extensions. The bytes-level work (canonical forms, hashing, keys,
envelopes, frames) is the core's.
"""
from __future__ import annotations

import datetime as _dt
import enum
import inspect
import math
import uuid
from decimal import Decimal
from pathlib import PurePath
from typing import Any

import msgpack

from cachekit import _ndarray
from cachekit._core import InteropError, lib, key_auto, key_interop, msgpack_canonical

__all__ = [
    "UnsupportedArgument", "normalize", "pack_auto_args", "auto_key", "encode_value", "decode_value",
    "encode_auto_value", "decode_auto_value", "AUTO_SERIALIZERS", "encode_value_checked", "encode_auto_value_checked",
    "to_interop", "pack_interop_args", "interop_key", "encode_interop_value", "decode_interop_value",
]

_INT_MIN = INT_MIN = -(1 << 63)  # the ints MessagePack packs (the reference's keys refuse others)
_INT_MAX = INT_MAX = (1 << 64) - 1
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
_EXT_SET = lib.CACHEKIT_MSGPACK_EXT_SET


class UnsupportedArgument(TypeError):
    """An argument the auto-mode key cannot represent: the call runs uncached."""


class IntOutOfRange(UnsupportedArgument, OverflowError):
    """An int MessagePack cannot pack (outside [-2^63, 2^64-1]); an OverflowError too,
    as the reference's key raises it (cache.local lets it through)."""


# ---------------------------------------------------------------------------
# Auto mode (the reference SDK's key_generator normalisation)
# ---------------------------------------------------------------------------

def normalize(v: Any) -> Any:
    """Normalise one argument as cachekit-py's CacheKeyGenerator does."""
    t = type(v)
    if t is str or t is bytes or t is bool or v is None:
        return v
    if t is int:
        if v < _INT_MIN or v > _INT_MAX:
            raise IntOutOfRange(f"integer {v} is outside [-2^63, 2^64-1]")
        return v
    if t is float:
        return 0.0 if v == 0.0 else v  # -0.0 -> 0.0
    if isinstance(v, enum.Enum):
        return normalize(v.value)
    if t is list or t is tuple:
        return [normalize(x) for x in v]
    if t is dict:
        try:
            keys = sorted(v)
        except TypeError as exc:
            raise UnsupportedArgument(f"dict keys cannot be sorted: {exc}") from None
        return {k: normalize(v[k]) for k in keys}
    if isinstance(v, uuid.UUID):
        return str(v)
    if isinstance(v, Decimal):
        return str(v)
    if isinstance(v, PurePath):
        return v.as_posix()
    if isinstance(v, _dt.datetime):
        if v.tzinfo is None or v.tzinfo.utcoffset(v) is None:
            raise UnsupportedArgument("naive datetime arguments are not cacheable (give it a tzinfo)")
        return v.isoformat()
    if isinstance(v, (_dt.date, _dt.time)):
        raise UnsupportedArgument(f"{t.__name__} arguments are not cacheable")
    if isinstance(v, (set, frozenset)):
        raise UnsupportedArgument("set arguments are not cacheable (order is not stable)")
    if isinstance(v, (list, tuple)):
        return [normalize(x) for x in v]
    if isinstance(v, dict):
        return normalize(dict(v))
    if isinstance(v, (int, float, str, bytes)):
        # A subclass of a plain type (an Enum aside, above): the reference packs its key with
        # strict types, which refuse it, so the call runs uncached there; here too.
        raise UnsupportedArgument(f"unsupported argument type {t.__module__}.{t.__qualname__} "
                                  "(a subclass of a builtin type)")
    if _ndarray.is_ndarray(v):
        return _ndarray.normalize_array(v, UnsupportedArgument)
    raise UnsupportedArgument(f"unsupported argument type {t.__module__}.{t.__qualname__}")


def pack_auto_args(args: tuple, kwargs: dict) -> bytes:
    """msgpack([normalised args, kwargs sorted by name]) with `_bypass_cache` dropped."""
    _ndarray.begin_key()
    a = [normalize(x) for x in args]
    k = {name: normalize(kwargs[name]) for name in sorted(kwargs) if name != "_bypass_cache"}
    try:
        return msgpack.packb([a, k], use_bin_type=True)
    except (TypeError, ValueError, OverflowError) as exc:
        raise UnsupportedArgument(str(exc)) from None


def auto_key(namespace: str | None, module: str, qualname: str, args: tuple, kwargs: dict,
             integrity: bool = True, serializer: str = "std") -> str:
    return key_auto(namespace, module, qualname, pack_auto_args(args, kwargs), integrity, serializer)


# ---------------------------------------------------------------------------
# Values: the reference's "default" (StandardSerializer) and "auto"
# (AutoSerializer) payloads, byte for byte. Both pack with strict types, so
# every tuple and every subclass of a builtin reaches the hook: what would come
# back as another type is refused (TypeError, the value runs uncached), never
# quietly stored as its base value. The standard serializer's tuples become
# arrays (it is the language-neutral form, as in the reference).
# ---------------------------------------------------------------------------

# The names of the reference's AutoSerializer (its frames are tagged "auto").
AUTO_SERIALIZERS = frozenset({"auto", "pythonic"})
_TEMPORAL = {_dt.datetime: "__datetime__", _dt.date: "__date__", _dt.time: "__time__"}
_BUILTIN_BASES = (bool, int, float, str, bytes, bytearray, memoryview, list, tuple, dict, set, frozenset)


def _refuse(o: Any, serializer: str) -> TypeError:
    t = type(o)
    name = f"{t.__module__}.{t.__qualname__}"
    base = next((b for b in _BUILTIN_BASES if isinstance(o, b)), None)
    if isinstance(o, enum.Enum):
        back = "its value"
    elif base in (bytearray, memoryview):
        back = "bytes"
    elif base is not None and t is not base:  # a subclass: IntEnum, OrderedDict, namedtuple, ...
        back = base.__name__
    else:
        return TypeError(f"cannot serialize {name} with the {serializer} serializer")
    return TypeError(f"{name} would come back as {back} from the {serializer} serializer: not cached")


def _std_default(o: Any) -> Any:
    t = type(o)
    if t is tuple:
        return list(o)
    marker = _TEMPORAL.get(t)
    if marker is not None:
        return {marker: True, "value": o.isoformat()}
    raise _refuse(o, "standard")


def _auto_default(o: Any) -> Any:
    t = type(o)
    if t is tuple:
        return {"__tuple__": True, "value": list(o)}
    marker = _TEMPORAL.get(t)
    if marker is not None:
        return {marker: True, "value": o.isoformat()}
    if t is uuid.UUID:
        return {"__uuid__": True, "value": str(o)}
    if t is set or t is frozenset:
        return {"__set__": True, "value": list(o), "frozen": t is frozenset}
    raise _refuse(o, "auto")


def encode_value(v: Any) -> bytes:
    """The standard serializer's MessagePack payload for a value."""
    return encode_value_checked(v)[0]


# What a store proves before it writes: that the payload decodes (a value that
# would not is returned uncached, never stored). A full decode is as costly as
# the pack, and most values cannot fail it, so the encoders below also say
# whether the payload may fail to decode; only then does the caller decode it.
# Packed with strict types, a value whose hook never ran holds only maps,
# arrays, str, bytes, int, float, bool, None and ExtType/Timestamp (each one
# hashable as a map key once decoded) and at most 511 levels (the packer's
# limit, under the unpacker's): it decodes, unless an object hook raises. The
# standard decoder's never does (a marker-shaped map that does not parse
# stays a map); the auto decoder's may, and runs only over a payload with `__`.

def encode_value_checked(v: Any) -> tuple[bytes, bool]:
    """(encode_value(v), whether it may fail to decode): True when the packer
    converted a tuple (a tuple map key comes back as an unhashable array) or a
    temporal value (a marker map revived by the decoder's hook)."""
    converted = False

    def hook(o: Any) -> Any:
        nonlocal converted
        converted = True
        return _std_default(o)

    data = msgpack.packb(v, use_bin_type=True, strict_types=True, default=hook, datetime=False)
    return data, converted


def encode_auto_value(v: Any) -> bytes:
    """The auto serializer's MessagePack payload (tuple, set, frozenset, UUID
    and temporal markers, as the reference's AutoSerializer writes them)."""
    return msgpack.packb(v, use_bin_type=True, strict_types=True, default=_auto_default, datetime=False)


def encode_auto_value_checked(v: Any) -> tuple[bytes, bool]:
    """(encode_auto_value(v), whether it may fail to decode): only a payload
    holding `__` can (every marker key does; a map of the caller's own shaped
    like a marker may not restore); without one the decoder runs no hook."""
    data = encode_auto_value(v)
    return data, b"__" in data


def _fromiso_dt(s: str) -> _dt.datetime:
    if s.endswith("Z"):
        s = s[:-1] + "+00:00"
    return _dt.datetime.fromisoformat(s)


def _fromiso_time(s: str) -> _dt.time:
    if s.endswith("Z"):
        s = s[:-1] + "+00:00"
    return _dt.time.fromisoformat(s)


# The temporal markers both object hooks restore, each with its parser.
_REVIVERS = (("__datetime__", _fromiso_dt), ("__date__", _dt.date.fromisoformat), ("__time__", _fromiso_time))


def _temporal(d: dict, v: Any) -> Any:
    """d's temporal marker's value restored (its parser's error when it does not
    parse), or d itself when no temporal marker is set to exactly True."""
    for marker, parse in _REVIVERS:
        if d.get(marker) is True:
            return parse(v)
    return d


def _revive(d: dict) -> Any:
    if len(d) == 2 and "value" in d:
        v = d["value"]
        if isinstance(v, str):
            try:
                return _temporal(d, v)
            except ValueError:
                return d
    return d


class UnreadableMarker(ValueError):
    """An auto-serializer marker map whose value cannot be restored (a stored value that fails to decode)."""


def _revive_auto(d: dict) -> Any:
    """The reference AutoSerializer's object hook: a marker set to exactly True
    with its `value` restores the type; a marker without a usable value is an
    unreadable entry (a miss)."""
    if "value" not in d:
        for m in ("__datetime__", "__date__", "__time__", "__uuid__", "__tuple__", "__set__"):
            if d.get(m) is True:
                raise UnreadableMarker(f"{m} marker without its value")
        return d
    v = d["value"]
    try:
        t = _temporal(d, v)
        if t is not d:
            return t
        if d.get("__uuid__") is True:
            return uuid.UUID(v)
        if d.get("__tuple__") is True:
            if type(v) is not list:
                raise UnreadableMarker("__tuple__ marker over a non-array")
            return tuple(v)
        if d.get("__set__") is True:
            if type(v) is not list:
                raise UnreadableMarker("__set__ marker over a non-array")
            return frozenset(v) if d.get("frozen") else set(v)
    except (TypeError, ValueError, AttributeError) as exc:
        raise UnreadableMarker(f"a marker's value does not restore: {exc}") from None
    return d


_unpackb = msgpack.unpackb


def _unpack(data: Any, hook: Any) -> Any:
    """msgpack-python's unpackb (`hook` the object hook, or None); its refusals
    (ValueError kinds, a TypeError for a map key Python cannot hash) become the
    package's DecodeError naming the cause, the package's own errors (a hook's)
    pass as they are."""
    try:
        return _unpackb(data, raw=False, strict_map_key=False, object_hook=hook)
    except (TypeError, ValueError) as e:
        from cachekit._core import CacheKitError, DecodeError, lib
        if isinstance(e, CacheKitError):
            raise
        raise DecodeError(lib.CACHEKIT_EDESERIALIZE, f"the value does not decode: {type(e).__name__}: {e}") from e


def decode_value(data: Any, temporal_keys: int = -1) -> Any:
    """Decode a payload, reviving temporal sentinels. The object hook (a Python
    call per map) is used only when a sentinel key occurs: temporal_keys is
    the core's answer (cachekit_lookup.temporal_keys, 1 or 0), or -1 to search
    the bytes here."""
    revive = temporal_keys > 0 or (temporal_keys < 0 and (b"__date" in data or b"__time__" in data))
    return _unpack(data, _revive if revive else None)


def decode_auto_value(data: Any, temporal_keys: int = -1) -> Any:
    """Decode an auto-serializer payload (every marker is a `__...__` key: the
    hook runs only when one may occur)."""
    if type(data) is not bytes:
        data = bytes(data)  # the core's buffer: searched below
    return _unpack(data, _revive_auto if b"__" in data else None)


# ---------------------------------------------------------------------------
# Interop mode
# ---------------------------------------------------------------------------

def _timestamp(v: _dt.datetime) -> msgpack.Timestamp:
    # Exact (msgpack.Timestamp.from_datetime goes through a float and can be
    # off by a microsecond): floor to whole microseconds since the epoch.
    delta = v - _EPOCH
    us = (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds
    sec, rem = divmod(us, 1_000_000)
    return msgpack.Timestamp(sec, rem * 1000)


def to_interop(v: Any) -> Any:
    """Convert an interop ARGUMENT to MessagePack-ready objects using the core's
    input extensions (Timestamp ext -1 for aware datetimes, ext 83 for sets),
    with the spec's Python conveniences the reference applies to arguments
    (Enum -> value, UUID -> str, Decimal -> str(), Path -> POSIX string).
    Rejects what interop cannot carry (InteropError)."""
    t = type(v)
    if v is None or t is bool or t is str or t is bytes or t is float:
        return v
    if t is int or (isinstance(v, int) and not isinstance(v, (bool, enum.Enum))):
        v = int(v)
        if v < _INT_MIN or v > _INT_MAX:
            raise InteropError(lib.CACHEKIT_EUNSUPPORTED, f"integer {v} is outside [-2^63, 2^64-1]")
        return v
    if isinstance(v, enum.Enum):
        return to_interop(v.value)
    if t is list or t is tuple or isinstance(v, (list, tuple)):
        return [to_interop(x) for x in v]
    if isinstance(v, dict):
        return {k: to_interop(x) for k, x in v.items()}
    if isinstance(v, (set, frozenset)):
        inner = [to_interop(x) for x in v]
        return msgpack.ExtType(_EXT_SET, msgpack.packb(inner, use_bin_type=True, datetime=False))
    if isinstance(v, _dt.datetime):
        if v.tzinfo is None or v.tzinfo.utcoffset(v) is None:
            raise InteropError(lib.CACHEKIT_EUNSUPPORTED, "naive datetime (no UTC offset) is not allowed in interop mode")
        return _timestamp(v)
    if isinstance(v, uuid.UUID):
        return str(v).lower()
    if isinstance(v, Decimal):
        return str(v)
    if isinstance(v, PurePath):
        return v.as_posix()
    if isinstance(v, float):
        return float(v)
    if isinstance(v, str):
        return str(v)
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v)
    raise InteropError(lib.CACHEKIT_EUNSUPPORTED, f"unsupported interop type {t.__module__}.{t.__qualname__}")


def _value_refused(v: Any, why: str) -> InteropError:
    t = type(v)
    return InteropError(lib.CACHEKIT_EUNSUPPORTED,
                        f"{t.__module__}.{t.__qualname__} cannot be an interop value: {why}")


# The interop VALUE model is closed and narrower than the arguments': a value is
# read back by every SDK, so only what each of them has is stored (the reference
# cachekit-py 0.24.1's interop._normalize_value, which the TS SDK agrees with on
# NaN/Inf). No set, UUID, plain Enum, Decimal or Path conversions: a set would
# come back as a list, and none of them is refused by the argument rules only.
_VALUE_ONLY_PYTHON = "interop values are None, bool, int, float, str, bytes, list, tuple, dict (str keys) " \
                     "and datetime/date/time (sentinel maps); Python-specific types do not round-trip cross-SDK"


def _interop_value(v: Any) -> Any:
    """A value (value profile) as MessagePack-ready objects, or InteropError."""
    t = type(v)
    if v is None or t is bool or t is str or t is bytes:
        return v
    if isinstance(v, float):
        f = float.__float__(v)  # a subclass (a float Enum mixin) stores its value, as the reference's
        if math.isnan(f) or math.isinf(f):
            raise _value_refused(v, "NaN and Infinity are not allowed in interop mode")
        return f
    if isinstance(v, int):  # int subclasses, IntEnum/IntFlag included: the reference stores the integer
        n = int.__int__(v)
        if n < _INT_MIN or n > _INT_MAX:
            raise _value_refused(v, f"integer {n} is outside [-2^63, 2^64-1]")
        return n
    if isinstance(v, str):  # a (str, Enum) member included: its string, as in the reference
        return str.__str__(v)
    if isinstance(v, (bytes, bytearray)):
        return bytes(v)
    if isinstance(v, _dt.datetime):
        if v.tzinfo is None or v.tzinfo.utcoffset(v) is None:
            raise _value_refused(v, "naive datetime (no UTC offset) is not allowed in interop mode")
        return {"__datetime__": True, "value": v.isoformat()}
    if isinstance(v, _dt.date):
        return {"__date__": True, "value": v.isoformat()}
    if isinstance(v, _dt.time):
        return {"__time__": True, "value": v.isoformat()}
    if isinstance(v, (list, tuple)):
        return [_interop_value(x) for x in v]
    if isinstance(v, dict):
        out = {}
        for k, x in v.items():
            if not isinstance(k, str):
                raise _value_refused(v, f"map keys must be strings, got {type(k).__name__}")
            out[str.__str__(k)] = _interop_value(x)
        return out
    raise _value_refused(v, _VALUE_ONLY_PYTHON)


def bind_flat_args(sig: inspect.Signature, args: tuple, kwargs: dict) -> list:
    """An interop call bound to the signature with defaults: one element per parameter
    (*args -> one list, **kwargs -> one map), as every SDK keys it."""
    bound = sig.bind(*args, **kwargs)
    bound.apply_defaults()
    flat: list = []
    for name, p in sig.parameters.items():
        v = bound.arguments.get(name)
        if p.kind is inspect.Parameter.VAR_POSITIONAL:
            flat.append(list(v or ()))
        elif p.kind is inspect.Parameter.VAR_KEYWORD:
            flat.append(dict(v or {}))
        else:
            flat.append(v)
    return flat


def pack_interop_args(bound: list) -> bytes:
    try:
        return msgpack.packb(to_interop(bound), use_bin_type=True, datetime=False)
    except InteropError:
        raise
    except (TypeError, ValueError, OverflowError, UnicodeError) as exc:
        raise InteropError(lib.CACHEKIT_EUNSUPPORTED, str(exc)) from None


def interop_key(namespace: str, operation: str, bound: list) -> str:
    return key_interop(namespace, operation, pack_interop_args(bound))[0]


def encode_interop_value(v: Any) -> bytes:
    """One plain canonical MessagePack document (value profile)."""
    try:
        raw = msgpack.packb(_interop_value(v), use_bin_type=True, datetime=False)
    except InteropError:
        raise
    except (TypeError, ValueError, OverflowError, UnicodeError) as exc:
        raise InteropError(lib.CACHEKIT_EUNSUPPORTED, str(exc)) from None
    return msgpack_canonical(raw, lib.CACHEKIT_PROFILE_VALUE)


def decode_interop_value(data: bytes) -> Any:
    from cachekit._core import msgpack_check
    msgpack_check(data)
    return decode_value(data)
