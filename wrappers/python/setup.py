"""setuptools hook for the extensions: cachekit._ffi (cffi; cffi_modules cannot be
set in pyproject.toml) and cachekit._fastpath (the object-mode hit path in plain
CPython C API; the package falls back to pure Python without it).

Building needs an installed libcachekit that pkg-config finds
(`pkg-config --cflags --libs cachekit`; set PKG_CONFIG_PATH to the directory holding
cachekit.pc). The extension gets an rpath to the .pc's libdir (or CACHEKIT_RPATH), so
the installed package needs no LD_LIBRARY_PATH. The package's version is the library's.
For a meson build tree: PKG_CONFIG_PATH=<builddir>/meson-uninstalled and
CACHEKIT_RPATH=<builddir>/src.
"""
import os
import sys

from setuptools import Extension, setup

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "cachekit"))
from _build_ffi import LibcachekitNotFound, library_version  # noqa: E402

try:
    version = library_version()
except LibcachekitNotFound as exc:
    sys.stderr.write("\nerror: " + str(exc) + "\n\n")
    sys.exit(1)

setup(version=version,
      cffi_modules=["cachekit/_build_ffi.py:installed_ffibuilder"],
      # optional: where it cannot compile, the package still installs and uses the Python hit path
      ext_modules=[Extension("cachekit._fastpath", ["cachekit/_fastpath.c"], optional=True)])
