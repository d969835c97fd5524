#!/usr/bin/env python3
"""Go <-> Rust interop (meson suite `interop-go-rust`, issue 16).

Go: tests/interop/go_rust/peer (cachekit.Wrap1 / Wrap3). Rust: tests/interop/rust's
program, built by tests/interop/rust/run --build-only into the `interop_rust` test's
cargo target dir (so cachekit-rs is compiled once per build tree): its `side`
subcommand is cachekit-rs 0.13.1's #[cachekit(interop = ...)] functions
(src/py_side.rs), its `ours-side` subcommand our wrapper's #[cached] ones
(tests/interop/rust_python/src/ours_side.rs, the interop-rust-python suite's side too).
Both Rust sides take the same job and print the same line, and so does the Go peer.

Scenarios, each both ways (one side writes, the other must be served the values
without running its function), then the key lists the two writers left compared
byte for byte:
- Redis: Go <-> cachekit-rs and Go <-> our Rust, plain and encrypted (cachekit-rs's
  `secure` with the same master key, tenant "default"; ours with a tenant of its own);
- the file backend (one directory): Go <-> our Rust, plain and encrypted;
- in each, the namespaced entries (rs_scenarios.run_namespaced_pair): Go's Cache.Get /
  Set behind KeyPrefix "rsapp:" against cachekit-rs's `.namespace("rsapp")` client
  and our Rust Cache behind the same key_prefix.

Exit 77 (skipped, saying why) when the Go module proxy or crates.io cannot be
reached, when CACHEKIT_INTEROP_RUST=0, or without redis-server.

  run.py --source-root S --build-dir B --out O --target-dir T
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
INTEROP = os.path.dirname(HERE)
sys.path.insert(0, INTEROP)
import pyvenv  # noqa: E402
from gopeer import build_peer  # noqa: E402
from python_interop import Runner, run_with_redis  # noqa: E402
from python_rust_interop import build_rust_interop  # noqa: E402
from rs_scenarios import FUNCTIONS, run_namespaced_pair, run_pair  # noqa: E402

MASTER_KEY = "6c" * 32
OURS_TENANT = "go-rust"
GO_FUNCTIONS = [f for f in FUNCTIONS if f[0] != "var"]  # cachekit-rs's `var` has no Go form


class DirStore:
    """What Runner.direction asks of Redis (FLUSHALL, the key list), for a file
    backend directory: emptied between writers, its entry file names listed."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __call__(self, *command: str) -> None:
        assert command == ("FLUSHALL",), command
        shutil.rmtree(self.path, ignore_errors=True)
        os.makedirs(self.path)

    def keys(self) -> list[bytes]:
        return sorted(os.fsencode(os.path.relpath(os.path.join(d, f), self.path))
                      for d, _, files in os.walk(self.path) for f in files)


class GoRustRunner(Runner):
    """Runner whose sides are programs taking the job as their last argument."""

    def __init__(self, commands: dict[str, list[str]], env: dict, port: int, tmp: str) -> None:
        super().__init__({}, "", port, tmp, "")
        self.commands, self.env = commands, env

    def side(self, side: str, job: dict, env: dict | None = None) -> list[dict]:
        r = subprocess.run(self.commands[side] + [json.dumps(job)], capture_output=True, text=True,
                           env=self.env, cwd=self.tmp, timeout=120)
        if r.returncode != 0:
            raise RuntimeError(f"{side} side failed ({job}):\n{r.stdout}\n{r.stderr}")
        return json.loads(r.stdout.strip().splitlines()[-1])["results"]

    def pair(self, label: str, a: str, b: str, backend: dict, tenant: str | None) -> None:
        run_pair(self, label, a, b, backend, MASTER_KEY, tenant=tenant, functions=GO_FUNCTIONS, keyless=True)
        run_namespaced_pair(self, label, a, b, backend, MASTER_KEY, tenant=tenant, keyless=True)

    def scenarios(self, file_dir: str) -> None:
        redis = {"redis": self.url}
        self.pair("redis: go <-> cachekit-rs", "go", "rs", redis, None)
        self.pair("redis: go <-> our rust", "go", "ours-rs", redis, OURS_TENANT)
        self.redis, server = DirStore(file_dir), self.redis
        try:
            self.pair("file: go <-> our rust", "go", "ours-rs", {"file": file_dir}, OURS_TENANT)
        finally:
            self.redis = server


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--source-root", required=True)
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--target-dir", required=True, help="cargo target dir of tests/interop/rust")
    a = ap.parse_args()
    build_dir, out = os.path.abspath(a.build_dir), os.path.abspath(a.out)
    pc_dir, lib_dir = os.path.join(build_dir, "meson-uninstalled"), os.path.join(build_dir, "src")
    if not shutil.which("redis-server"):
        pyvenv.skip("redis-server is not installed")
    rust = build_rust_interop(build_dir, a.target_dir)
    env = pyvenv.clean_env(LD_LIBRARY_PATH=lib_dir, PKG_CONFIG_PATH=pc_dir, CGO_ENABLED="1",
                           GOFLAGS="-mod=readonly -tags=cachekit_system",  # the tree's library, not the bundled core
                           CGO_LDFLAGS=f"-L{lib_dir} -O2 -g")  # see go/run.py: the build cache ignores pkg-config
    os.makedirs(out, exist_ok=True)
    peer = build_peer(os.path.join(HERE, "peer"), os.path.join(out, "go-rust-peer"), env)

    sys.path.insert(0, os.path.join(a.source_root, "wrappers", "python", "tests"))  # conftest's RedisServer
    commands = {"go": [peer], "rs": [rust, "side"], "ours-rs": [rust, "ours-side"]}
    return run_with_redis("interop go <-> rust", "cachekit-go-rust-",
                          lambda port, tmp: GoRustRunner(commands, env, port, tmp),
                          lambda runner, tmp: runner.scenarios(os.path.join(tmp, "file-backend")))


if __name__ == "__main__":
    sys.exit(main())
