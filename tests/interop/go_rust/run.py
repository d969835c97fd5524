#!/usr/bin/env python3
"""Go <-> Rust interop (meson suite `interop-go-rust`, issue 16).

Go: tests/interop/go_rust/peer (cachekit.Wrap1 / Wrap3). Rust: tests/interop/rust's
program, built by tests/interop/rust/run --build-only into the `interop_rust` test's
cargo target dir (so cachekit-rs is compiled once per build tree): its `side`
subcommand is cachekit-rs 0.9.0's #[cachekit(interop = ...)] functions
(src/py_side.rs), its `ours-side` subcommand our wrapper's #[cached] ones
(src/ours_side.rs). Both Rust sides take the same job and print the same line, and
so does the Go peer.

Scenarios, each both ways (one side writes, the other must be served the values
without running its function), then the key lists the two writers left compared
byte for byte:
- Redis: Go <-> cachekit-rs and Go <-> our Rust, plain and encrypted (cachekit-rs's
  `secure` with the same master key, tenant "default"; ours with a tenant of its own);
- the file backend (one directory): Go <-> our Rust, plain and encrypted.

Exit 77 (skipped, saying why) when the Go module proxy or crates.io cannot be
reached, when CACHEKIT_INTEROP_RUST=0, or without redis-server.

  run.py --source-root S --build-dir B --out O --target-dir T
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
INTEROP = os.path.dirname(HERE)
sys.path.insert(0, INTEROP)
import pyvenv  # noqa: E402
from python_interop import Runner  # noqa: E402
from python_rust_interop import ONE_CASES  # noqa: E402

MASTER_KEY = "6c" * 32
OURS_TENANT = "go-rust"
FUNCTIONS = (("one", ONE_CASES), ("three", ["defaults", "all"]))  # cachekit-rs's `var` has no Go form


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
        for secure in (False, True):
            ns = "rsvault" if secure else "rsplain"
            options = {"encryption": True, "master_key": MASTER_KEY} if secure else {}
            if secure and tenant:
                options["tenant"] = tenant
            kind = f"encrypted (tenant {tenant or 'default'})" if secure else "plain"
            for function, cases in FUNCTIONS:
                job = {"backend": backend, "namespace": ns, "function": function, "interop": function,
                       "options": options}
                scenario = f"{label}, {kind}, {function}()"
                k_a = self.direction(scenario, a, b, job, cases, uncached=frozenset())
                k_b = self.direction(scenario, b, a, job, cases, uncached=frozenset())
                if secure:  # b's entries are still there: without the key, a is not served them
                    got = self.side(a, {**job, "options": {}, "cases": cases})
                    self.check(scenario, all("error" in g or g["ran"] for g in got),
                               f"{a} without the master key is not served {b}'s encrypted entries", got)
                self.check(scenario, k_a == k_b and len(k_a) == len(cases),
                           f"entry key lists equal byte for byte ({len(k_a)} keys)",
                           {f"only_{a}": [k for k in k_a if k not in k_b], f"only_{b}": [k for k in k_b if k not in k_a]})

    def scenarios(self, file_dir: str) -> None:
        redis = {"redis": self.url}
        self.pair("redis: go <-> cachekit-rs", "go", "rs", redis, None)
        self.pair("redis: go <-> our rust", "go", "ours-rs", redis, OURS_TENANT)
        self.redis, server = DirStore(file_dir), self.redis
        try:
            self.pair("file: go <-> our rust", "go", "ours-rs", {"file": file_dir}, OURS_TENANT)
        finally:
            self.redis = server


def go_binary() -> str:
    go = shutil.which("go") or ("/usr/local/go/bin/go" if os.path.exists("/usr/local/go/bin/go") else "")
    if not go:
        pyvenv.fail("the Go toolchain is missing (not on PATH, not at /usr/local/go/bin/go)")
    return go


def build_peer(out: str, env: dict) -> str:
    go, peer_dir = go_binary(), os.path.join(HERE, "peer")
    r = subprocess.run([go, "mod", "download"], cwd=peer_dir, env=env, capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        sys.stdout.write(r.stdout + r.stderr)
        if re.search(r"SECURITY ERROR|checksum mismatch|verifying", r.stdout + r.stderr, re.I):
            pyvenv.fail("a Go module does not match go.sum")
        pyvenv.skip("the Go module proxy cannot be reached for the peer's pinned modules")
    peer = os.path.join(out, "go-rust-peer")
    r = subprocess.run([go, "build", "-o", peer, "."], cwd=peer_dir, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        pyvenv.fail(f"could not build the Go peer:\n{r.stdout}{r.stderr}")
    return peer


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
    r = subprocess.run(["bash", os.path.join(INTEROP, "rust", "run"), "--build-only", "--pc-dir", pc_dir,
                        "--lib-dir", lib_dir, "--target-dir", os.path.abspath(a.target_dir)],
                       stdout=subprocess.PIPE, text=True)
    if r.returncode != 0:  # 77: skipped (CACHEKIT_INTEROP_RUST=0, no crates.io); its stderr says why
        return r.returncode
    rust = r.stdout.strip().splitlines()[-1]
    env = pyvenv.clean_env(LD_LIBRARY_PATH=lib_dir, PKG_CONFIG_PATH=pc_dir, CGO_ENABLED="1", GOFLAGS="-mod=readonly")
    os.makedirs(out, exist_ok=True)
    peer = build_peer(out, env)

    sys.path.insert(0, os.path.join(a.source_root, "wrappers", "python", "tests"))
    from conftest import RedisServer  # the python suite's redis-server starter (free loopback port)

    with tempfile.TemporaryDirectory(prefix="cachekit-go-rust-") as tmp:
        server = RedisServer(tmp)
        runner = GoRustRunner({"go": [peer], "rs": [rust, "side"], "ours-rs": [rust, "ours-side"]}, env,
                              server.port, tmp)
        try:
            runner.scenarios(os.path.join(tmp, "file-backend"))
        finally:
            runner.redis.close()
            server.stop()
    print(f"interop go <-> rust: {runner.passed} checks passed, {len(runner.failures)} failed")
    for f in runner.failures:
        print("  FAILED:", f)
    return 1 if runner.failures else 0


if __name__ == "__main__":
    sys.exit(main())
