#!/usr/bin/env python3
"""The pip-installable package, as a user installs it (meson suite `python-package`).

1. `meson install --destdir` the build tree into a temp dir and relocate its cachekit.pc
   (prefix= the staged prefix), as if libcachekit had been installed there;
2. a venv (Debian's python3, pinned requirements-package.txt; skipped when PyPI is
   unreachable) runs `pip install --no-build-isolation <copy of wrappers/python>` with
   only PKG_CONFIG_PATH set, then, from another directory, without PYTHONPATH or
   LD_LIBRARY_PATH: the package's version is the .pc's, the extension's RUNPATH is the
   .pc's libdir, and a decorated function with the file backend named
   (CACHEKIT_FILE_CACHE_DIR) gets a miss, a hit, and a hit from a second process;
   with nothing configured it caches in its process only (a miss again in the next
   process, nothing on disk under XDG_CACHE_HOME);
3. without libcachekit on PKG_CONFIG_PATH the install fails with the clear message
   (what to install, which variable), not a compiler traceback;
4. `python -m build` makes an sdist and a wheel named with the library's version.
"""
from __future__ import annotations

import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pyvenv  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

DECORATED = r"""
import json, sys
import cachekit
from cachekit import cache
# The reference's module layout ships in the package (pyproject's packages).
import cachekit.backends.file, cachekit.backends.memcached, cachekit.backends.redis, cachekit.config.nested
import cachekit.decorators.wrapper, cachekit.interop, cachekit.key_generator, cachekit.serializers

calls = []

@cache(ttl=600, namespace="pkgtest")
def square(x):
    calls.append(x)
    return {"x": x, "square": x * x}

first = square(12)
second = square(12)
info = square.cache_info()
print(json.dumps({"file": cachekit.__file__, "version": cachekit.__version__, "calls": len(calls),
                  "first": first, "second": second, "hits": info.hits, "misses": info.misses}))
"""


