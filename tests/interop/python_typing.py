#!/usr/bin/env python3
"""Suite python-typing: the Python wrapper's public API under `mypy --strict`.

A venv under the build directory gets the pinned mypy (requirements-typing.txt;
exit 77 when PyPI is unreachable). mypy then checks, strictly, the public
modules (cachekit/__init__.py and the modules whose names it exports or whose
types a user sees) and tests/typing/public_api.py, a program using every public
name: a decorated function keeps its signature and gains cache_info /
cache_clear / invalidate_cache / __wrapped__. The package's internal modules
are followed silently (their types are used, their own findings not reported).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pyvenv  # noqa: E402

PUBLIC = ["__init__.py", "_types.py", "_defaults.py", "_options.py", "_ndarray.py", "_userbackend.py", "_tenants.py"]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--source-root", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    python = pyvenv.ensure(os.path.join(a.work, "venv-typing"), os.path.join(here, "requirements-typing.txt"))
    wrapper = os.path.join(a.source_root, "wrappers", "python")
    files = [os.path.join("cachekit", f) for f in PUBLIC] + [os.path.join("tests", "typing", "public_api.py")]
    cmd = [python, "-m", "mypy", "--strict", "--follow-imports=silent", "--no-incremental",
           "--python-version", "3.10", *files]
    r = subprocess.run(cmd, cwd=wrapper, capture_output=True, text=True, env=pyvenv.clean_env())
    sys.stdout.write(r.stdout + r.stderr)
    if r.returncode != 0:
        print("FAILED: mypy --strict found errors in the public API", flush=True)
        return 1
    print("mypy --strict: the public API type-checks", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
