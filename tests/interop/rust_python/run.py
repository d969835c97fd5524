#!/usr/bin/env python3
"""Live interop of our Rust `#[cached]` with our Python wrapper's `@cache` in interop mode
(meson suite `interop-rust-python`, issue 15): through one private redis-server, values the
Rust macro wrote are served to Python without running the function, and the reverse,
plain (sync Rust functions) and encrypted (async Rust functions; the same master key,
tenant `default`), then the Redis key lists the two writers left are compared byte for
byte. The scenarios and the Python side are python_rust_interop.py's (run there against
cachekit-rs); the Rust side is this folder's crate (src/main.rs).

  run.py --build-dir B --source-root S --work W [--target-dir DIR]

--target-dir: the cargo target dir (the `rust` suite's, so the shared dependencies are
compiled once). Exit 77 (skipped) when crates.io cannot be reached for the pinned crates.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import pyvenv  # noqa: E402
from python_interop import build_ours, run_with_redis  # noqa: E402
from python_rust_interop import RustRunner  # noqa: E402

STALE_LOCK = "because --locked was passed"
OFFLINE = re.compile(r"failed to (download|get|query|fetch)|could not resolve|network|timed out|spurious|connect", re.I)


class OursRunner(RustRunner):
    PEER = "libcachekit #[cached]"


def build_rust_side(build_dir: str, target_dir: str) -> str:
    """Builds the crate (debug) against the build tree; returns the program's path."""
    cargo = shutil.which("cargo") or os.path.expanduser("~/.cargo/bin/cargo")
    if not os.path.exists(cargo):
        pyvenv.fail("cargo not found on PATH or in ~/.cargo/bin: install a Rust toolchain (rustup)")
    env = dict(os.environ, CARGO_TARGET_DIR=target_dir, CARGO_TERM_COLOR="never",
               CACHEKIT_SYSTEM="1",  # the build tree's library, not the bundled core
               PKG_CONFIG_PATH=os.path.join(build_dir, "meson-uninstalled"),
               LD_LIBRARY_PATH=os.path.join(build_dir, "src"))
    env["PATH"] = os.path.dirname(cargo) + os.pathsep + env.get("PATH", "")
    fetch = subprocess.run([cargo, "fetch", "--locked"], cwd=HERE, env=env, capture_output=True, text=True)
    if fetch.returncode != 0:
        print(fetch.stderr, file=sys.stderr)
        if STALE_LOCK in fetch.stderr:  # its message says "network" too: ours to fix
            pyvenv.fail("Cargo.lock is out of date with the crates it builds: update it and commit it")
        if OFFLINE.search(fetch.stderr):
            pyvenv.skip("crates.io cannot be reached to fetch the pinned dependencies")
        pyvenv.fail("cargo fetch --locked failed (Cargo.lock out of date?)")
    build = subprocess.run([cargo, "build", "--locked", "-q"], cwd=HERE, env=env)
    if build.returncode != 0:
        pyvenv.fail("the Rust side does not build")
    return os.path.join(target_dir, "debug", "libcachekit-interop-rust-python")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--source-root", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--target-dir")
    a = ap.parse_args()
    a.build_dir, a.source_root, a.work = (os.path.abspath(p) for p in (a.build_dir, a.source_root, a.work))
    if not shutil.which("redis-server"):
        pyvenv.fail("redis-server is not installed (Debian: redis-server)")
    target_dir = os.path.abspath(a.target_dir or os.path.join(a.work, "cargo-target"))
    rs_binary = build_rust_side(a.build_dir, target_dir)
    ours_env = build_ours(a.build_dir, a.source_root, a.work)
    lib_dir = os.path.join(a.build_dir, "src")
    return run_with_redis("interop python <-> rust #[cached]", "cachekit-rust-python-",
                          lambda port, tmp: OursRunner(rs_binary, lib_dir, ours_env, "", port, tmp, ""),
                          lambda runner, tmp: runner.scenarios())


if __name__ == "__main__":
    sys.exit(main())
