"""Virtual environments for the tests that need packages from PyPI.

`ensure(path, requirements)` makes (once) a venv with Debian's /usr/bin/python3 and
installs the pinned requirements file into it; a stamp holding the file's hash makes
later runs reuse it. When the install fails because the package index cannot be
reached, the caller's test is skipped: `skip()` prints why and exits 77.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import urllib.error
import urllib.request

SKIP = 77
BASE_PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable


def skip(message: str) -> None:
    print(f"SKIP: {message}", flush=True)
    sys.exit(SKIP)


def fail(message: str) -> None:
    print(f"FAILED: {message}", flush=True)
    sys.exit(1)


def index_url() -> str:
    return os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple/")


def index_reachable(timeout: float = 15.0) -> bool:
    try:
        with urllib.request.urlopen(index_url(), timeout=timeout):
            return True
    except (urllib.error.URLError, OSError, ValueError):
        return False


def venv_python(path: str) -> str:
    return os.path.join(path, "bin", "python")


def _stamp(requirements: str) -> str:
    with open(requirements, "rb") as f:
        return hashlib.sha256(f.read() + BASE_PYTHON.encode()).hexdigest()


def ensure(path: str, requirements: str) -> str:
    """The venv's python, with `requirements` installed; skips (77) when the index is unreachable."""
    stamp_file = os.path.join(path, ".cachekit-requirements")
    want = _stamp(requirements)
    if os.path.exists(stamp_file) and open(stamp_file).read() == want and os.path.exists(venv_python(path)):
        return venv_python(path)
    shutil.rmtree(path, ignore_errors=True)
    r = subprocess.run([BASE_PYTHON, "-m", "venv", path], capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"`{BASE_PYTHON} -m venv` failed (Debian: apt install python3-venv):\n{r.stdout}{r.stderr}")
    r = subprocess.run([venv_python(path), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                        "-r", requirements], capture_output=True, text=True)
    if r.returncode != 0:
        shutil.rmtree(path, ignore_errors=True)
        if not index_reachable():
            skip(f"the package index {index_url()} cannot be reached: cannot install {os.path.basename(requirements)}")
        fail(f"pip install -r {requirements} failed:\n{r.stdout}{r.stderr}")
    with open(stamp_file, "w") as f:
        f.write(want)
    return venv_python(path)


def clean_env(**extra: str) -> dict[str, str]:
    """The environment without anything that would steer Python or the loader to the build tree."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "LD_LIBRARY_PATH", "PYTHONHOME", "VIRTUAL_ENV")
           and not k.startswith(("CACHEKIT_", "REDIS_URL"))}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.update(extra)
    return env
