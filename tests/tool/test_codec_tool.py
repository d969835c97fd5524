#!/usr/bin/env python3
"""Drives `cachekit codec` (the JSON-lines conformance harness).

Usage: test_codec_tool.py PATH/TO/cachekit

Every op is exercised with successes and failures, plus malformed lines. The
responses are checked field by field, in order, against values computed here
independently (BLAKE2b keys, AAD layout, envelope structure) or pinned
known-answer vectors. Stdlib + msgpack only.
"""

import hashlib
import json
import os
import select
import struct
import subprocess
import sys

import msgpack
from tally import check, finish

TOOL = sys.argv[1]


def pairs(text):
    """Parse JSON keeping key order: objects become lists of (key, value)."""
    return json.loads(text, object_pairs_hook=list)


def b2b(data, size=32):
    return hashlib.blake2b(data, digest_size=size).hexdigest()


def pack(obj):
    return msgpack.packb(obj, use_bin_type=True)


MASTER = "61" * 32
OLD_MASTER = "62" * 32
TENANT = "cross-sdk-test"
KAT_FINGERPRINT = "96179a9bc881aa7ca83f04b78a66afd3"
KAT_AAD = ("030000000e63726f73732d73646b2d746573740000000d746573743a766563746f723a31"
           "000000076d73677061636b0000000546616c7365")
KAT_FRAME = ("434b030000004d7b2273223a202264656661756c74222c20226d223a207b22666f726d6174223a2"
             "0226d73677061636b222c2022636f6d70726573736564223a2066616c73657d2c202276223a2022"
             "322e30227d68656c6c6f2c2063616368656b697421")
NONCE = "000102030405060708090a0b"


def run(lines, timeout=30):
    """Feed raw lines (str or bytes) to one codec process; return (rc, [raw response lines])."""
    data = b"".join((l if isinstance(l, bytes) else l.encode()) + b"\n" for l in lines)
    proc = subprocess.run([TOOL, "codec"], input=data, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=timeout)
    out = proc.stdout.decode()
    responses = out.split("\n")
    if responses and responses[-1] == "":
        responses.pop()
    return proc.returncode, responses, proc.stderr.decode()


def aad_bytes(tenant, cache_key, fmt, compressed, original_type=None):
    parts = [tenant, cache_key, fmt, "True" if compressed else "False"]
    if original_type is not None:
        parts.append(original_type)
    out = b"\x03"
    for p in parts:
        b = p.encode()
        out += struct.pack(">I", len(b)) + b
    return out.hex()


# ---------------------------------------------------------------------------
# Requests: (request as dict or raw line, expectation)
# An expectation is ("ok", [(field, value-or-callable), ...]) or ("err", NAME).
# A callable value is a predicate on the response value.
# ---------------------------------------------------------------------------
CASES = []


def case(request, expect, name=None):
    CASES.append((name or (request.get("op") if isinstance(request, dict) else "raw"), request, expect))


def ok(*fields):
    return ("ok", list(fields))


def err(name):
    return ("err", name)


def any_value(_):
    return True


# key.auto -------------------------------------------------------------------
AUTO_ARGS = pack([[1, "a", 2.5], {"b": 2.0, "a": None}])
AUTO_ARGS_SORTED = pack([[1, "a", 2.5], {"a": None, "b": 2.0}])
digest = b2b(AUTO_ARGS_SORTED)
case({"id": 1, "op": "key.auto", "namespace": "users", "module": "app.svc", "qualname": "Repo.get",
      "args": AUTO_ARGS.hex(), "integrity": True, "serializer": "s"},
     ok(("key", f"ns:users:func:app.svc.Repo.get:args:{digest}:1s")))
case({"id": 2, "op": "key.auto", "namespace": None, "module": "app.svc", "qualname": "Repo.get",
      "args": AUTO_ARGS.hex().upper(), "integrity": False, "serializer": "std"},
     ok(("key", f"func:app.svc.Repo.get:args:{digest}:0s")))
for letter, code in (("a", "a"), ("o", "o"), ("w", "w"), ("l", "l"), ("auto", "a"), ("orjson", "o")):
    case({"id": f"ser-{letter}", "op": "key.auto", "namespace": "n", "module": "m", "qualname": "f",
          "args": AUTO_ARGS.hex(), "integrity": True, "serializer": letter},
         ok(("key", f"ns:n:func:m.f:args:{digest}:1{code}")))
