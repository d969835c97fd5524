#!/usr/bin/env python3
"""Seed corpora for the fuzz targets from the conformance vectors (plus
hand-written RESP replies for redis_reply and resp_guard):
make_seeds.py VECTORS_DIR OUT_DIR writes OUT_DIR/<target>/<n> files."""

import json
import os
import sys

vectors, out = sys.argv[1], sys.argv[2]
seeds = {t: set() for t in ["envelope", "frame", "msgpack", "msgpack_scan", "keys", "crypto", "container_v2", "inspect",
                            "file_header", "redis_reply", "resp_guard", "codec_request"]}
ROUTES = {
    "envelope_hex": ["envelope"], "payload_hex": ["envelope", "msgpack"], "expected_payload_hex": ["envelope"],
    "frame_hex": ["frame"], "container_hex": ["container_v2"], "ciphertext_hex": ["crypto"],
    "msgpack_hex": ["msgpack"], "canonical_msgpack_hex": ["msgpack"], "canonical_args_hex": ["msgpack"],
    "value_msgpack_hex": ["msgpack", "container_v2"], "inner_msgpack_hex": ["msgpack"], "input_hex": ["msgpack"],
    "plaintext_hex": ["msgpack"],
}


def add(target, data):
    if len(data) <= 1 << 16:
        seeds[target].add(data)
        seeds["inspect"].add(data)


def bulk(data):
    return b"$%d\r\n%s\r\n" % (len(data), data)


def array(*items):
    return b"*%d\r\n" % len(items) + b"".join(items)


# Replies as Redis sends them to the backend's commands (RESP2).
NIL, NIL_ARRAY, OK = b"$-1\r\n", b"*-1\r\n", b"+OK\r\n"
REDIS_REPLIES = [
    bulk(b"value"), bulk(b""), bulk(b"binary\x00\r\n\xff bytes"), NIL, NIL_ARRAY, OK, b"+PONG\r\n", b"+QUEUED\r\n",
    b"-ERR unknown command 'FOO'\r\n", b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
    b"-NOSCRIPT No matching script. Please use EVAL.\r\n", b"-NOAUTH Authentication required.\r\n",
    b":0\r\n", b":1\r\n", b":-1\r\n", b":-2\r\n", b":-3\r\n", b":9223372036854775807\r\n", b":1500\r\n",
    array(), array(bulk(b"a"), NIL, bulk(b"c")),                          # MGET
    array(NIL, NIL), array(bulk(b"a"), b":1\r\n", b"-ERR inside\r\n"),
    array(bulk(b"0"), array()), array(bulk(b"0"), array(bulk(b"k1"), bulk(b"k2"))),  # SCAN
    array(bulk(b"17"), array(bulk(b"ns:a"))), array(bulk(b"17"), array(b":1\r\n")), array(b":0\r\n", array()),
    array(bulk(b"0")), array(array(array(bulk(b"deep")))), array(array(), NIL_ARRAY, OK),
    OK + NIL + b":2\r\n",                                                  # a pipeline of replies
    b"*3\r\n$1\r\na\r\n",                                                   # cut short
    b"$9223372036854775807\r\n", b"*2147483647\r\n", b"$-2\r\n", b"%1\r\n",  # hostile headers
]
seeds["redis_reply"].update(REDIS_REPLIES)
# resp_guard: a byte choosing the expected shapes and limit, a chunking seed, the bytes.
for reply in REDIS_REPLIES:
    for plan in (b"\x00", b"\x01", b"\x02", b"\x20", b"\x05"):
        seeds["resp_guard"].add(plan + b"\x07" + reply)


def walk(node):
    if isinstance(node, dict):
        for k, v in node.items():
            if isinstance(v, str) and k in ROUTES:
                try:
                    data = bytes.fromhex(v)
                except ValueError:
                    continue
                for t in ROUTES[k]:
                    add(t, data if t != "crypto" else b"\x00" + data)
            elif k == "construction" and isinstance(v, dict) and "repeat_hex" in v:
                add("msgpack", bytes.fromhex(v["repeat_hex"]) * v["count"] + bytes.fromhex(v["suffix_hex"]))
            else:
                walk(v)
        if "file_hex" in node:  # file backend rows: 8 bytes of "now" (ms) + the file
            now = int(node.get("reader_now_unix_seconds", 0)) * 1000
            seeds["file_header"].add(now.to_bytes(8, "little") + bytes.fromhex(node["file_hex"]))
        if "envelope_hex" in node and len(node["envelope_hex"]) < 4096:
            seeds["redis_reply"].add(bulk(bytes.fromhex(node["envelope_hex"])))
            seeds["codec_request"].add(json.dumps({"id": 1, "op": "envelope.unwrap", "envelope": node["envelope_hex"]}).encode())
        if "frame_hex" in node and len(node["frame_hex"]) < 4096:
            seeds["codec_request"].add(json.dumps({"op": "frame.decode", "frame": node["frame_hex"]}).encode())
        if "namespace" in node and "operation" in node and "canonical_args_hex" in node:
            seeds["codec_request"].add(json.dumps({"op": "key.interop", "namespace": node["namespace"],
                                                   "operation": node["operation"], "args": node["canonical_args_hex"]}).encode())
            ns, op = node["namespace"].encode(), node["operation"].encode()
            if len(ns) < 70 and len(op) < 70:
                add("keys", bytes([len(ns), len(op)]) + ns + op + bytes.fromhex(node["canonical_args_hex"]))
    elif isinstance(node, list):
        for v in node:
            walk(v)


if os.path.isdir(vectors):
    for name in sorted(os.listdir(vectors)):
        if name.endswith(".json"):
            with open(os.path.join(vectors, name), encoding="utf-8") as f:
                walk(json.load(f))
for request in [{"op": "crypto.derive", "master_key": "61" * 32, "tenant": "t"},
                {"op": "crypto.aad", "tenant": "t", "cache_key": "k", "format": "msgpack", "compressed": False},
                {"op": "msgpack.canonical", "profile": "args", "data": "82a162c3a161c2"},
                {"op": "key.auto", "namespace": None, "module": "m", "qualname": "f", "args": "929101" + "80",
                 "integrity": True, "serializer": "s"}]:
    seeds["codec_request"].add(json.dumps(request).encode())
seeds["msgpack_scan"].update(seeds["msgpack"])  # the scanners read what the msgpack target reads
for target, items in seeds.items():
    folder = os.path.join(out, target)
    os.makedirs(folder, exist_ok=True)
    for i, data in enumerate(sorted(items)):
        with open(os.path.join(folder, f"seed{i:04d}"), "wb") as f:
            f.write(data)
    print(f"{target}: {len(items)} seeds")
