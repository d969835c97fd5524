#!/usr/bin/env python3
"""Seed corpora for the fuzz targets from the conformance vectors:
make_seeds.py VECTORS_DIR OUT_DIR writes OUT_DIR/<target>/<n> files."""

import json
import os
import sys

vectors, out = sys.argv[1], sys.argv[2]
seeds = {t: set() for t in ["envelope", "frame", "msgpack", "keys", "crypto", "container_v2", "inspect"]}
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
        if "namespace" in node and "operation" in node and "canonical_args_hex" in node:
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
for target, items in seeds.items():
    folder = os.path.join(out, target)
    os.makedirs(folder, exist_ok=True)
    for i, data in enumerate(sorted(items)):
        with open(os.path.join(folder, f"seed{i:04d}"), "wb") as f:
            f.write(data)
    print(f"{target}: {len(items)} seeds")