case({"id": 3, "op": "key.auto", "namespace": "n", "module": "m", "qualname": "f",
      "args": AUTO_ARGS.hex(), "integrity": True, "serializer": "cbor"},
     ok(("key", f"ns:n:func:m.f:args:{digest}:1x{b2b(b'cbor', 2)}")))
case({"id": 4, "op": "key.auto", "namespace": "n", "module": "m", "qualname": "f",
      "args": AUTO_ARGS.hex(), "integrity": True, "serializer": "<custom>:X"},
     ok(("key", f"ns:n:func:m.f:args:{digest}:1x{b2b(b'<custom>:X', 2)}")))
case({"id": 5, "op": "key.auto", "namespace": "n", "module": "m", "qualname": "f",
      "args": AUTO_ARGS.hex(), "integrity": True, "serializer": None}, err("InvalidArgument"))
case({"id": 6, "op": "key.auto", "namespace": "n", "module": "m", "qualname": "f",
      "args": AUTO_ARGS.hex(), "integrity": True}, err("InvalidArgument"), "key.auto no serializer")
case({"id": 7, "op": "key.auto", "namespace": "n", "module": "m", "qualname": "f",
      "args": AUTO_ARGS.hex(), "integrity": True, "serializer": 7}, err("InvalidArgument"))
case({"id": 8, "op": "key.auto", "namespace": "n", "module": "m", "qualname": "f",
      "args": AUTO_ARGS.hex(), "integrity": True, "serializer": ""}, err("InvalidArgument"))
case({"id": 9, "op": "key.auto", "namespace": "n", "qualname": "f",
      "args": AUTO_ARGS.hex(), "integrity": True, "serializer": "s"}, err("BadRequest"))
case({"id": 10, "op": "key.auto", "namespace": "n", "module": "m", "qualname": "f",
      "args": AUTO_ARGS.hex(), "integrity": 1, "serializer": "s"}, err("BadRequest"))
case({"id": 11, "op": "key.auto", "namespace": "n", "module": "m", "qualname": "f",
      "args": "9z", "integrity": True, "serializer": "s"}, err("BadRequest"))
case({"id": 12, "op": "key.auto", "namespace": "n", "module": "m", "qualname": "f",
      "args": "929100", "integrity": True, "serializer": "s"}, err("Overclaim"))
case({"id": 13, "op": "key.auto", "namespace": 5, "module": "m", "qualname": "f",
      "args": AUTO_ARGS.hex(), "integrity": True, "serializer": "s"}, err("BadRequest"))

# key.interop ----------------------------------------------------------------
case({"id": 20, "op": "key.interop", "namespace": "users", "operation": "get_user", "args": "912a"},
     ok(("key", "users:get_user:61598716255080080f6456eb065c2e51badfaa4320b0efe97469c29cffee8875"),
        ("canonical", "912a")))
# 0xcd 0x002a is 42 in a non-shortest width; 2.0 collapses to 2 under ARGS.
case({"id": 21, "op": "key.interop", "namespace": "users", "operation": "get_user", "args": "92cd002acb4000000000000000"},
     ok(("key", "users:get_user:" + b2b(bytes.fromhex("922a02"))), ("canonical", "922a02")))
case({"id": 22, "op": "key.interop", "namespace": "Users", "operation": "get", "args": "912a"},
     err("InvalidSegment"))
case({"id": 23, "op": "key.interop", "namespace": "ns", "operation": "get", "args": "912a"},
     err("InvalidSegment"))
case({"id": 24, "op": "key.interop", "namespace": "users", "operation": "get", "args": "91c1"},
     err("DeserializationFailed"))
case({"id": 25, "op": "key.interop", "namespace": "users", "args": "912a"}, err("BadRequest"))

# msgpack.canonical ----------------------------------------------------------
UNSORTED = pack({"b": 1, "a": [2.0, 1.5]})
case({"id": 30, "op": "msgpack.canonical", "profile": "args", "data": UNSORTED.hex()},
     ok(("data", pack({"a": [2, 1.5], "b": 1}).hex())))
case({"id": 31, "op": "msgpack.canonical", "profile": "value", "data": UNSORTED.hex()},
     ok(("data", pack({"a": [2.0, 1.5], "b": 1}).hex())))
case({"id": 32, "op": "msgpack.canonical", "profile": "auto_args", "data": AUTO_ARGS.hex()},
     ok(("data", AUTO_ARGS_SORTED.hex())))
