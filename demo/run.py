#!/usr/bin/env python3
"""The four-language demo: get_user(id) (50 ms, as a database would take)
cached by a C program, a Python script, a Rust binary and a Go binary that
share entries through interop keys (namespace "demo", operation "get_user").

The sides run one after the other over the same L2: the embedded default (the
file backend in a temporary CACHEKIT_FILE_CACHE_DIR), then Redis when REDIS_URL
is set (not with --smoke). Each calls get_user for the same ids twice; the
table shows per language the misses, L2 hits and L1 hits with their median
latencies: the first language pays the 50 ms, the others read its entries
from L2. Then `cachekit inspect` decodes one stored entry, and the entries and
the temporary directory are removed.

  run.py --build-dir B --out O [--target-dir T] [--python-ext E] [--debug] [--smoke]

--smoke (the meson test, suite `demo`): file backend only, and it checks the
sharing: exit 1 when a side missed an entry another wrote; exit 77 when a
side's toolchain is missing (after running the others), saying which and why.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sides import ROOT, c_side, go_side, progress, python_side, rust_side, step  # noqa: E402
from report import SOURCES, check_sharing, print_table  # noqa: E402

IDS = 3


def build_sides(args) -> tuple[list[tuple[str, list[str]]], list[str]]:
    built = {
        "c": step("C program (built with the library: %s/demo/get_user)" % os.path.basename(args.build_dir), c_side, args.build_dir),
        "python": step("Python extension (cffi, %s)" % args.python_ext, python_side, args.build_dir, args.python_ext),
        "rust": step("Rust binary (cargo build%s)" % ("" if args.debug else " --release"), rust_side,
                     args.build_dir, args.target_dir, not args.debug),
        "go": step("Go binary (go build)", go_side, args.build_dir, args.out),
    }
    missing = [lang for lang, cmd in built.items() if cmd is None]
    return [(lang, cmd) for lang, cmd in built.items() if cmd is not None], missing


def side_env(args, backend: dict) -> dict:
    env = dict(os.environ)
    for name in ("REDIS_URL", "CACHEKIT_REDIS_URL", "CACHEKIT_FILE_CACHE_DIR"):
        env.pop(name, None)
    env.update(backend)
    env["LD_LIBRARY_PATH"] = os.path.join(args.build_dir, "src")
    env["PYTHONPATH"] = os.pathsep.join([args.python_ext, os.path.join(ROOT, "wrappers", "python")])
    return env


def run_side(lang: str, cmd: list[str], ids: list[int], env: dict) -> list[tuple[int, str, float]]:
    r = subprocess.run(cmd + [str(i) for i in ids], env=env, capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        raise SystemExit(f"demo: the {lang} side failed ({r.returncode}):\n{r.stdout}{r.stderr}")
    calls = []
    for line in r.stdout.splitlines():
        who, user_id, source, ms = line.split()
        assert who == lang and source in SOURCES, line
        calls.append((int(user_id), source, float(ms)))
    return calls


def codec_key(tool: str, user_id: int) -> str:
    args = bytes([0x91, user_id]) if user_id < 128 else bytes([0x91, 0xcf]) + user_id.to_bytes(8, "big")
    request = {"op": "key.interop", "namespace": "demo", "operation": "get_user", "args": args.hex()}
    reply = subprocess.run([tool, "codec"], input=json.dumps(request) + "\n", capture_output=True,
                           text=True, check=True)
    return json.loads(reply.stdout)["key"]


def run_backend(args, label: str, backend: dict, url: str, sides) -> bool:
    # Fresh ids per run, so entries of an earlier run (a shared Redis) are never hit.
    base = random.randrange(1000, 1 << 40)
    ids = [base + i for i in range(IDS)]
    print(f"\n== {label}: get_user({ids[0]}..{ids[-1]}) twice in each language, one after the other ==")
    env = side_env(args, backend)
    tool = os.path.join(args.build_dir, "tools", "cachekit")
    keys = [codec_key(tool, i) for i in ids]
    try:
        results = [(lang, run_side(lang, cmd, ids, env)) for lang, cmd in sides]
        print_table(results)
        print(f"\n== cachekit inspect {keys[0]} --backend {url} ==", flush=True)
        subprocess.run([tool, "inspect", keys[0], "--backend", url], check=True)
        return check_sharing(results, len(ids))
    finally:
        if url.startswith("redis"):  # the file directory goes as a whole
            for key in keys:
                subprocess.run([tool, "del", key, "--backend", url], capture_output=True)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build-dir", required=True)
    p.add_argument("--out", required=True, help="where the Go binary (and by default the rest) goes")
    p.add_argument("--target-dir", help="cargo target dir (default OUT/cargo-target)")
    p.add_argument("--python-ext", help="where the cffi extension is built (default OUT/python)")
    p.add_argument("--debug", action="store_true", help="cargo's debug profile (the rust suite's)")
    p.add_argument("--smoke", action="store_true", help="file backend only; exit 1 unless the sides share")
    args = p.parse_args()
    args.build_dir, args.out = os.path.abspath(args.build_dir), os.path.abspath(args.out)
    args.target_dir = os.path.abspath(args.target_dir or os.path.join(args.out, "cargo-target"))
    args.python_ext = os.path.abspath(args.python_ext or os.path.join(args.out, "python"))
    os.makedirs(args.out, exist_ok=True)

    start = time.monotonic()
    sides, missing = build_sides(args)
    if missing:
        progress(f"running without {', '.join(missing)} (see SKIPPED above)")
    ok = True
    file_dir = tempfile.mkdtemp(prefix="cachekit-demo-")
    try:
        ok &= run_backend(args, f"embedded default L2: file backend in {file_dir}",
                          {"CACHEKIT_FILE_CACHE_DIR": file_dir}, "file://" + file_dir, sides)
    finally:
        shutil.rmtree(file_dir, ignore_errors=True)
    redis_url = os.environ.get("REDIS_URL")
    if redis_url and not args.smoke:
        ok &= run_backend(args, f"Redis at {redis_url}", {"REDIS_URL": redis_url}, redis_url, sides)
    elif not args.smoke:
        print("\n(set REDIS_URL=redis://host:port to run the same over Redis too)")
    progress(f"four-language demo: {'ok' if ok else 'FAILED'} in {time.monotonic() - start:.1f} s"
             f" (the temporary directory and the demo's entries are removed)")
    if not ok:
        return 1
    if missing and args.smoke:
        print(f"demo: SKIPPED: {', '.join(missing)} could not be built here (reasons above); "
              f"the other languages shared their entries")
        return 77
    return 0


if __name__ == "__main__":
    sys.exit(main())
