"""The venv bench/report draws its plots in (matplotlib pinned in requirements-plots.txt,
installed once by tests/interop/pyvenv.py); without PyPI the plots are skipped with a message."""
from __future__ import annotations

import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "interop"))
import pyvenv  # noqa: E402


def python() -> str | None:
    build = os.environ.get("CACHEKIT_BENCH_BUILD", os.path.join(ROOT, "build-bench"))
    try:
        return pyvenv.ensure(os.path.join(build, "bench", "venv-plots"), os.path.join(HERE, "requirements-plots.txt"))
    except SystemExit as exc:  # pyvenv.skip: the package index cannot be reached
        if exc.code == pyvenv.SKIP:
            return None
        raise


def draw(latest: str, out: str) -> None:
    py = python()
    if py is None:
        print("bench/report: plots skipped: PyPI cannot be reached to install matplotlib", file=sys.stderr)
        return
    subprocess.run([py, os.path.join(HERE, "plots.py"), latest, out], check=True)