case({"id": 33, "op": "msgpack.canonical", "profile": "args", "data": "cb7ff8000000000000"},
     err("UnsupportedType"))
case({"id": 34, "op": "msgpack.canonical", "profile": "nope", "data": "00"}, err("InvalidArgument"))
case({"id": 35, "op": "msgpack.canonical", "data": "00"}, err("BadRequest"))
case({"id": 36, "op": "msgpack.canonical", "profile": "args", "data": "0"}, err("BadRequest"))

# msgpack.check --------------------------------------------------------------
case({"id": 40, "op": "msgpack.check", "data": UNSORTED.hex()}, ok())
case({"id": 41, "op": "msgpack.check", "data": "0000"}, err("TrailingBytes"))
case({"id": 42, "op": "msgpack.check", "data": "cd00"}, err("Truncated"))
case({"id": 43, "op": "msgpack.check", "data": "92"}, err("Overclaim"))
case({"id": 44, "op": "msgpack.check", "data": "c1"}, err("DeserializationFailed"))
case({"id": 45, "op": "msgpack.check", "data": "91" * 40 + "00", "max_depth": 32}, err("DepthExceeded"))
case({"id": 46, "op": "msgpack.check", "data": "91" * 40 + "00"}, ok())
case({"id": 47, "op": "msgpack.check", "data": "00", "max_depth": 5}, err("InvalidArgument"))
case({"id": 48, "op": "msgpack.check", "data": "00", "max_depth": -1}, err("BadRequest"))
case({"id": 49, "op": "msgpack.check", "data": "00", "max_depth": "32"}, err("BadRequest"))

# envelope.wrap / envelope.unwrap ------------------------------------------------
PAYLOAD = pack({"user": "alice", "scores": list(range(50))})


def is_envelope_of(payload, fmt):
    def pred(hexval):
        env = msgpack.unpackb(bytes.fromhex(hexval), raw=False)
        return (isinstance(env, list) and len(env) == 4 and isinstance(env[0], bytes)
                and isinstance(env[1], list) and len(env[1]) == 8
                and all(isinstance(x, int) and 0 <= x < 256 for x in env[1])
                and env[2] == len(payload) and env[3] == fmt)
    return pred


case({"id": 50, "op": "envelope.wrap", "data": PAYLOAD.hex(), "format": "msgpack"},
     ok(("envelope", is_envelope_of(PAYLOAD, "msgpack"))))
case({"id": 51, "op": "envelope.wrap", "data": "c0", "format": "msgpack"},
     ok(("envelope", "94c40210c09805264b395bccaf644c01a76d73677061636b")))
case({"id": 52, "op": "envelope.unwrap", "envelope": "94c40210c09805264b395bccaf644c01a76d73677061636b"},
     ok(("data", "c0"), ("format", "msgpack")))
# The same envelope with one checksum byte changed.
case({"id": 53, "op": "envelope.unwrap", "envelope": "94c40210c09806264b395bccaf644c01a76d73677061636b"},
     err("ChecksumMismatch"))
case({"id": 54, "op": "envelope.unwrap", "envelope": "00"}, err("DeserializationFailed"))
case({"id": 55, "op": "envelope.unwrap", "data": "00"}, err("BadRequest"))
case({"id": 56, "op": "envelope.wrap", "data": "zz", "format": "msgpack"}, err("BadRequest"))

# frame.encode / frame.decode ------------------------------------------------
case({"id": 60, "op": "frame.decode", "frame": KAT_FRAME},
     ok(("serializer", "default"), ("metadata", [("format", "msgpack"), ("compressed", False)]),
        ("payload", "68656c6c6f2c2063616368656b697421"), ("version", 3)))
case({"id": 61, "op": "frame.encode", "serializer": "default",
      "metadata": {"format": "msgpack", "compressed": False}, "payload": "68656c6c6f2c2063616368656b697421"},
     ok(("frame", KAT_FRAME)))
ORDERED_FRAME = (b"CK\x03" + struct.pack(">I", len(b'{"s": "x", "m": {"z": 1, "a": "\\u00e9"}, "v": "2.0"}'))
                 + b'{"s": "x", "m": {"z": 1, "a": "\\u00e9"}, "v": "2.0"}' + b"\x00").hex()
