"""`python3 -m cachekit.harness`: the wrapper harness of ../shared/spec/wrapper-harness.md.

One JSON request per line on stdin, one response per line on stdout (flushed, in order,
"id" echoed). The typed ops go through the package's public interop API, the code a
decorated `@cache(interop=...)` function uses:
- `key.interop.typed`: tagged JSON -> Python values -> `cachekit.generate_interop_key`;
- `value.encode` / `value.decode`: `cachekit.encode_interop_value` / `decode_interop_value`.
`key.interop`, `envelope.unwrap` and `crypto.decrypt` take hex bytes as `cachekit codec`
does and call the core's `_ex` functions. Every tag of the tagged JSON has a Python value
($set -> set, $bytes -> bytes, $datetime -> aware datetime, $uuid -> uuid.UUID); a set, a
UUID or a NaN/infinite float is a key argument but not an interop value, so
`value.encode` answers UnsupportedType for it, as the package's encoder refuses it.
Errors are `{"ok": false, "error": NAME, "message": ...}` with the core's error name.
"""
from __future__ import annotations

import datetime as _dt
import json
import math
import sys
import uuid
from typing import Any, Callable

import cachekit
from cachekit._core import CacheKitError, ffi, lib


class BadRequest(Exception):
    pass


class _Refused(Exception):
    """A value the harness cannot express in JSON (reported as UnsupportedType)."""


def untag(v: Any) -> Any:
    """Tagged JSON (interop-mode.json's `tagged_json`) -> Python values."""
    if isinstance(v, dict):
        if len(v) == 1:
            (k, x), = v.items()
            if k.startswith("$"):
                return _untag_one(k, x)
        return {k: untag(x) for k, x in v.items()}
    if isinstance(v, list):
        return [untag(x) for x in v]
    if isinstance(v, float):  # a bare JSON number with a fraction: not in the convention
        raise BadRequest("bare JSON numbers must be integers; use {\"$float\": ...}")
    return v


def _untag_one(tag: str, x: Any) -> Any:
    try:
        if tag == "$float":
            return float(x)
        if tag == "$int":
            return int(x)
        if tag == "$bytes":
            return bytes.fromhex(x)
        if tag == "$datetime":
            return _dt.datetime.fromisoformat(x.replace("Z", "+00:00"))
        if tag == "$uuid":
            return uuid.UUID(x)
        if tag == "$set":
            return {untag(e) for e in x}
    except (TypeError, ValueError, AttributeError) as exc:
        raise BadRequest(f"bad {tag} value: {exc}") from None
    raise BadRequest(f"unknown tag {tag}")


def tag(v: Any) -> Any:
    """Python values (a decoded interop value) -> tagged JSON."""
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        return {"$float": repr(v) if math.isfinite(v) else str(v)}
    if isinstance(v, (bytes, bytearray)):
        return {"$bytes": bytes(v).hex()}
    if isinstance(v, _dt.datetime):
        return {"$datetime": v.isoformat()}
    if isinstance(v, (list, tuple)):
        return [tag(x) for x in v]
    if isinstance(v, dict):
        if not all(isinstance(k, str) for k in v):
            raise _Refused("a map with non-string keys has no JSON form")
        return {k: tag(x) for k, x in v.items()}
    raise _Refused(f"{type(v).__name__} has no tagged JSON form")


def _hex(req: dict, field: str) -> bytes:
    v = req.get(field)
    if not isinstance(v, str):
        raise BadRequest(f"{field} must be a hex string")
    try:
        return bytes.fromhex(v)
    except ValueError:
        raise BadRequest(f"{field} is not hex") from None


def _str(req: dict, field: str, optional: bool = False) -> str | None:
    v = req.get(field)
    if v is None and optional:
        return None
    if not isinstance(v, str):
        raise BadRequest(f"{field} must be a string")
    return v


def _call(fn: Callable[..., int], *args: Any) -> None:
    """Call a core `_ex` function; raise CacheKitError with its per-call error."""
    err = ffi.new("cachekit_error *")
    err.struct_size = ffi.sizeof("cachekit_error")
    rc = fn(*args, err)
    if rc != lib.CACHEKIT_OK:
        raise CacheKitError(rc, ffi.string(err.message).decode("utf-8", "replace"))


def _buf() -> Any:
    return ffi.gc(ffi.new("cachekit_buf *"), lib.cachekit_buf_dispose)


def _out(buf: Any) -> bytes:
    return ffi.buffer(buf.ptr, buf.size)[:] if buf.size else b""


