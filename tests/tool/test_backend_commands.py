#!/usr/bin/env python3
"""Drives `cachekit get|set|del KEY --backend URL` and `cachekit inspect KEY
--backend URL` against a file backend in a temporary folder (a second process
sees what the first wrote: that is the point of the file backend).

Usage: test_backend_commands.py PATH/TO/cachekit
"""

import json
import os
import subprocess
import sys
import tempfile

import tally
from tally import check

TOOL = sys.argv[1]
tally.verbose = True


def run(*args, stdin=None):
    p = subprocess.run([TOOL, *args], input=stdin, capture_output=True, timeout=30)
    return p.returncode, p.stdout, p.stderr.decode(errors="replace")


with tempfile.TemporaryDirectory() as tmp:
    url = "file://" + os.path.join(tmp, "cache")
    value = "82a36167651ea46e616d65a5616c696365"  # {"name": "alice", "age": 30}

    rc, out, err = run("get", "users:1", "--backend", url)
    check("get of a missing key exits 1", rc == 1 and "no entry" in err, err)

    rc, out, err = run("set", "users:1", "--hex", value, "--backend", url, "--ttl", "120")
    check("set --hex exits 0", rc == 0, err)
    rc, out, err = run("get", "users:1", "--backend", url)
    check("get prints the hex written", rc == 0 and out.decode().strip() == value, out)
    rc, out, err = run("get", "users:1", "--backend", url, "--raw")
    check("get --raw prints the bytes", rc == 0 and out == bytes.fromhex(value), out)

    rc, out, err = run("inspect", "users:1", "--backend", url, "--json")
    report = json.loads(out) if rc == 0 else {}
    check("inspect --backend decodes the value", report.get("value") == {"name": "alice", "age": 30}, out)
    # The file header keeps whole seconds (rounded down), so the TTL may read up to 1 s under.
    check("inspect --backend reports the TTL", 0 < report.get("ttl_seconds", -5) <= 121, report)

    rc, out, err = run("set", "users:2", "-", "--backend", url, stdin=bytes.fromhex("c0"))
    check("set - reads stdin", rc == 0, err)
    rc, out, err = run("inspect", "users:2", "--backend", url, "--json")
    report = json.loads(out) if rc == 0 else {}
    check("a value without TTL reports -1", report.get("ttl_seconds") == -1, report)

    with open(os.path.join(tmp, "payload.bin"), "wb") as f:
        f.write(b"not msgpack \xc1")
    rc, out, err = run("set", "users:3", "--file", os.path.join(tmp, "payload.bin"), "--backend", url)
    check("set --file exits 0", rc == 0, err)
    rc, out, err = run("inspect", "users:3", "--backend", url)
    check("inspect of a non-MessagePack value says what it is", rc in (0, 1) and b"kind:" in out, out)

    rc, out, err = run("del", "users:1", "--backend", url)
    check("del exits 0", rc == 0, err)
    rc, out, err = run("del", "users:1", "--backend", url)
    check("del of a missing key exits 1", rc == 1, err)

    # Refused at open (the CA file is read first): no connection is tried.
    rc, out, err = run("get", "k", "--backend", "rediss://127.0.0.1:1?ssl_ca_certs=/nonexistent/ca.pem")
    check("rediss:// with a missing CA file is a clear error",
          rc == 1 and "InvalidArgument" in err and "/nonexistent/ca.pem" in err, err)
    rc, out, err = run("get", "k", "--backend", "redis-sentinel://127.0.0.1:1/m?sentinel_username=u")
    check("redis-sentinel:// reaches the core's parser (a user name without a password refused)",
          rc == 1 and "InvalidArgument" in err and "sentinel_username needs sentinel_password" in err, err)
    rc, out, err = run("get", "k", "--backend", "ftp://x")
    check("an unknown scheme is a clear error", rc == 1 and "InvalidArgument" in err, err)
    rc, out, err = run("set", "k", "--backend", url)
    check("set without a value is a usage error", rc == 2, err)
    rc, out, err = run("get", "--backend", url)
    check("get without a key is a usage error", rc == 2, err)
    rc, out, err = run("inspect", "--backend", url)
    check("inspect --backend without a key is a usage error", rc == 2, err)

sys.exit(tally.finish())
