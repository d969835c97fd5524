#!/usr/bin/env python3
"""Meson suite `django`: cachekit.django.CacheKitCache under a real Django (docs/django.md).

1. a venv under the build directory with the pinned Django and pytest
   (tests/django/requirements.txt; tests/interop/pyvenv.py, exit 77 when PyPI is
   unreachable);
2. the wrapper's extension built against the build tree, as the interop suite builds
   it (tests/interop/python_interop.py build_ours);
3. pytest on tests/django (a minimal Django project, djproject/, and the behaviour
   tests, on a private redis-server and memory://), its summary line printed last; a
   run that collects no tests fails (tests/python/run_pytest.py run_pytest).
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
sys.path[:0] = [os.path.join(TESTS, "interop"), os.path.join(TESTS, "python")]
import pyvenv  # noqa: E402
from python_interop import build_ours  # noqa: E402
from run_pytest import run_pytest  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--source-root", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("pytest_args", nargs="*")
    a = ap.parse_args()
    if shutil.which("redis-server") is None:
        pyvenv.fail("redis-server is not installed (Debian: redis-server)")
    python = pyvenv.ensure(os.path.join(a.work, "venv-django"), os.path.join(HERE, "requirements.txt"))
    env = build_ours(a.build_dir, a.source_root, a.work)
    env["PYTHONPATH"] = os.pathsep.join([env["PYTHONPATH"], os.path.join(a.source_root, "wrappers", "python", "tests"),
                                         HERE])
    cmd = [python, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", HERE, *a.pytest_args]
    return run_pytest(cmd, a.source_root, env)


if __name__ == "__main__":
    sys.exit(main())
