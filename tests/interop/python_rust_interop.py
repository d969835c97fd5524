#!/usr/bin/env python3
"""Live interop of our Python wrapper's interop mode with cachekit-rs 0.13.1's
`#[cachekit(interop = ..., namespace = ...)]` functions, and of its namespaced entries
(`cachekit.CoreCache` under key_prefix "rsapp:") with a cachekit-rs client built with
`.namespace("rsapp")` (meson suite `interop`).

Ours: Debian's python3 with the build tree's wrapper, as python_interop.py runs it.
Theirs: tests/interop/rust's program (`side` subcommand, src/py_side.rs), built by
tests/interop/rust/run --build-only; skipped (77) as that suite is when
CACHEKIT_INTEROP_RUST=0. One redis-server on a free loopback port. Each scenario: one
side writes, the other must be served its values without running the function, both
ways, then the Redis key lists the two writers left are compared byte for byte.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import pyvenv  # noqa: E402
from python_interop import K1, Runner, build_ours, run_with_redis  # noqa: E402
from rs_scenarios import run_namespaced_pair, run_pair  # noqa: E402


class RustRunner(Runner):
    """Runner whose "rs" side is cachekit-rs's program; "ours" stays our Python wrapper.
    rust_python/run.py runs the same scenarios with our Rust #[cached] as the "rs" side."""

    PEER = "cachekit-rs"

    def __init__(self, rs_binary: str, lib_dir: str, *args) -> None:
        super().__init__(*args)
        self.rs_binary, self.rs_env = rs_binary, pyvenv.clean_env(LD_LIBRARY_PATH=lib_dir)

    def side(self, side: str, job: dict, env: dict | None = None) -> list[dict]:
        if side != "rs":
            return super().side(side, job, env)
        r = subprocess.run([self.rs_binary, "side", json.dumps(job)], capture_output=True, text=True,
                           env=self.rs_env, cwd=self.tmp, timeout=120)
        if r.returncode != 0:
            raise RuntimeError(f"{self.PEER} side failed ({job}):\n{r.stdout}\n{r.stderr}")
        return json.loads(r.stdout.strip().splitlines()[-1])["results"]

    def scenarios(self) -> None:
        run_pair(self, f"python <-> {self.PEER}", "rs", "ours", {"redis": self.url}, K1, options={"ttl": 300})
        run_namespaced_pair(self, f"python <-> {self.PEER}", "rs", "ours", {"redis": self.url}, K1)


def build_rust_interop(build_dir: str, target_dir: str) -> str:
    """tests/interop/rust's program (cachekit-rs's `side`, our wrapper's `ours-side`), built
    against the build tree by its run script; exits with the script's code when it cannot
    (77: skipped, CACHEKIT_INTEROP_RUST=0 or no crates.io; its stderr says why)."""
    r = subprocess.run(["bash", os.path.join(HERE, "rust", "run"), "--build-only",
                        "--pc-dir", os.path.join(build_dir, "meson-uninstalled"),
                        "--lib-dir", os.path.join(build_dir, "src"), "--target-dir", os.path.abspath(target_dir)],
                       stdout=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit(r.returncode)
    return r.stdout.strip().splitlines()[-1]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--source-root", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--target-dir", required=True, help="cargo target dir for tests/interop/rust")
    a = ap.parse_args()
    a.build_dir, a.source_root, a.work = (os.path.abspath(p) for p in (a.build_dir, a.source_root, a.work))
    rs_binary = build_rust_interop(a.build_dir, a.target_dir)
    ours_env = build_ours(a.build_dir, a.source_root, a.work)
    lib_dir = os.path.join(a.build_dir, "src")
    return run_with_redis("interop python <-> cachekit-rs", "cachekit-rs-interop-",
                          lambda port, tmp: RustRunner(rs_binary, lib_dir, ours_env, "", port, tmp, ""),
                          lambda runner, tmp: runner.scenarios())


if __name__ == "__main__":
    sys.exit(main())
