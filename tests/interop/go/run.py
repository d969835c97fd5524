#!/usr/bin/env python3
"""Meson glue for the Go <-> Python interop test (suite 'interop', 'go').

  run.py --source-root S --build-dir B --out O

1. builds the Python wrapper's extensions against the build tree
   (wrappers/python/build_ext.py, into O/pyext);
2. downloads the Go peer's pinned modules (go.sum; the proxy out of reach:
   exit 77, skipped, saying so) and builds it (O/peer);
3. runs `pytest tests/interop/go` with the peer's path in CACHEKIT_GO_PEER,
   failing when pytest fails or collects nothing, and prints its summary last.
A missing go or python dependency fails the suite with a message."""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from gopeer import build_peer  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--source-root", required=True)
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
    libdir = os.path.join(a.build_dir, "src")
    # CGO_LDFLAGS names the library dir too: Go's build cache does not key a cgo package on
    # pkg-config's answer, so a package cached by another build tree would link with its -L.
    # -tags=cachekit_system: this build tree's library, not the module's bundled core.
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", CGO_ENABLED="1",
               GOFLAGS="-mod=readonly -tags=cachekit_system",
               CGO_LDFLAGS=f"-L{libdir} " + os.environ.get("CGO_LDFLAGS", "-O2 -g"),
               PKG_CONFIG_PATH=os.pathsep.join([os.path.join(a.build_dir, "meson-uninstalled")] +
                                               ([os.environ["PKG_CONFIG_PATH"]] if os.environ.get("PKG_CONFIG_PATH") else [])),
               LD_LIBRARY_PATH=os.pathsep.join([libdir] + ([os.environ["LD_LIBRARY_PATH"]] if os.environ.get("LD_LIBRARY_PATH") else [])))

    pyext = os.path.join(a.out, "pyext")
    r = subprocess.run([python, os.path.join(a.source_root, "wrappers", "python", "build_ext.py"),
                        "--build-dir", a.build_dir, "--out", pyext, "--quiet"], capture_output=True, text=True)
    if r.returncode != 0:
        sys.stdout.write(r.stdout + r.stderr)
        print("FAILED: could not build the Python wrapper's extensions", flush=True)
        return 1

    peer = build_peer(os.path.join(HERE, "peer"), os.path.join(a.out, "peer"), env)

    env["PYTHONPATH"] = os.pathsep.join([pyext, os.path.join(a.source_root, "wrappers", "python")])
    env["CACHEKIT_GO_PEER"] = peer
    proc = subprocess.run([python, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", HERE],
                          cwd=a.source_root, env=env, capture_output=True, text=True)
    out = proc.stdout + proc.stderr
    sys.stdout.write(out)
    if proc.returncode == 5:
        print("FAILED: pytest collected no tests", flush=True)
        return 1
    summary = [line for line in out.splitlines() if re.search(r"\d+ (passed|failed)", line)]
    if summary:
        print(summary[-1], flush=True)
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
