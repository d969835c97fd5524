#!/usr/bin/env python3
"""Meson glue for the Python wrapper tests.

1. compile cachekit._ffi against the build tree, and cachekit._fastpath
   (wrappers/python/build_ext.py);
2. run `/usr/bin/python3 -m pytest -q wrappers/python/tests` with PYTHONPATH =
   the built extensions + wrappers/python and LD_LIBRARY_PATH = <builddir>/src,
   and CACHEKIT_PY_FASTPATH_REQUIRED=1: the C hit path must import (its
   tests fail rather than skip without it);
3. fail when pytest fails or collects no tests (exit 5), and print pytest's
   summary line last.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--source-root", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("pytest_args", nargs="*")
    a = ap.parse_args()
    wrapper = os.path.join(a.source_root, "wrappers", "python")
    python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable

    r = subprocess.run([python, os.path.join(wrapper, "build_ext.py"), "--build-dir", a.build_dir, "--out", a.out,
                        "--quiet"], capture_output=True, text=True)
    if r.returncode != 0:
        sys.stdout.write(r.stdout)
        sys.stderr.write(r.stderr)
        print("FAILED: could not build the extensions (cachekit._ffi, cachekit._fastpath)", flush=True)
        return 1

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([a.out, wrapper] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    libdir = os.path.join(a.build_dir, "src")
    env["LD_LIBRARY_PATH"] = os.pathsep.join([libdir] + ([env["LD_LIBRARY_PATH"]] if env.get("LD_LIBRARY_PATH") else []))
    env.setdefault("CACHEKIT_BUILD_DIR", a.build_dir)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["CACHEKIT_PY_FASTPATH_REQUIRED"] = "1"
    cmd = [python, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", os.path.join(wrapper, "tests")]
    return run_pytest(cmd + a.pytest_args, a.source_root, env)


def run_pytest(cmd: list[str], cwd: str, env: dict[str, str]) -> int:
    """Run a pytest command line, print its output and then its summary line last; a
    run that collected no tests (exit 5) fails. Also the django suite's (tests/django)."""
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    out = proc.stdout + proc.stderr
    sys.stdout.write(out)
    summary = [ln for ln in out.splitlines()
               if re.search(r"\b(passed|failed|errors?|skipped|deselected|no tests ran)\b.* in [\d.]+s", ln)]
    print("\npytest summary:", summary[-1].strip("= ") if summary else "(none)", flush=True)
    if proc.returncode == 5:
        print("FAILED: pytest collected no tests", flush=True)
        return 1
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
