#!/usr/bin/env python3
"""Suite python-typing: the Python wrapper's public API under `mypy --strict` and pyright.

A venv under the build directory gets the pinned mypy (requirements-typing.txt;
exit 77 when PyPI is unreachable). mypy then checks, strictly, the public
modules (cachekit/__init__.py and the modules whose names it exports or whose
types a user sees), tests/typing/public_api.py, a program using every public
name (a decorated function keeps its signature and gains cache_info /
cache_clear / invalidate_cache / __wrapped__), and tests/typing/reference_usage.py,
the reference SDK's documented usages (decorated methods, classmethods and
coroutines included) with wrong calls that must stay errors, and
tests/typing/decorator_keywords.py, every keyword of cache(...) and its presets
with wrong ones (a bad type, an unknown name) that must stay errors for both
checkers. The package's
internal modules are followed silently (their types are used, their own findings
not reported).

pyright (PYRIGHT, pinned, from the npm registry into the build directory) then
checks the two typing programs: what an IDE user sees. Without npm on PATH, or
with the registry unreachable, it is reported as not run and mypy decides.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pyvenv  # noqa: E402

PYRIGHT = "1.1.414"
TYPING = [os.path.join("tests", "typing", f) for f in ("public_api.py", "reference_usage.py", "decorator_keywords.py")]
PUBLIC = ["__init__.py", "_types.py", "_defaults.py", "_options.py", "_ndarray.py", "_userbackend.py", "_tenants.py",
          "_outcome.py", "_urlbackend.py", "_unavailable.py", "health.py", "interop.py", "key_generator.py",
          # the reference's module layout (docs/python.md "Reference modules")
          "backends/__init__.py", "backends/redis/__init__.py", "backends/file/__init__.py",
          "backends/memcached/__init__.py", "config/__init__.py", "config/nested.py", "config/decorator.py",
          "serializers/__init__.py", "decorators/__init__.py", "decorators/wrapper.py"]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--source-root", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    python = pyvenv.ensure(os.path.join(a.work, "venv-typing"), os.path.join(here, "requirements-typing.txt"))
    wrapper = os.path.join(a.source_root, "wrappers", "python")
    files = [os.path.join("cachekit", f) for f in PUBLIC] + TYPING
    cmd = [python, "-m", "mypy", "--strict", "--follow-imports=silent", "--no-incremental",
           "--python-version", "3.10", *files]
    r = subprocess.run(cmd, cwd=wrapper, capture_output=True, text=True, env=pyvenv.clean_env())
    sys.stdout.write(r.stdout + r.stderr)
    if r.returncode != 0:
        print("FAILED: mypy --strict found errors in the public API", flush=True)
        return 1
    print("mypy --strict: the public API type-checks", flush=True)
    return run_pyright(os.path.join(a.work, "pyright"), wrapper)


def ensure_pyright(prefix: str) -> str | None:
    """The pinned pyright's executable, installed once under `prefix`; None when it cannot be had."""
    exe = os.path.join(prefix, "node_modules", ".bin", "pyright")
    stamp = os.path.join(prefix, ".cachekit-pyright")
    if os.path.exists(exe) and os.path.exists(stamp) and open(stamp).read() == PYRIGHT:
        return exe
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        print("pyright: not run (no node/npm on PATH)", flush=True)
        return None
    shutil.rmtree(prefix, ignore_errors=True)
    os.makedirs(prefix)
    try:
        r = subprocess.run([npm, "install", "--prefix", prefix, "--no-audit", "--no-fund", "--no-save",
                            f"pyright@{PYRIGHT}"], capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        print(f"pyright: not run (npm install pyright@{PYRIGHT} did not finish in 300 s)", flush=True)
        return None
    if r.returncode != 0 or not os.path.exists(exe):
        try:
            reachable = subprocess.run([npm, "ping"], capture_output=True, timeout=60).returncode == 0
        except subprocess.TimeoutExpired:
            reachable = False
        if reachable:
            pyvenv.fail(f"npm install pyright@{PYRIGHT} failed:\n{r.stdout}{r.stderr}")
        print(f"pyright: not run (the npm registry cannot be reached for pyright@{PYRIGHT})", flush=True)
        return None
    with open(stamp, "w") as f:
        f.write(PYRIGHT)
    return exe


def run_pyright(prefix: str, wrapper: str) -> int:
    exe = ensure_pyright(prefix)
    if exe is None:
        return 0
    r = subprocess.run([exe, "--pythonversion", "3.10", *TYPING], cwd=wrapper, capture_output=True, text=True,
                       env=pyvenv.clean_env())
    sys.stdout.write(r.stdout + r.stderr)
    if r.returncode != 0:
        print("FAILED: pyright found errors in the typing programs", flush=True)
        return 1
    print(f"pyright {PYRIGHT}: the typing programs type-check", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
