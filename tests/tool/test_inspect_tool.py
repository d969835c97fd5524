#!/usr/bin/env python3
"""Drives `cachekit inspect` (and the tool's top-level usage/version).

Usage: test_inspect_tool.py PATH/TO/cachekit

Values are built here (CK frames, envelopes, interop/v2 containers,
MessagePack, ciphertext made with `cachekit codec`), then inspected with
--hex, --file and stdin, in readable and --json form, with and without keys;
exit codes are checked. Stdlib + msgpack only.
"""

import hashlib
import json
import os
import re
import struct
import subprocess
import sys
import tempfile

import msgpack
from tally import check, finish

TOOL = sys.argv[1]

MASTER = "61" * 32
OLD_MASTER = "62" * 32
TENANT = "cross-sdk-test"
CACHE_KEY = "users:get_user:abc"
# A nonce starting with the reserved MessagePack byte 0xc1 keeps ciphertext
# from ever parsing as a MessagePack document.
NONCE = "c10102030405060708090a0b"
KAT_FRAME = ("434b030000004d7b2273223a202264656661756c74222c20226d223a207b22666f726d6174223a2"
             "0226d73677061636b222c2022636f6d70726573736564223a2066616c73657d2c202276223a2022"
             "322e30227d68656c6c6f2c2063616368656b697421")


def pack(obj):
    return msgpack.packb(obj, use_bin_type=True)


def clean_env(extra=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("CACHEKIT_")}
    env.update(extra or {})
    return env


def tool(*args, stdin=b"", env=None):
    proc = subprocess.run([TOOL, *args], input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          env=env if env is not None else clean_env(), timeout=30)
    return proc.returncode, proc.stdout.decode(errors="replace"), proc.stderr.decode(errors="replace")


def codec(*requests):
    data = "".join(json.dumps(r) + "\n" for r in requests).encode()
    proc = subprocess.run([TOOL, "codec"], input=data, stdout=subprocess.PIPE, timeout=30)
    out = [json.loads(l) for l in proc.stdout.decode().splitlines()]
    assert len(out) == len(requests), out
    return out


def frame(metadata, payload, serializer="default"):
    header = json.dumps({"s": serializer, "m": metadata, "v": "2.0"}).encode()
    return b"CK\x03" + struct.pack(">I", len(header)) + header + payload


def inspect_json(name, *args, rc=0, **kw):
    """Run inspect --json; check the exit code; return the parsed report (or {})."""
    code, out, err = tool("inspect", "--json", *args, **kw)
    check(f"{name} exit code", code == rc, f"rc={code} (want {rc}) out={out[:300]} err={err[:300]}")
    try:
        report = json.loads(out)
    except ValueError:
        check(f"{name} --json output is JSON", False, out[:300])
        return {}
    check(f"{name} --json output is an object", isinstance(report, dict), out[:300])
    check(f"{name} --json is one line", out.count("\n") == 1, repr(out[:300]))
    return report if isinstance(report, dict) else {}


def expect_report(name, report, **want):
    for key, value in want.items():
        check(f"{name} {key}", report.get(key) == value, f"{key}={report.get(key)!r}, want {value!r}; {report}")


VALUE = {"user": "alice", "tags": ["a", "b"], "n": 42, "blob": b"\x00\xff"}
VALUE_JSON = {"user": "alice", "tags": ["a", "b"], "n": 42, "blob": {"$bytes": "00ff"}}


