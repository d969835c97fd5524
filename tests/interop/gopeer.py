"""The Go toolchain and the Go peers of the interop tests (go/run.py, go_rust/run.py)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pyvenv


def go_binary() -> str:
    """`go` on PATH or at /usr/local/go/bin; fails the test without it."""
    go = shutil.which("go") or ("/usr/local/go/bin/go" if os.path.exists("/usr/local/go/bin/go") else "")
    if not go:
        pyvenv.fail("the Go toolchain is missing (not on PATH, not at /usr/local/go/bin/go)")
    return go


def build_peer(peer_dir: str, program: str, env: dict) -> str:
    """Downloads the module in `peer_dir`'s pinned dependencies (go.sum) and builds it to
    `program`. The proxy out of reach: skipped (77); a module not matching go.sum or a
    build error: failed."""
    go = go_binary()
    r = subprocess.run([go, "mod", "download"], cwd=peer_dir, env=env, capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        sys.stdout.write(r.stdout + r.stderr)
        if re.search(r"SECURITY ERROR|checksum mismatch|verifying", r.stdout + r.stderr, re.I):
            pyvenv.fail("a Go module does not match go.sum")
        pyvenv.skip("the Go module proxy cannot be reached for the peer's pinned modules")
    r = subprocess.run([go, "build", "-o", program, "."], cwd=peer_dir, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        pyvenv.fail(f"could not build the Go peer:\n{r.stdout}{r.stderr}")
    return program
