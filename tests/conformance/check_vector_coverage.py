#!/usr/bin/python3
"""Guard: every category of every vector file in scope is read by a test.

A category is a place in a vector file that holds a list of vector objects:
a top-level key (``reject_vectors``) or a path through objects
(``keyring.configuration.vectors``). The table below names, per file and
category, the test files that read it. The run fails when

- a file in the vector folder is neither in the table nor out of scope,
- a file holds a category the table does not list (nobody reads it),
- the table lists a category the file no longer holds (a stale row),
- a core test file is missing or does not mention the category (each part
  of its path, as a word).

Wrapper test files (wrappers/...) are written by their owners: one that is
missing, or does not mention the category yet, is accepted with a note when
a core test reads the category too; ``--strict`` makes it a failure.

Exit 0 when nothing failed, 1 otherwise, 77 (SKIP) when the vector folder
is absent: a guard that saw no vectors has proved nothing.
"""

import argparse
import json
import os
import re
import sys

CORE_FRAME = "tests/conformance/test_python_frame.cpp"
CORE_WIRE = "tests/conformance/test_wire_format.cpp"
CORE_INTEROP = "tests/conformance/test_interop_mode.cpp"
CORE_ENCRYPTION = "tests/conformance/test_encryption.cpp"

PY_FRAME = "wrappers/python/tests/test_vectors_frame.py"
PY_WIRE = "wrappers/python/tests/test_vectors_wire.py"
GO_VECTORS = "wrappers/go/vectors_test.go"
RUST_VECTORS = "wrappers/rust/libcachekit/tests/vectors.rs"

# file -> category path -> the test files that read it.
COVERAGE = {
    "cache-keys.json": {
        "vectors": ["tests/conformance/test_cache_keys.cpp"],
        "error_vectors": ["tests/conformance/test_cache_keys.cpp"],
        "serializer_object_vectors": ["tests/conformance/test_cache_keys.cpp"],
    },
    "interop-mode.json": {
        "key_vectors": [CORE_INTEROP],
        "value_vectors": [CORE_INTEROP],
        "error_vectors": [CORE_INTEROP],
        "reader_accept_vectors": [CORE_INTEROP, GO_VECTORS, RUST_VECTORS],
        "reader_reject_vectors": [CORE_INTEROP],
        "aad_vectors": [CORE_INTEROP],
        "encryption_vectors": [CORE_INTEROP],
    },
    "wire-format.json": {
        "vectors": [CORE_WIRE],
        "constructed_vectors": [CORE_WIRE],
        "limits": [CORE_WIRE],
        "reject_vectors": [CORE_WIRE],
        "payload_reject_vectors": [CORE_WIRE],
        "temporal_sentinel_vectors": [CORE_WIRE, PY_WIRE, GO_VECTORS, RUST_VECTORS],
    },
    "decode-bounds.json": {
        "reject_vectors": ["tests/conformance/test_decode_bounds.cpp"],
        "accept_vectors": ["tests/conformance/test_decode_bounds.cpp"],
    },
    "encryption.json": {
        "vectors": [CORE_ENCRYPTION],
        "aad_reject_vectors": [CORE_ENCRYPTION],
        "decrypted_container.vectors": [CORE_ENCRYPTION],
        "keyring.entries": [CORE_ENCRYPTION],
        "keyring.vectors": [CORE_ENCRYPTION],
        "keyring.configuration.vectors": [CORE_ENCRYPTION],
        "default_tenant.vectors": [CORE_ENCRYPTION],
        "master_key_input.accept_vectors": [CORE_ENCRYPTION],
        "master_key_input.reject_vectors": [CORE_ENCRYPTION],
        "master_key_input.raw_reject_vectors": [CORE_ENCRYPTION],
    },
    "python-frame.json": {
        "frame_vectors": [CORE_FRAME, PY_FRAME],
        "error_vectors": [CORE_FRAME, PY_FRAME],
        # An object of reader settings, no list: listed so a test must name it.
        "encrypted_reader": [CORE_FRAME],
        "encrypted_read_vectors": [CORE_FRAME, PY_FRAME],
    },
    "file-backend.json": {
        "vectors": ["tests/l2/test_l2_vectors.cpp"],
    },
    "interop-v2.json": {
        "container_vectors": ["tests/conformance/test_interop_v2.cpp"],
        "constructed_container_vectors": ["tests/conformance/test_interop_v2.cpp"],
        "reject_vectors": ["tests/conformance/test_interop_v2.cpp"],
        "aad_vectors": ["tests/conformance/test_interop_v2.cpp"],
        "encryption_vectors": ["tests/conformance/test_interop_v2.cpp"],
        "crypto_reject_vectors": ["tests/conformance/test_interop_v2.cpp"],
    },
}