def test_plain_values():
    mp = pack(VALUE)
    r = inspect_json("msgpack", "--hex", mp.hex())
    expect_report("msgpack", r, kind="msgpack", size=len(mp), checks="pass", value=VALUE_JSON)

    r = inspect_json("msgpack upper-case hex", "--hex", mp.hex().upper())
    expect_report("msgpack upper-case hex", r, kind="msgpack", checks="pass")

    frm = frame({"format": "msgpack", "compressed": False}, mp)
    r = inspect_json("frame", "--hex", frm.hex())
    expect_report("frame", r, kind="ck_frame", size=len(frm), serializer="default", payload="msgpack",
                  checks="pass", value=VALUE_JSON, metadata={"format": "msgpack", "compressed": False})

    # The known-answer frame carries raw text, not MessagePack: the check fails.
    r = inspect_json("KAT frame", "--hex", KAT_FRAME, rc=1)
    expect_report("KAT frame", r, kind="ck_frame", checks="fail", error="TrailingBytes")
    check("KAT frame message", isinstance(r.get("message"), str) and r.get("message"), str(r))

    env = codec({"op": "envelope.wrap", "data": mp.hex(), "format": "msgpack"})[0]["envelope"]
    r = inspect_json("envelope", "--hex", env)
    expect_report("envelope", r, kind="envelope", checks="pass", format="msgpack", original_size=len(mp),
                  value=VALUE_JSON)

    cframe = frame({"format": "msgpack", "compressed": True}, bytes.fromhex(env))
    r = inspect_json("compressed frame", "--hex", cframe.hex())
    expect_report("compressed frame", r, kind="ck_frame", payload="envelope", checks="pass", value=VALUE_JSON)

    # One checksum byte changed: the envelope fails its checks.
    bad = msgpack.unpackb(bytes.fromhex(env), raw=False)
    bad[1][0] ^= 1
    r = inspect_json("bad envelope", "--hex", pack(bad).hex(), rc=1)
    expect_report("bad envelope", r, kind="envelope", checks="fail", error="ChecksumMismatch")

    v2 = b"\xc1\x02" + pack([0, len(mp), mp])
    r = inspect_json("interop_v2", "--hex", v2.hex())
    expect_report("interop_v2", r, kind="interop_v2", checks="pass", value=VALUE_JSON)

    rnd = b"\xc1" + hashlib.sha512(b"random").digest()
    r = inspect_json("random bytes", "--hex", rnd.hex())
    expect_report("random bytes", r, kind="ciphertext", size=len(rnd), checks="not_checked")

    r = inspect_json("short garbage", "--hex", "c1c1")
    expect_report("short garbage", r, kind="unknown", size=2, checks="not_checked")

    r = inspect_json("empty", "--hex", "")
    expect_report("empty", r, kind="unknown", size=0, checks="not_checked")

    r = inspect_json("text frame", "--hex", frame({"format": "json"}, b"{}").hex())
    expect_report("text frame", r, kind="ck_frame", checks="not_checked", payload="json")


def test_inputs():
    mp = pack(VALUE)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "value.bin")
        with open(path, "wb") as f:
            f.write(mp)
        r = inspect_json("--file", "--file", path)
        expect_report("--file", r, kind="msgpack", checks="pass", value=VALUE_JSON)
        r = inspect_json("--file=", f"--file={path}")
        expect_report("--file=", r, kind="msgpack", checks="pass")
        code, _, err = tool("inspect", "--file", os.path.join(d, "missing.bin"))
        check("missing file is a usage error", code == 2, f"rc={code} {err[:200]}")
    r = inspect_json("stdin", "-", stdin=mp)
    expect_report("stdin", r, kind="msgpack", checks="pass", value=VALUE_JSON)
    r = inspect_json("--hex=", f"--hex={mp.hex()}")
    expect_report("--hex=", r, kind="msgpack", checks="pass")

    code, out, _ = tool("inspect", "--hex", mp.hex())
    check("readable exit code", code == 0, str(code))
    for label in ("kind:", "size:", "checks:", "value:"):
        check(f"readable has {label}", re.search(rf"^{label}", out, re.M) is not None, out)
    check("readable shows kind", re.search(r"^kind:\s+msgpack$", out, re.M) is not None, out)
    check("readable shows checks", re.search(r"^checks:\s+pass$", out, re.M) is not None, out)
    check("readable pretty-prints the value", '"user": "alice"' in out, out)

    code, out, _ = tool("inspect", "--hex", KAT_FRAME)
    check("readable failing exit code", code == 1, str(code))
    check("readable shows the error", re.search(r"^error:\s+TrailingBytes: ", out, re.M) is not None, out)