def stage_install(build_dir: str, dest: str) -> tuple[str, str]:
    """(pkgconfig dir, version) of a relocated `meson install --destdir dest`."""
    r = subprocess.run(["meson", "install", "-C", build_dir, "--no-rebuild", "--quiet", "--destdir", dest],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pyvenv.fail(f"meson install failed:\n{r.stdout}{r.stderr}")
    pcs = glob.glob(os.path.join(dest, "**", "pkgconfig", "cachekit.pc"), recursive=True)
    if len(pcs) != 1:
        pyvenv.fail(f"expected one installed cachekit.pc under {dest}, found {pcs}")
    pc = pcs[0]
    text = open(pc).read()
    m = re.search(r"^prefix=(.*)$", text, re.M)
    if not m:
        pyvenv.fail(f"{pc} has no prefix= line")
    text = text.replace(m.group(0), "prefix=" + dest + m.group(1), 1)
    with open(pc, "w") as f:
        f.write(text)
    version = re.search(r"^Version:\s*(\S+)", text, re.M).group(1)
    return os.path.dirname(pc), version


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--source-root", required=True)
    ap.add_argument("--work", required=True, help="a directory of the build tree for the venv")
    a = ap.parse_args()
    python = pyvenv.ensure(os.path.join(a.work, "venv-package"), os.path.join(HERE, "requirements-package.txt"))

    with tempfile.TemporaryDirectory(prefix="cachekit-pkg-") as tmp:
        pc_dir, version = stage_install(os.path.abspath(a.build_dir), os.path.join(tmp, "stage"))
        src = os.path.join(tmp, "src")  # a copy: setuptools writes build/ and egg-info next to the sources
        shutil.copytree(os.path.join(a.source_root, "wrappers", "python"), src,
                        ignore=shutil.ignore_patterns("tests", "build", "*.egg-info", "__pycache__"))
        empty = os.path.join(tmp, "empty")
        os.makedirs(empty)

        # 3. no libcachekit: a clear message (checked first: it needs no compiler)
        target = os.path.join(tmp, "target-missing")
        r = run([python, "-m", "pip", "install", "--no-build-isolation", "--disable-pip-version-check",
                 "--target", target, src], env=pyvenv.clean_env(PKG_CONFIG_PATH=empty, PKG_CONFIG_LIBDIR=empty))
        out = r.stdout + r.stderr
        if r.returncode == 0 or "libcachekit was not found by pkg-config" not in out or "PKG_CONFIG_PATH" not in out \
                or "Traceback" in out:
            pyvenv.fail(f"install without libcachekit: expected the clear error, got rc={r.returncode}:\n{out}")
        print("ok: without libcachekit, pip install fails with: libcachekit was not found by pkg-config ...")

        # 2. pip install ./wrappers/python, then use it as a user would
        env = pyvenv.clean_env(PKG_CONFIG_PATH=pc_dir)
        r = run([python, "-m", "pip", "install", "--no-build-isolation", "--disable-pip-version-check",
                 "--force-reinstall", "--no-deps", src], env=env)
        if r.returncode != 0:
            pyvenv.fail(f"pip install {src} failed:\n{r.stdout}{r.stderr}")
        print("ok: pip install ./wrappers/python against the installed prefix")
        libdir = run(["pkg-config", "--variable=libdir", "cachekit"], env=env).stdout.strip()
        cache_home = os.path.join(tmp, "xdg-cache")
        file_dir = os.path.join(tmp, "file-l2")
        user_env = pyvenv.clean_env(XDG_CACHE_HOME=cache_home)
        results = []
        # With the file backend named, the second process finds the first one's entry;
        # the third, with nothing configured, caches in its process only.
        for env_run in (dict(user_env, CACHEKIT_FILE_CACHE_DIR=file_dir),) * 2 + (user_env,):
            r = run([python, "-c", DECORATED], env=env_run, cwd=tmp)
            if r.returncode != 0:
                pyvenv.fail(f"the decorated function failed:\n{r.stdout}{r.stderr}")
            results.append(__import__("json").loads(r.stdout.strip().splitlines()[-1]))
        site = os.path.dirname(os.path.dirname(python))
        first, second, bare = results
        checks = [
            (first["file"].startswith(site), f"imported from the venv ({first['file']})"),
            (first["version"] == version, f"cachekit.__version__ {first['version']} == the .pc's Version {version}"),
            (first["calls"] == 1 and first["hits"] == 1 and first["misses"] == 1,
             f"first process: one miss then one hit ({first})"),
            (first["first"] == first["second"] == {"x": 12, "square": 144}, "the value round-trips"),
            (second["calls"] == 0 and second["hits"] == 2, f"second process: hits from the file L2 ({second})"),
            (bool(glob.glob(os.path.join(file_dir, "*"))), "entries in $CACHEKIT_FILE_CACHE_DIR"),
            (bare["calls"] == 1 and bare["hits"] == 1, f"nothing configured: a miss, then an in-process hit ({bare})"),
            (not os.path.exists(os.path.join(cache_home, "cachekit")), "nothing configured: nothing on disk"),
        ]
        ext = glob.glob(os.path.join(os.path.dirname(first["file"]), "_ffi*.so"))
        runpath = run(["readelf", "-d", ext[0]]).stdout if ext else ""
        checks.append((libdir and f"[{libdir}]" in runpath, f"_ffi's RUNPATH is the .pc's libdir {libdir}"))
        version_meta = run([python, "-c", "import importlib.metadata as m; print(m.version('libcachekit'))"],
                           env=user_env, cwd=tmp).stdout.strip()
        checks.append((version_meta == version, f"distribution version {version_meta} == {version}"))
        for ok, what in checks:
            if not ok:
                pyvenv.fail(what)
            print("ok:", what)

        # 4. python -m build: sdist + wheel
        dist = os.path.join(tmp, "dist")
        r = run([python, "-m", "build", "--no-isolation", "--outdir", dist, src], env=env)
        if r.returncode != 0:
            pyvenv.fail(f"python -m build failed:\n{r.stdout}{r.stderr}")
        names = sorted(os.listdir(dist))
        want = [f"libcachekit-{version}.tar.gz", f"libcachekit-{version}-"]
        if not (any(n == want[0] for n in names) and any(n.startswith(want[1]) and n.endswith(".whl") for n in names)):
            pyvenv.fail(f"python -m build made {names}, expected {want[0]} and a libcachekit-{version}-*.whl")
        print("ok: python -m build ->", ", ".join(names))
    print("python-package: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
