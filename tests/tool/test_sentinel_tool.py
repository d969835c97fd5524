#!/usr/bin/env python3
"""Drives `cachekit set|get|inspect|del KEY --backend redis-sentinel://...` against one
private redis-server primary and one sentinel monitoring it as "m" (quorum 1), started
with the Python suite's helpers (wrappers/python/tests/redis_procs.py); what the tool
wrote is read back on the primary with a plain RESP client. Fails without redis-server.

Usage: test_sentinel_tool.py PATH/TO/cachekit
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

import tally
from tally import check

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "wrappers", "python", "tests"))
from redis_procs import SentinelSet  # noqa: E402

TOOL = sys.argv[1]
tally.verbose = True


def run(*args, stdin=None):
    p = subprocess.run([TOOL, *args], input=stdin, capture_output=True, timeout=30)
    return p.returncode, p.stdout, p.stderr.decode(errors="replace")


if not shutil.which("redis-server"):
    print("FAILED: redis-server is not installed (Debian: redis-server); the Sentinel tool test needs it")
    sys.exit(1)

with tempfile.TemporaryDirectory(prefix="cachekit-sentinel-tool-") as tmp:
    world = SentinelSet(tmp)
    try:
        url = world.url()
        value = "82a36167651ea46e616d65a5616c696365"  # {"name": "alice", "age": 30}
        rc, out, err = run("set", "users:1", "--hex", value, "--backend", url, "--ttl", "120")
        check("set through the sentinel exits 0", rc == 0, err)
        check("the value landed on the primary", world.primary.command("GET", "users:1") == bytes.fromhex(value),
              world.primary.command("GET", "users:1"))
        ttl = world.primary.command("TTL", "users:1")
        check("with its TTL", isinstance(ttl, int) and 0 < ttl <= 120, ttl)

        rc, out, err = run("get", "users:1", "--backend", url)
        check("get through the sentinel prints the hex", rc == 0 and out.decode().strip() == value, (out, err))
        rc, out, err = run("inspect", "users:1", "--backend", url, "--json")
        report = json.loads(out) if rc == 0 else {}
        check("inspect through the sentinel decodes it", report.get("value") == {"name": "alice", "age": 30},
              (out, err))

        world.primary.command("SET", "users:2", bytes.fromhex("c3"))  # true, written on the primary directly
        rc, out, err = run("get", "users:2", "--backend", url, "--raw")
        check("get reads what the primary holds", rc == 0 and out == bytes.fromhex("c3"), (out, err))

        rc, out, err = run("del", "users:1", "--backend", url)
        check("del through the sentinel exits 0", rc == 0, err)
        check("and the key is gone from the primary", world.primary.command("EXISTS", "users:1") == 0)

        rc, out, err = run("get", "users:1", "--backend", world.url().replace("/m", "/nope"))
        check("an unknown master name is a backend error naming it", rc == 1 and "nope" in err, err)
    finally:
        world.stop()

sys.exit(tally.finish())