case({"id": 62, "op": "frame.encode", "serializer": "x", "metadata": {"z": 1, "a": "\u00e9"}, "payload": "00"},
     ok(("frame", ORDERED_FRAME)))
case({"id": 63, "op": "frame.decode", "frame": ORDERED_FRAME},
     ok(("serializer", "x"), ("metadata", [("z", 1), ("a", "\u00e9")]), ("payload", "00"), ("version", 3)))
case({"id": 64, "op": "frame.decode", "frame": "434b02" + KAT_FRAME[6:]}, err("InvalidFrame"))
case({"id": 65, "op": "frame.decode", "frame": "434b03000000"}, err("InvalidFrame"))
case({"id": 66, "op": "frame.encode", "serializer": "default", "metadata": [1], "payload": ""}, err("BadRequest"))
case({"id": 67, "op": "frame.encode", "serializer": "default", "metadata": {"a": 1}}, err("BadRequest"))

# crypto.derive --------------------------------------------------------------
case({"id": 70, "op": "crypto.derive", "master_key": MASTER, "tenant": TENANT},
     ok(("encryption_key", lambda v: len(v) == 64), ("authentication_key", lambda v: len(v) == 64),
        ("cache_keys_key", lambda v: len(v) == 64), ("fingerprint", KAT_FINGERPRINT)))
case({"id": 71, "op": "crypto.derive", "master_key": MASTER.upper(), "tenant": TENANT},
     ok(("encryption_key", any_value), ("authentication_key", any_value), ("cache_keys_key", any_value),
        ("fingerprint", KAT_FINGERPRINT)))
case({"id": 72, "op": "crypto.derive", "master_key": "61" * 31, "tenant": TENANT}, err("InvalidArgument"))
case({"id": 73, "op": "crypto.derive", "master_key": "0x" + "61" * 31, "tenant": TENANT}, err("InvalidArgument"))
case({"id": 74, "op": "crypto.derive", "tenant": TENANT}, err("BadRequest"))

# crypto.aad -----------------------------------------------------------------
case({"id": 80, "op": "crypto.aad", "tenant": TENANT, "cache_key": "test:vector:1", "format": "msgpack",
      "compressed": False}, ok(("aad", KAT_AAD)))
case({"id": 81, "op": "crypto.aad", "tenant": TENANT, "cache_key": "k", "format": "msgpack",
      "compressed": True, "original_type": "dict"},
     ok(("aad", aad_bytes(TENANT, "k", "msgpack", True, "dict"))))
case({"id": 82, "op": "crypto.aad", "cache_key": "k", "format": "msgpack", "compressed": False},
     ok(("aad", aad_bytes("default", "k", "msgpack", False))), "crypto.aad default tenant")
case({"id": 83, "op": "crypto.aad", "tenant": TENANT, "format": "msgpack", "compressed": False}, err("BadRequest"))

# bad lines ------------------------------------------------------------------
case("this is not json", err("BadRequest"), "not JSON")
case("[1, 2, 3]", err("BadRequest"), "JSON array")
case('"just a string"', err("BadRequest"), "JSON string")
case({"id": 90, "op": "no.such.op"}, err("BadRequest"), "unknown op")
case({"id": 91}, err("BadRequest"), "missing op")
case({"id": 92, "op": 5}, err("BadRequest"), "op not a string")
case("[" * 100000, err("BadRequest"), "deep nesting")
# Rejected before parsing, so the id is not echoed.
case('{"id": 93, "op": "msgpack.check", "data": "00", "a": ' + "[" * 65 + "]" * 65 + "}",
     ("err", "BadRequest", "no id"), "nesting 66")
case('{"id": 94, "op": "msgpack.check", "data": "00", "a": ' + "[" * 60 + "]" * 60 + "}", ok(), "nesting 61")
case('{"id": 95, "op": "msgpack.check", "data": "00", "s": "' + "[{" * 5000 + '"}', ok(), "brackets in a string")
case(b'{"id": 96, "op": "msgpack.check", "data": "\xff\xfe"}', err("BadRequest"), "invalid UTF-8")
case('{"id": 97, "op": "msgpack.check", "data": "00"}\r', ok(), "CRLF line")
case('{"id": 98, "op": "msgpack.check", "data": "00",}', err("BadRequest"), "trailing comma")
BIG = pack(b"\x5a" * (3 << 20))
case({"id": 99, "op": "msgpack.check", "data": BIG.hex()}, ok(), "long line")
case("x" * (4 << 20), err("BadRequest"), "long garbage line")
case({"id": {"nested": [1, None]}, "op": "msgpack.check", "data": "00"}, ok(), "structured id")


