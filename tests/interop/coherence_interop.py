#!/usr/bin/env python3
"""Live L1 coherence across processes and SDKs (issue 17; meson suite `interop`).

One redis-server on a free loopback port. Three long-lived processes share it, each
with an L1 in front of it: A and B are our Python wrapper on the C library with
`?l1_coherence=auto` (tracking), C is the reference SDK (cachekit==0.24.1 from PyPI,
requirements-reference.txt) with its invalidation listener on
(CACHEKIT_INVALIDATION_LISTENER_ENABLED). Checks: A's next read returns the new value
after B's write and after C's write and invalidation; C's L1 drops its copy after
A's invalidation and write (our announcements on cachekit-py's channel). Reads poll
for a bounded time (the message travels). Prints `ok ...` / `FAIL ...`; exits 1 on any
FAIL, 77 when PyPI is unreachable.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import pyvenv  # noqa: E402
from python_interop import build_ours  # noqa: E402
from resp import Redis  # noqa: E402

SIDE = os.path.join(HERE, "python", "coherence_side.py")
PATIENCE = 10.0


class Proc:
    def __init__(self, name: str, python: str, env: dict, cwd: str) -> None:
        self.name = name
        self.p = subprocess.Popen([python, SIDE, name], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, env=env, cwd=cwd)

    def ask(self, line: str) -> dict:
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()
        out = self.p.stdout.readline()
        if not out:
            raise RuntimeError(f"{self.name} died:\n{self.p.stderr.read()}")
        return json.loads(out)

    def call(self, n: int) -> dict:
        return self.ask(f"call {n}")

    def close(self) -> None:
        self.p.stdin.close()
        self.p.wait(timeout=30)


class Checks:
    def __init__(self) -> None:
        self.failures: list[str] = []
        self.passed = 0

    def check(self, ok: bool, what: str, detail: object = "") -> None:
        if ok:
            self.passed += 1
            print(f"ok coherence: {what}", flush=True)
        else:
            self.failures.append(what)
            print(f"FAIL coherence: {what}: {detail}", flush=True)


def until(read, want) -> dict:
    """Reads until `want(answer)` or PATIENCE passes; returns the last answer."""
    deadline = time.monotonic() + PATIENCE
    while True:
        got = read()
        if want(got) or time.monotonic() > deadline:
            return got
        time.sleep(0.01)


def scenario(a: Proc, b: Proc, c: Proc, checks: Checks) -> None:
    writer = lambda got: got["value"]["writer"]  # noqa: E731
    got = a.call(1)
    checks.check(got["ran"] and writer(got) == "A", "A computes user 1", got)
    got = a.call(1)
    checks.check(not got["ran"] and writer(got) == "A", "A's second read is served from cache", got)

    # B (ours, another process) writes: invalidate, then compute its own value.
    b.ask("invalidate 1")
    got = b.call(1)
    checks.check(writer(got) == "B", "B wrote user 1", got)
    got = until(lambda: a.call(1), lambda g: writer(g) == "B")
    checks.check(writer(got) == "B", "A's next read returns B's write (tracking)", got)

    # C (the reference SDK) writes.
    c.ask("invalidate 1")
    got = c.call(1)
    checks.check(writer(got) == "C-ref" and got["ran"], "C (cachekit-py) wrote user 1", got)
    got = until(lambda: a.call(1), lambda g: writer(g) == "C-ref")
    checks.check(writer(got) == "C-ref" and not got["ran"], "A's next read returns C's write (tracking)", got)

    # C invalidates: A's copy goes, A computes again.
    got = c.call(1)
    checks.check(not got["ran"], "C's second read is served from cache", got)
    c.ask("invalidate 1")
    got = until(lambda: a.call(1), lambda g: g["ran"])
    checks.check(got["ran"] and writer(got) == "A", "A's next read after C's invalidation recomputes", got)

    # A writes (invalidate + compute): C's L1 drops its copy through our announcement.
    got = c.call(2)
    got = c.call(2)
    checks.check(not got["ran"] and writer(got) == "C-ref", "C holds user 2", got)
    a.ask("invalidate 2")
    got = a.call(2)
    checks.check(writer(got) == "A" and got["ran"], "A wrote user 2", got)
    got = until(lambda: c.call(2), lambda g: writer(g) == "A")
    checks.check(writer(got) == "A" and not got["ran"], "C's next read returns A's write (cachekit-py's channel)", got)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--source-root", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    build_dir, source_root, work = (os.path.abspath(p) for p in (a.build_dir, a.source_root, a.work))
    if not shutil.which("redis-server"):
        pyvenv.fail("redis-server is not installed (Debian: redis-server)")
    ref_python = pyvenv.ensure(os.path.join(work, "venv-reference"), os.path.join(HERE, "requirements-reference.txt"))
    ours_env = build_ours(build_dir, source_root, work)
    from conftest import RedisServer  # the python suite's redis-server starter (free loopback port)

    checks = Checks()
    with tempfile.TemporaryDirectory(prefix="cachekit-coherence-") as tmp:
        server = RedisServer(tmp)
        url = f"redis://127.0.0.1:{server.port}/0"
        procs = []
        try:
            Redis(server.port)("FLUSHALL")
            ref_env = pyvenv.clean_env(CACHEKIT_INVALIDATION_LISTENER_ENABLED="true", CACHEKIT_REDIS_URL=url,
                                       HOME=tmp)
            ours = dict(ours_env, HOME=tmp, CACHEKIT_REDIS_URL=url + "?l1_coherence=auto")
            pa = Proc("A", "/usr/bin/python3", ours, tmp)
            pb = Proc("B", "/usr/bin/python3", ours, tmp)
            pc = Proc("C-ref", ref_python, ref_env, tmp)
            procs = [pa, pb, pc]
            scenario(pa, pb, pc, checks)
        finally:
            for p in procs:
                try:
                    p.close()
                except Exception:  # noqa: BLE001
                    p.p.kill()
            server.stop()
    print(f"coherence interop: {checks.passed} checks passed, {len(checks.failures)} failed")
    return 1 if checks.failures else 0


if __name__ == "__main__":
    sys.exit(main())
