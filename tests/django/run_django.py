#!/usr/bin/env python3
"""Meson suite `django`: cachekit.django.CacheKitCache under a real Django (docs/django.md).

1. a venv under the build directory with the pinned Django and pytest
   (tests/django/requirements.txt; tests/interop/pyvenv.py, exit 77 when PyPI is
   unreachable);
2. the wrapper's extension built against the build tree, as the interop suite builds
   it (tests/interop/python_interop.py build_ours);
3. pytest on tests/django (a minimal Django project, djproject/, and the behaviour
   tests, on a private redis-server and memory://), its summary line printed last; a
   run that collects no tests fails (tests/python/run_pytest.py run_pytest);
4. Django's own cache tests: the pinned sdist (django-tests.txt, version and sha256;
   fetched once with the venv's pip into the venv folder, its tests/cache kept) and
   its BaseCacheTests mixin on cachekit.django (own/cachekit_cache_tests.py), on a
   private redis-server, memory:// and a file:// directory, with Django's test runner. The tests that differ are skipped
   or marked expected failures by name there, with the reasons of docs/django.md's
   table; this script fails when the two lists differ.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
sys.path[:0] = [os.path.join(TESTS, "interop"), os.path.join(TESTS, "python")]
import pyvenv  # noqa: E402
from python_interop import build_ours  # noqa: E402
from run_pytest import run_pytest  # noqa: E402

DJANGO_VERSION = "5.2.19"


def pinned_sdist() -> tuple[str, str]:
    """(requirement, sha256) of django-tests.txt."""
    with open(os.path.join(HERE, "django-tests.txt")) as f:
        line = next(ln for ln in f if ln.strip() and not ln.startswith("#"))
    m = re.match(r"(Django==[\d.]+) --hash=sha256:([0-9a-f]{64})", line.strip())
    if not m or m.group(1) != f"Django=={DJANGO_VERSION}":
        pyvenv.fail(f"django-tests.txt: expected Django=={DJANGO_VERSION} --hash=sha256:..., got {line!r}")
    return m.group(1), m.group(2)


def django_cache_tests(python: str, venv: str) -> str:
    """The folder holding the sdist's tests/cache as `cache` (fetched once, checked by hash)."""
    requirement, sha = pinned_sdist()
    home = os.path.join(venv, f"django-tests-{DJANGO_VERSION}")
    if os.path.exists(os.path.join(home, "cache", "tests.py")):
        return home
    with tempfile.TemporaryDirectory(dir=venv) as tmp:
        env = dict(os.environ, PIP_CONSTRAINT=os.path.join(HERE, "django-tests-build.txt"))
        r = subprocess.run([python, "-m", "pip", "download", "-q", "--disable-pip-version-check", "--no-binary",
                            ":all:", "--no-deps", "--require-hashes", "-r", os.path.join(HERE, "django-tests.txt"),
                            "-d", tmp], capture_output=True, text=True, env=env)
        sdist = os.path.join(tmp, f"django-{DJANGO_VERSION}.tar.gz")
        if r.returncode != 0 or not os.path.exists(sdist):
            if not pyvenv.index_reachable():
                pyvenv.skip(f"the package index cannot be reached: cannot download {requirement}'s sdist")
            pyvenv.fail(f"pip download {requirement} failed:\n{r.stdout}{r.stderr}")
        with open(sdist, "rb") as f:
            if hashlib.sha256(f.read()).hexdigest() != sha:
                pyvenv.fail(f"{sdist}: sha256 differs from django-tests.txt")
        inside = f"django-{DJANGO_VERSION}/tests/cache/"
        with tarfile.open(sdist) as tar:
            members = [m for m in tar.getmembers() if m.name.startswith(inside) and m.isfile()]
            if not any(m.name == inside + "tests.py" for m in members):
                pyvenv.fail(f"{requirement}'s sdist has no tests/cache/tests.py")
            staging = os.path.join(tmp, "staging")
            for m in members:  # regular files only, written by name under staging/cache
                rel = m.name[len(inside):]
                if rel.startswith("/") or ".." in rel.split("/"):
                    pyvenv.fail(f"{requirement}'s sdist: unexpected path {m.name!r}")
                dest = os.path.join(staging, "cache", rel)
                os.makedirs(os.path.dirname(dest), exist_ok=True)
                with tar.extractfile(m) as src, open(dest, "wb") as out:
                    shutil.copyfileobj(src, out)
        os.rename(staging, home)
    return home


def documented_differences(source_root: str) -> dict[str, tuple[str, str]]:
    """docs/django.md's table of Django's own cache tests that differ: name -> (how, reason)."""
    with open(os.path.join(source_root, "docs", "django.md"), encoding="utf-8") as f:
        doc = f.read()
    section = doc.split("## Django's own cache tests", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"(?m)^\| `(test_\w+)` \| (skip|xfail) \| (.+?) \|$", section)
    return {name: (how, reason) for name, how, reason in rows}


def run_own_suite(python: str, venv: str, source_root: str, env: dict[str, str]) -> int:
    """Django's own cache tests on cachekit.django; 0 when they pass (differences as listed)."""
    sys.path.insert(0, os.path.join(HERE, "own"))
    from cachekit_cache_differences import DIFFERENCES  # noqa: E402
    documented = documented_differences(source_root)
    if documented != DIFFERENCES:
        only_doc = sorted(set(documented.items()) - set(DIFFERENCES.items()))
        only_code = sorted(set(DIFFERENCES.items()) - set(documented.items()))
        print(f"FAILED: docs/django.md and own/cachekit_cache_differences.py list different tests:\n"
              f"  only in the doc: {only_doc}\n  only in the runner: {only_code}", flush=True)
        return 1
    home = django_cache_tests(python, venv)
    sys.path.insert(0, os.path.join(source_root, "wrappers", "python", "tests"))
    from redis_procs import RedisServer  # noqa: E402
    with tempfile.TemporaryDirectory(prefix="cachekit-django-own-") as tmp:
        server = RedisServer(tmp)
        try:
            run_env = dict(env, CACHEKIT_DJANGO_TEST_REDIS=server.url,
                           CACHEKIT_DJANGO_TEST_FILE_DIR=os.path.join(tmp, "files"))
            proc = subprocess.run([python, os.path.join(HERE, "own", "run_own.py"), home], env=run_env,
                                  capture_output=True, text=True, cwd=tmp)
        finally:
            server.stop()
    out = proc.stdout + proc.stderr
    sys.stdout.write(out)
    summary = [ln for ln in out.splitlines() if re.match(r"(Ran \d+ tests|OK|FAILED)\b", ln)]
    print("\nDjango's own cache tests:", " ".join(summary) if summary else "(no summary)", flush=True)
    return proc.returncode


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
    cmd = [python, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "--ignore", os.path.join(HERE, "own"),
           HERE, *a.pytest_args]
    ours = run_pytest(cmd, a.source_root, env)
    own = run_own_suite(python, os.path.join(a.work, "venv-django"), a.source_root, env)
    return ours or own


if __name__ == "__main__":
    sys.exit(main())
