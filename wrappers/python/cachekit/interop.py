"""cachekit.interop (the reference's module): interop/v1 keys and values, built by the
core (cachekit_key_interop, cachekit_msgpack_canonical); see docs/python.md "Interop"."""
from __future__ import annotations

import re
from typing import Any

from cachekit import _codec
from cachekit._core import DecodeError, InteropError, key_interop, lib
from cachekit._cores import _refuse_interop_prefix

# The reference's segment rule and reserved namespaces (its CachekitIO server parses "ns:" keys).
SEGMENT_RE = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
RESERVED_NAMESPACES = frozenset({"ns", "nsapi"})

# Bytes that are not one well-formed MessagePack document: the core's decode family.
InteropDecodeError = DecodeError

decode_interop_value = _codec.decode_interop_value
encode_interop_value = _codec.encode_interop_value


def _flat(args: Any) -> list[Any]:
    if not isinstance(args, (list, tuple)):
        raise TypeError(f"args must be a list or tuple, got {type(args).__name__}")
    return list(args)


def canonical_args_bytes(args: list[Any] | tuple[Any, ...]) -> bytes:
    """The canonical MessagePack of the flat argument array (args profile), the core's."""
    return key_interop("x", "x", _codec.pack_interop_args(_flat(args)))[1]


def args_hash(args: list[Any] | tuple[Any, ...]) -> str:
    """BLAKE2b-256 hex of canonical_args_bytes: an interop key's last segment."""
    return key_interop("x", "x", _codec.pack_interop_args(_flat(args)))[0].rsplit(":", 1)[1]


def validate_segment(name: str, segment: object) -> str:
    value = str.__str__(segment) if isinstance(segment, str) else segment
    if not isinstance(value, str) or not SEGMENT_RE.fullmatch(value) or ".." in value:
        raise InteropError(lib.CACHEKIT_ESEGMENT, f"invalid interop {name} {value!r}: must full-string match "
                           "^[a-z0-9][a-z0-9._-]{0,63}$ and not contain '..'")
    if name == "namespace" and value in RESERVED_NAMESPACES:
        raise InteropError(lib.CACHEKIT_ESEGMENT, f"invalid interop namespace {value!r}: reserved")
    return value


def validate_interop_config(operation: object, namespace: object, *, has_custom_key: bool = False) -> tuple[str, str]:
    op = validate_segment("operation", operation)
    if namespace is None:
        raise InteropError(lib.CACHEKIT_ESEGMENT, "interop mode requires an explicit namespace: "
                           '@cache(interop="get_user", namespace="users")')
    ns = validate_segment("namespace", namespace)
    if has_custom_key:
        raise InteropError(lib.CACHEKIT_ESEGMENT, "interop mode and a custom key= function are mutually exclusive")
    return op, ns


def generate_interop_key(namespace: str, operation: str, args: list[Any] | tuple[Any, ...]) -> str:
    """{namespace}:{operation}:{args_hash} for the flat, bound argument list."""
    return _codec.interop_key(namespace, operation, _flat(args))


bind_flat_args = _codec.bind_flat_args


def ensure_interop_backend_compatible(backend: Any) -> None:
    """ConfigurationError for a backend that prefixes keys (interop keys are bare in every SDK)."""
    if backend is not None:
        _refuse_interop_prefix(backend)


__all__ = [
    "InteropDecodeError", "InteropError", "RESERVED_NAMESPACES", "SEGMENT_RE", "args_hash", "bind_flat_args",
    "canonical_args_bytes", "decode_interop_value", "encode_interop_value", "ensure_interop_backend_compatible",
    "generate_interop_key", "validate_interop_config", "validate_segment",
]
