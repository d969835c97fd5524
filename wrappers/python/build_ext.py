#!/usr/bin/env python3
"""Compile the cachekit._ffi and cachekit._fastpath extensions against a meson build tree.

    python3 wrappers/python/build_ext.py --build-dir <meson builddir> --out <dir>

writes <dir>/cachekit/_ffi*.so (plus the generated C file in a temp dir), linked
against <builddir>/src/libcachekit.so with an rpath to it, so that
PYTHONPATH=<dir>:wrappers/python imports the package from the source tree and
the extension from <dir>. Uses <builddir>/meson-uninstalled for pkg-config.
Also writes <dir>/cachekit/_fastpath*.so (cachekit/_fastpath.c: plain CPython
C API, no libcachekit), built the way setup.py's ext_modules builds it.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def build(build_dir: str, out: str, quiet: bool = False) -> str:
    build_dir = os.path.abspath(build_dir)
    out = os.path.abspath(out)
    src_lib = os.path.join(build_dir, "src")
    uninstalled = os.path.join(build_dir, "meson-uninstalled")
    env_pc = os.environ.get("PKG_CONFIG_PATH", "")
    os.environ["PKG_CONFIG_PATH"] = uninstalled + (os.pathsep + env_pc if env_pc else "")
    spec = importlib.util.spec_from_file_location("_cachekit_build_ffi", os.path.join(HERE, "cachekit", "_build_ffi.py"))
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    # The uninstalled .pc points at the source include dir and the build's
    # include dir (version.h); add them explicitly too in case pkg-config is absent.
    src_root = os.path.dirname(os.path.dirname(HERE))
    extra_inc = [os.path.join(src_root, "include"), os.path.join(build_dir, "include")]
    builder = mod.make_ffibuilder(extra_include=extra_inc, extra_libdirs=[src_lib], rpath=[src_lib])
    tmp = tempfile.mkdtemp(prefix="cachekit-ffi-")
    try:
        return _install(builder.compile(tmpdir=tmp, verbose=not quiet), out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _install(built: str, out: str) -> str:
    """Copy a built extension into <out>/cachekit/, replacing any older one
    atomically (a running import never sees half a file)."""
    pkg_dir = os.path.join(out, "cachekit")
    os.makedirs(pkg_dir, exist_ok=True)
    dest = os.path.join(pkg_dir, os.path.basename(built))
    shutil.copy2(built, dest + ".tmp")
    os.replace(dest + ".tmp", dest)
    return dest


def build_fastpath(out: str, quiet: bool = False) -> str:
    """Compile cachekit/_fastpath.c into <out>/cachekit/ with setuptools'
    build_ext (this interpreter's include dir, flags and EXT_SUFFIX)."""
    from setuptools import Distribution, Extension

    out = os.path.abspath(out)
    ext = Extension("cachekit._fastpath", [os.path.join(HERE, "cachekit", "_fastpath.c")],
                    extra_compile_args=["-Wall", "-Wextra"] if os.name != "nt" else [])
    dist = Distribution({"name": "cachekit-fastpath", "ext_modules": [ext]})
    dist.verbose = 0 if quiet else 1
    cmd = dist.get_command_obj("build_ext")
    tmp = tempfile.mkdtemp(prefix="cachekit-fastpath-")
    try:
        cmd.build_lib = tmp
        cmd.build_temp = os.path.join(tmp, "obj")
        cmd.force = True
        cmd.ensure_finalized()
        cmd.run()
        return _install(cmd.get_ext_fullpath(ext.name), out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build-dir", required=True, help="meson build directory of libcachekit")
    ap.add_argument("--out", required=True, help="directory to receive cachekit/_ffi*.so and cachekit/_fastpath*.so")
    ap.add_argument("--quiet", action="store_true")
    a = ap.parse_args(argv)
    print(build(a.build_dir, a.out, quiet=a.quiet))
    print(build_fastpath(a.out, quiet=a.quiet))
    return 0


if __name__ == "__main__":
    sys.exit(main())
