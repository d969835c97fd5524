#!/usr/bin/env python3
"""Live interop of our Python wrapper's interop mode with cachekit-rs 0.9.0's
`#[cachekit(interop = ..., namespace = ...)]` functions (meson suite `interop`).

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
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import pyvenv  # noqa: E402
from python_interop import K1, Runner, build_ours  # noqa: E402

# side.py's single-argument cases inside cachekit-rs's interop model (no Decimal, Enum, date).
ONE_CASES = ["int", "bigint", "negint", "float", "negzero", "str", "bytes", "none", "bool", "list", "tuple", "dict",
             "nested", "datetime", "set", "uuid"]


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
            raise RuntimeError(f"cachekit-rs side failed ({job}):\n{r.stdout}\n{r.stderr}")
        return json.loads(r.stdout.strip().splitlines()[-1])["results"]

    def scenarios(self) -> None:
        for secure in (False, True):
            ns = "rsvault" if secure else "rsplain"
            options = {"ttl": 300, "encryption": True, "master_key": K1} if secure else {"ttl": 300}
            label = "encrypted (secure, same master key, tenant default)" if secure else "plain"
            base = {"backend": {"redis": self.url}, "namespace": ns, "options": options}
            for function, cases in (("one", ONE_CASES), ("three", ["defaults", "all"]), ("var", ["varargs", "empty"])):
                job = {**base, "function": function, "interop": function}
                self.both_ways(f"python <-> {self.PEER}, {label}, {function}()", job, cases, uncached=frozenset())

    def both_ways(self, scenario: str, job: dict, cases: list[str], **kw) -> None:
        k_rs = self.direction(scenario, "rs", "ours", job, cases, **kw)
        k_ours = self.direction(scenario, "ours", "rs", job, cases, **kw)
        self.check(scenario, k_rs == k_ours and len(k_ours) == len(cases),
                   f"Redis key lists equal byte for byte ({len(k_ours)} keys)",
                   {"only_rs": [k for k in k_rs if k not in k_ours], "only_ours": [k for k in k_ours if k not in k_rs]})


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--source-root", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--target-dir", required=True, help="cargo target dir for tests/interop/rust")
    a = ap.parse_args()
    a.build_dir, a.source_root, a.work = (os.path.abspath(p) for p in (a.build_dir, a.source_root, a.work))
    r = subprocess.run(["bash", os.path.join(HERE, "rust", "run"), "--build-only",
                        "--pc-dir", os.path.join(a.build_dir, "meson-uninstalled"),
                        "--lib-dir", os.path.join(a.build_dir, "src"), "--target-dir", os.path.abspath(a.target_dir)],
                       stdout=subprocess.PIPE, text=True)
    if r.returncode != 0:  # 77: skipped (not enabled, no crates.io); its stderr says why
        return r.returncode
    rs_binary = r.stdout.strip().splitlines()[-1]
    ours_env = build_ours(a.build_dir, a.source_root, a.work)
    from conftest import RedisServer  # the python suite's redis-server starter (free loopback port)

    with tempfile.TemporaryDirectory(prefix="cachekit-rs-interop-") as tmp:
        server = RedisServer(tmp)
        runner = RustRunner(rs_binary, os.path.join(a.build_dir, "src"), ours_env, "", server.port, tmp, "")
        try:
            runner.scenarios()
        finally:
            runner.redis.close()
            server.stop()
    print(f"interop python <-> cachekit-rs: {runner.passed} checks passed, {len(runner.failures)} failed")
    for f in runner.failures:
        print("  FAILED:", f)
    return 1 if runner.failures else 0


if __name__ == "__main__":
    sys.exit(main())