def request_object(request):
    """The request as a dict when it is one (or a raw line holding a JSON object), else None."""
    if isinstance(request, dict):
        return request
    try:
        obj = json.loads(request)
    except (ValueError, RecursionError):
        return None
    return obj if isinstance(obj, dict) else None


def expect_response(name, raw, request, expect):
    try:
        resp = pairs(raw)
    except ValueError as e:
        check(name, False, f"response is not JSON ({e}): {raw[:200]!r}")
        return
    if not isinstance(resp, list):
        check(name, False, f"response is not an object: {raw[:200]!r}")
        return
    keys = [k for k, _ in resp]
    values = dict(resp)
    prefix = []
    req = request_object(request)
    if isinstance(req, dict) and "id" in req and "no id" not in expect:
        prefix = ["id"]
        check(f"{name} id", json.loads(raw).get("id") == req["id"], f"id {values.get('id')!r} != {req['id']!r}")
    kind, detail = expect[0], expect[1]
    if kind == "ok":
        want_keys = prefix + ["ok"] + [f for f, _ in detail]
        check(f"{name} ok", values.get("ok") is True, raw[:300])
        check(f"{name} fields", keys == want_keys, f"{keys} != {want_keys}")
        for field, want in detail:
            got = values.get(field)
            if callable(want):
                check(f"{name} {field}", got is not None and want(got), f"{field}={got!r}")
            else:
                check(f"{name} {field}", got == want, f"{field}: {got!r} != {want!r}")
    else:
        check(f"{name} fails", values.get("ok") is False, raw[:300])
        check(f"{name} error", values.get("error") == detail, f"error {values.get('error')!r} != {detail!r}: {raw[:300]}")
        check(f"{name} fields", keys == prefix + ["ok", "error", "message"], f"{keys}")
        check(f"{name} message", isinstance(values.get("message"), str), raw[:300])


def line_of(request):
    if isinstance(request, dict):
        return json.dumps(request)
    return request


def test_batch():
    lines = []
    expected = []
    for name, request, expect in CASES:
        lines.append(line_of(request))
        expected.append((name, request, expect))
        # Blank lines are ignored: sprinkle some.
        if len(lines) % 7 == 0:
            lines.append("")
        if len(lines) % 11 == 0:
            lines.append("   \t")
    rc, responses, stderr = run(lines)
    check("batch exit code", rc == 0, f"rc={rc} stderr={stderr[:300]}")
    check("batch one response per request", len(responses) == len(expected),
          f"{len(responses)} responses for {len(expected)} requests")
    for (name, request, expect), raw in zip(expected, responses):
        expect_response(name, raw, request, expect)