def op_key_interop_typed(req: dict) -> dict:
    args = req.get("args_json")
    if not isinstance(args, list):
        raise BadRequest("args_json must be a JSON array")
    return {"key": cachekit.generate_interop_key(_str(req, "namespace"), _str(req, "operation"), untag(args))}


def op_value_encode(req: dict) -> dict:
    if "value_json" not in req:
        raise BadRequest("value_json is required")
    return {"data": cachekit.encode_interop_value(untag(req["value_json"])).hex()}


def op_value_decode(req: dict) -> dict:
    value = cachekit.decode_interop_value(_hex(req, "data"))
    try:
        return {"value_json": tag(value)}
    except _Refused as exc:  # e.g. {1: 42} or an application ext: read fine, no JSON form
        raise _Refused(f"decoded, but {exc}") from None


def op_key_interop(req: dict) -> dict:
    args = _hex(req, "args")
    key, canonical = _buf(), _buf()
    _call(lib.cachekit_key_interop_ex, key, canonical, _str(req, "namespace").encode(),
          _str(req, "operation").encode(), args, len(args))
    return {"key": _out(key).decode(), "canonical": _out(canonical).hex()}


def op_envelope_unwrap(req: dict) -> dict:
    env = _hex(req, "envelope")
    data, fmt = _buf(), _buf()
    _call(lib.cachekit_envelope_unwrap_ex, data, fmt, env, len(env))
    return {"data": _out(data).hex(), "format": _out(fmt).decode()}


def op_crypto_decrypt(req: dict) -> dict:
    aad, ct = _hex(req, "aad"), _hex(req, "ciphertext")
    out = _buf()
    if "key" in req:
        key = _hex(req, "key")
        if len(key) != 32:
            raise CacheKitError(lib.CACHEKIT_EINVAL, "key must be 32 bytes")
        _call(lib.cachekit_crypto_decrypt_ex, out, key, aad, len(aad), ct, len(ct))
        return {"plaintext": _out(out).hex(), "key_index": 0}
    previous = req.get("previous_keys") or []
    if not isinstance(previous, list) or not all(isinstance(p, str) for p in previous):
        raise BadRequest("previous_keys must be a list of hex strings")
    ring = ffi.new("cachekit_keyring **")
    _call(lib.cachekit_keyring_new_ex, ring, _str(req, "master_key").encode(), ",".join(previous).encode())
    keyring = ffi.gc(ring[0], lib.cachekit_keyring_free)
    fp = _hex(req, "fingerprint") if req.get("fingerprint") is not None else None
    if fp is not None and len(fp) != 16:
        raise CacheKitError(lib.CACHEKIT_EINVAL, "fingerprint must be 16 bytes")
    index = ffi.new("int *")
    tenant = _str(req, "tenant", optional=True)
    _call(lib.cachekit_keyring_decrypt_ex, keyring, out, index, ffi.NULL if tenant is None else tenant.encode(),
          ffi.NULL if fp is None else fp, aad, len(aad), ct, len(ct))
    return {"plaintext": _out(out).hex(), "key_index": index[0]}


OPS: dict[str, Callable[[dict], dict]] = {
    "key.interop.typed": op_key_interop_typed,
    "value.encode": op_value_encode,
    "value.decode": op_value_decode,
    "key.interop": op_key_interop,
    "envelope.unwrap": op_envelope_unwrap,
    "crypto.decrypt": op_crypto_decrypt,
}


def answer(line: str) -> dict:
    """The response to one request line (never raises)."""
    rid = None
    try:
        req = json.loads(line)
        if not isinstance(req, dict):
            raise BadRequest("a request is a JSON object")
        rid = req.get("id")
        op = OPS.get(req.get("op"))
        if op is None:
            raise BadRequest(f"unknown op {req.get('op')!r}")
        resp = {"ok": True, **op(req)}
    except (BadRequest, json.JSONDecodeError, UnicodeError) as exc:
        resp = {"ok": False, "error": "BadRequest", "message": str(exc)}
    except CacheKitError as exc:  # InteropError included: the core's name for the code
        resp = {"ok": False, "error": exc.name, "message": str(exc)}
    except _Refused as exc:
        resp = {"ok": False, "error": "UnsupportedType", "message": str(exc)}
    except Exception as exc:  # never crash: a failure of the wrapper is still an answer
        resp = {"ok": False, "error": "InvalidArgument", "message": f"{type(exc).__name__}: {exc}"}
    if rid is not None:
        resp = {"id": rid, **resp}
    return resp


def main() -> int:
    for line in sys.stdin:
        if not line.strip():
            continue
        sys.stdout.write(json.dumps(answer(line), ensure_ascii=False) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