def test_encrypted():
    d_cur, d_old = codec({"op": "crypto.derive", "master_key": MASTER, "tenant": TENANT},
                         {"op": "crypto.derive", "master_key": OLD_MASTER, "tenant": TENANT})
    mp = pack(VALUE)
    aad4 = codec({"op": "crypto.aad", "tenant": TENANT, "cache_key": CACHE_KEY, "format": "msgpack",
                  "compressed": False})[0]["aad"]
    enc = codec({"op": "crypto.encrypt", "master_key": MASTER, "tenant": TENANT, "aad": aad4,
                 "plaintext": mp.hex(), "nonce": NONCE},
                {"op": "crypto.encrypt", "master_key": OLD_MASTER, "tenant": TENANT, "aad": aad4,
                 "plaintext": mp.hex(), "nonce": NONCE})
    if enc[0].get("error") == "CryptoUnavailable":
        print("crypto unavailable on this CPU: skipping the encrypted cases")
        return
    ct, ct_old = enc[0]["ciphertext"], enc[1]["ciphertext"]

    # Interop entry: raw nonce || ciphertext || tag.
    r = inspect_json("ciphertext without key", "--hex", ct)
    expect_report("ciphertext without key", r, kind="ciphertext", checks="not_checked")
    r = inspect_json("ciphertext opened", "--hex", ct, "--master-key", MASTER, "--tenant", TENANT,
                     "--cache-key", CACHE_KEY)
    expect_report("ciphertext opened", r, kind="ciphertext", checks="pass", key_index=0, value=VALUE_JSON)
    r = inspect_json("ciphertext wrong cache key", "--hex", ct, "--master-key", MASTER, "--tenant", TENANT,
                     "--cache-key", "other", rc=1)
    expect_report("ciphertext wrong cache key", r, kind="ciphertext", checks="fail", error="AuthenticationFailed")
    r = inspect_json("ciphertext previous key", "--hex", ct_old, "--master-key", MASTER, "--previous-keys",
                     OLD_MASTER, "--tenant", TENANT, "--cache-key", CACHE_KEY)
    expect_report("ciphertext previous key", r, checks="pass", key_index=1, value=VALUE_JSON)
    r = inspect_json("ciphertext key from env", "--hex", ct, "--tenant", TENANT, "--cache-key", CACHE_KEY,
                     env=clean_env({"CACHEKIT_MASTER_KEY": MASTER}))
    expect_report("ciphertext key from env", r, checks="pass", key_index=0)
    r = inspect_json("ciphertext keys from env", "--hex", ct_old, "--tenant", TENANT, "--cache-key", CACHE_KEY,
                     env=clean_env({"CACHEKIT_MASTER_KEY": MASTER, "CACHEKIT_PREVIOUS_MASTER_KEYS": OLD_MASTER}))
    expect_report("ciphertext keys from env", r, checks="pass", key_index=1)

    # Encrypted CK frame: tenant and fingerprint come from the metadata.
    meta = {"format": "msgpack", "compressed": False, "encrypted": True, "tenant_id": TENANT,
            "key_fingerprint": d_cur["fingerprint"]}
    efr = frame(meta, bytes.fromhex(ct)).hex()
    r = inspect_json("encrypted frame without key", "--hex", efr)
    expect_report("encrypted frame without key", r, kind="ck_frame", payload="ciphertext", checks="not_checked")
    r = inspect_json("encrypted frame opened", "--hex", efr, "--master-key", MASTER, "--cache-key", CACHE_KEY)
    expect_report("encrypted frame opened", r, kind="ck_frame", checks="pass", key_index=0, value=VALUE_JSON)
    meta_old = dict(meta, key_fingerprint=d_old["fingerprint"])
    efr_old = frame(meta_old, bytes.fromhex(ct_old)).hex()
    r = inspect_json("encrypted frame previous key", "--hex", efr_old, "--master-key", MASTER,
                     "--previous-keys", OLD_MASTER, "--cache-key", CACHE_KEY)
    expect_report("encrypted frame previous key", r, checks="pass", key_index=1)
    r = inspect_json("encrypted frame unknown fingerprint", "--hex", efr_old, "--master-key", MASTER,
                     "--cache-key", CACHE_KEY, rc=1)
    expect_report("encrypted frame unknown fingerprint", r, checks="fail", error="KeyNotFound")


def test_usage():
    mp = pack(1).hex()
    for name, args in [
        ("no input", ["inspect"]),
        ("two inputs", ["inspect", "--hex", mp, "-"]),
        ("bad hex", ["inspect", "--hex", "abc"]),
        ("non-hex", ["inspect", "--hex", "zz"]),
        ("--hex without value", ["inspect", "--hex"]),
        ("unknown flag", ["inspect", "--hex", mp, "--frobnicate"]),
        ("bad master key", ["inspect", "--hex", mp, "--master-key", "1234"]),
        ("previous keys without master key", ["inspect", "--hex", mp, "--previous-keys", OLD_MASTER]),
        ("unknown command", ["frobnicate"]),
    ]:
        code, out, err = tool(*args)
        check(f"usage: {name} exit code", code == 2, f"rc={code} out={out[:200]} err={err[:200]}")
        check(f"usage: {name} says why on stderr", err.strip() != "" and out == "", f"out={out[:200]} err={err[:200]}")
    code, _, _ = tool("inspect", "--hex", mp, env=clean_env({"CACHEKIT_MASTER_KEY": "nothex"}))
    check("bad master key from env", code == 2, str(code))

    code, out, _ = tool("inspect", "--help")
    check("inspect --help", code == 0 and "--master-key" in out, out[:200])
    code, out, _ = tool("--version")
    check("--version", code == 0 and re.fullmatch(r"cachekit \d+\.\d+\.\d+\S*\n", out) is not None, repr(out))
    for args in (["--help"], []):
        code, out, _ = tool(*args)
        check(f"usage {args}", code == 0 and "codec" in out and "inspect" in out, out[:300])
        check(f"usage {args} mentions get|set|del", all(w in out for w in ("get", "set", "del")), out[:300])
    code, out, err = tool("frobnicate")
    check("unknown command prints usage on stderr", "usage:" in err, err[:200])


def main():
    test_plain_values()
    test_inputs()
    test_encrypted()
    test_usage()
    return finish()


if __name__ == "__main__":
    sys.exit(main())