OUT_OF_SCOPE = {
    "freshness-headers.json": "the hosted HTTP backend's freshness headers; no HTTP backend is built",
    "path-encoding.json": "the hosted HTTP backend's URL path encoding; no HTTP backend is built",
}


def categories(node, prefix=""):
    """Paths (dotted) of every list of objects in `node`, through objects."""
    found = []
    if isinstance(node, dict):
        for key, value in node.items():
            path = prefix + key
            if isinstance(value, list) and value and all(isinstance(x, dict) for x in value):
                found.append(path)
            elif isinstance(value, dict):
                found.extend(categories(value, path + "."))
    return found


def holds(doc, path):
    node = doc
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


def mentions(text, path):
    return all(re.search(r"\b" + re.escape(part) + r"\b", text) for part in path.split("."))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source-root", required=True)
    ap.add_argument("--vectors-dir", default=os.environ.get("CACHEKIT_VECTORS_DIR")
                    or os.environ.get("CACHEKIT_VECTORS_DIR_DEFAULT"))
    ap.add_argument("--strict", action="store_true",
                    help="a wrapper test file that is missing or silent on a category fails")
    args = ap.parse_args()

    if not args.vectors_dir or not os.path.isdir(args.vectors_dir):
        print("SKIP vector coverage: no vector folder (%s)" % args.vectors_dir)
        return 77

    failures = 0
    notes = 0

    def fail(msg):
        nonlocal failures
        failures += 1
        print("FAIL " + msg)

    for name in sorted(os.listdir(args.vectors_dir)):
        if name.endswith(".json") and name not in COVERAGE and name not in OUT_OF_SCOPE:
            fail("%s: in the vector folder but neither in the coverage table nor out of scope" % name)
    for name, why in sorted(OUT_OF_SCOPE.items()):
        print("out of scope %s: %s" % (name, why))

    for name, table in COVERAGE.items():
        path = os.path.join(args.vectors_dir, name)
        try:
            with open(path, encoding="utf-8") as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            fail("%s: cannot be read: %s" % (name, e))
            continue
        for cat in categories(doc):
            if cat not in table:
                fail("%s:%s: a category no test reads (add its test and a row here)" % (name, cat))
        for cat, tests in table.items():
            if not holds(doc, cat):
                fail("%s:%s: listed here, but the file holds no such category" % (name, cat))
                continue
            core_reads = False
            readers = []
            for test in tests:
                is_wrapper = test.startswith("wrappers/")
                full = os.path.join(args.source_root, test)
                try:
                    with open(full, encoding="utf-8") as f:
                        said = mentions(f.read(), cat)
                    exists = True
                except OSError:
                    exists = said = False
                if said:
                    readers.append(test)
                    core_reads = core_reads or not is_wrapper
                    continue
                problem = "does not exist" if not exists else "does not mention %s" % cat
                if not is_wrapper or args.strict:
                    fail("%s:%s: %s %s" % (name, cat, test, problem))
                else:
                    notes += 1
                    print("note %s:%s: %s %s yet (its owner adds it; accepted while a core test reads it)"
                          % (name, cat, test, problem))
            if not core_reads and not args.strict and any(t.startswith("wrappers/") for t in tests):
                fail("%s:%s: no core test reads it, so a missing wrapper test is not accepted" % (name, cat))
            if readers:
                print("ok %s:%s read by %s" % (name, cat, ", ".join(readers)))

    total = sum(len(t) for t in COVERAGE.values())
    print("vector coverage: %d categories in %d files, %d failed, %d wrapper notes; %d files out of scope"
          % (total, len(COVERAGE), failures, notes, len(OUT_OF_SCOPE)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