def test_crypto():
    """Encrypt/decrypt round trips with fixed nonces, key rotation, fingerprints."""
    derive = [
        {"id": "d-cur", "op": "crypto.derive", "master_key": MASTER, "tenant": TENANT},
        {"id": "d-old", "op": "crypto.derive", "master_key": OLD_MASTER, "tenant": TENANT},
    ]
    rc, responses, _ = run([json.dumps(r) for r in derive])
    d_cur, d_old = (json.loads(r) for r in responses)
    check("derive current ok", d_cur["ok"] and d_cur["fingerprint"] == KAT_FINGERPRINT, str(d_cur))
    check("derive old ok", d_old["ok"] and d_old["fingerprint"] != KAT_FINGERPRINT, str(d_old))
    pt = pack({"hello": "world", "n": [1, 2, 3]}).hex()
    enc = [
        {"id": "e-master", "op": "crypto.encrypt", "master_key": MASTER, "tenant": TENANT, "aad": KAT_AAD,
         "plaintext": pt, "nonce": NONCE},
        {"id": "e-key", "op": "crypto.encrypt", "key": d_cur["encryption_key"], "aad": KAT_AAD,
         "plaintext": pt, "nonce": NONCE.upper()},
        {"id": "e-old", "op": "crypto.encrypt", "master_key": OLD_MASTER, "tenant": TENANT, "aad": KAT_AAD,
         "plaintext": pt},
        {"id": "e-empty", "op": "crypto.encrypt", "master_key": MASTER, "tenant": TENANT, "aad": "",
         "plaintext": "", "nonce": NONCE},
    ]
    rc, responses, _ = run([json.dumps(r) for r in enc])
    e = {json.loads(r)["id"]: json.loads(r) for r in responses}
    if e["e-master"].get("error") == "CryptoUnavailable":
        print("crypto unavailable on this CPU: checking the error name only")
        check("crypto unavailable reported", all(v.get("error") == "CryptoUnavailable" for v in e.values()), str(e))
        return
    ct = e["e-master"].get("ciphertext", "")
    check("encrypt ok", e["e-master"]["ok"] and list(e["e-master"]) == ["id", "ok", "ciphertext"], str(e["e-master"]))
    check("encrypt layout", ct.startswith(NONCE) and len(ct) == 2 * (12 + len(pt) // 2 + 16), ct)
    check("encrypt with derived key = with master key", e["e-key"].get("ciphertext") == ct, str(e["e-key"]))
    check("encrypt random nonce", e["e-old"]["ok"] and len(e["e-old"]["ciphertext"]) == len(ct), str(e["e-old"]))
    check("encrypt empty", e["e-empty"].get("ciphertext", "").startswith(NONCE)
          and len(e["e-empty"]["ciphertext"]) == 2 * 28, str(e["e-empty"]))
    ct_old = e["e-old"]["ciphertext"]
    tampered = ct[:-2] + ("00" if ct[-2:] != "00" else "01")
    fp_old = d_old["fingerprint"]
    dec = [
        ({"op": "crypto.decrypt", "master_key": MASTER, "tenant": TENANT, "aad": KAT_AAD, "ciphertext": ct},
         ok(("plaintext", pt), ("key_index", 0))),
        ({"op": "crypto.decrypt", "key": d_cur["encryption_key"], "aad": KAT_AAD, "ciphertext": ct},
         ok(("plaintext", pt), ("key_index", 0))),
        ({"op": "crypto.decrypt", "master_key": MASTER, "previous_keys": [OLD_MASTER], "tenant": TENANT,
          "aad": KAT_AAD, "ciphertext": ct_old}, ok(("plaintext", pt), ("key_index", 1))),
        ({"op": "crypto.decrypt", "master_key": MASTER, "previous_keys": [OLD_MASTER], "fingerprint": fp_old,
          "tenant": TENANT, "aad": KAT_AAD, "ciphertext": ct_old}, ok(("plaintext", pt), ("key_index", 1))),
        ({"op": "crypto.decrypt", "master_key": MASTER, "previous_keys": [OLD_MASTER],
          "fingerprint": KAT_FINGERPRINT, "tenant": TENANT, "aad": KAT_AAD, "ciphertext": ct},
         ok(("plaintext", pt), ("key_index", 0))),
        ({"op": "crypto.decrypt", "master_key": MASTER, "fingerprint": fp_old, "tenant": TENANT,
          "aad": KAT_AAD, "ciphertext": ct_old}, err("KeyNotFound")),
        ({"op": "crypto.decrypt", "master_key": MASTER, "tenant": TENANT, "aad": KAT_AAD, "ciphertext": ct_old},
         err("AuthenticationFailed")),
        ({"op": "crypto.decrypt", "master_key": MASTER, "tenant": TENANT, "aad": KAT_AAD, "ciphertext": tampered},
         err("AuthenticationFailed")),
        ({"op": "crypto.decrypt", "master_key": MASTER, "tenant": "other", "aad": KAT_AAD, "ciphertext": ct},
         err("AuthenticationFailed")),
        ({"op": "crypto.decrypt", "key": d_cur["encryption_key"], "aad": "00", "ciphertext": ct},
         err("AuthenticationFailed")),
        ({"op": "crypto.decrypt", "key": d_cur["encryption_key"], "aad": KAT_AAD, "ciphertext": ct[:54]},
         err("InvalidCiphertext")),
        ({"op": "crypto.decrypt", "key": "00" * 31, "aad": KAT_AAD, "ciphertext": ct}, err("InvalidArgument")),
        ({"op": "crypto.decrypt", "master_key": MASTER, "fingerprint": "00" * 15, "tenant": TENANT,
          "aad": KAT_AAD, "ciphertext": ct}, err("InvalidArgument")),
        ({"op": "crypto.decrypt", "master_key": MASTER, "previous_keys": [MASTER], "tenant": TENANT,
          "aad": KAT_AAD, "ciphertext": ct}, err("InvalidArgument")),
        ({"op": "crypto.decrypt", "master_key": MASTER, "previous_keys": "nope", "tenant": TENANT,
          "aad": KAT_AAD, "ciphertext": ct}, err("BadRequest")),
        ({"op": "crypto.decrypt", "master_key": MASTER, "key": d_cur["encryption_key"], "tenant": TENANT,
          "aad": KAT_AAD, "ciphertext": ct}, err("BadRequest")),
        ({"op": "crypto.decrypt", "tenant": TENANT, "aad": KAT_AAD, "ciphertext": ct}, err("BadRequest")),
        ({"op": "crypto.decrypt", "master_key": "61" * 33, "tenant": TENANT, "aad": KAT_AAD, "ciphertext": ct},
         err("InvalidArgument")),
        ({"op": "crypto.encrypt", "key": "00" * 33, "aad": "", "plaintext": "00"}, err("InvalidArgument")),
        ({"op": "crypto.encrypt", "master_key": MASTER, "tenant": TENANT, "aad": "", "plaintext": "00",
          "nonce": "00" * 11}, err("InvalidArgument")),
        ({"op": "crypto.encrypt", "master_key": "zz" * 32, "tenant": TENANT, "aad": "", "plaintext": "00"},
         err("InvalidArgument")),
        ({"op": "crypto.encrypt", "master_key": MASTER, "tenant": TENANT, "aad": "", "plaintext": "0g"},
         err("BadRequest")),
        ({"op": "crypto.encrypt", "master_key": MASTER, "tenant": TENANT, "aad": ""}, err("BadRequest")),
    ]
    requests = []
    for i, (req, _) in enumerate(dec):
        req = dict(req)
        req["id"] = 1000 + i
        requests.append(req)
    rc, responses, stderr = run([json.dumps(r) for r in requests])
    check("crypto exit code", rc == 0, stderr)
    check("crypto response count", len(responses) == len(dec), f"{len(responses)} != {len(dec)}")
    for req, (_, expect), raw in zip(requests, dec, responses):
        expect_response(f"{req['op']}#{req['id']}", raw, req, expect)


def test_interactive():
    """Each response is flushed before the next request is read."""
    proc = subprocess.Popen([TOOL, "codec"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        for i in range(3):
            proc.stdin.write((json.dumps({"id": i, "op": "msgpack.check", "data": "00"}) + "\n").encode())
            proc.stdin.flush()
            ready, _, _ = select.select([proc.stdout], [], [], 5)
            check(f"interactive response {i} arrives", bool(ready), "no response within 5 s")
            if not ready:
                return
            line = proc.stdout.readline().decode()
            check(f"interactive response {i}", line == f'{{"id":{i},"ok":true}}\n', repr(line))
        # A last line without a newline is still answered at EOF.
        proc.stdin.write(b'{"id":"last","op":"msgpack.check","data":"00"}')
        proc.stdin.close()
        rest = proc.stdout.read().decode()
        check("last line without newline", rest == '{"id":"last","ok":true}\n', repr(rest))
        check("interactive exit code", proc.wait(timeout=10) == 0, "")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_empty_and_misc():
    rc, responses, _ = run(["", "  ", ""])
    check("only blank lines: no output", rc == 0 and responses == [], repr(responses))
    proc = subprocess.run([TOOL, "codec"], input=b"", stdout=subprocess.PIPE, timeout=10)
    check("empty input", proc.returncode == 0 and proc.stdout == b"", repr(proc.stdout))
    proc = subprocess.run([TOOL, "codec", "extra"], input=b"", stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=10)
    check("codec with an extra argument is a usage error", proc.returncode == 2, str(proc.returncode))
    # Random bytes: every line is answered with BadRequest, and nothing crashes.
    rnd = os.urandom(20000)
    lines = [l for l in rnd.split(b"\n") if l.strip(b" \t\r")]
    rc, responses, _ = run(lines)
    check("random lines exit code", rc == 0, str(rc))
    check("random lines answered", len(responses) == len(lines), f"{len(responses)} != {len(lines)}")
    check("random lines are BadRequest", all(json.loads(r)["error"] == "BadRequest" for r in responses), "")


def main():
    test_batch()
    test_crypto()
    test_interactive()
    test_empty_and_misc()
    return finish()


if __name__ == "__main__":
    sys.exit(main())
