"""setuptools hook for the extensions: cachekit._ffi (cffi; cffi_modules cannot be
set in pyproject.toml) and cachekit._fastpath (the object-mode hit path in plain
CPython C API; the package falls back to pure Python without it).

Building needs libcachekit's headers and library visible to pkg-config
(`pkg-config --cflags --libs cachekit`); for a meson build tree set
PKG_CONFIG_PATH=<builddir>/meson-uninstalled and CACHEKIT_RPATH=<builddir>/src.
"""
from setuptools import Extension, setup

setup(cffi_modules=["cachekit/_build_ffi.py:ffibuilder"],
      # optional: where it cannot compile, the package still installs and uses the Python hit path
      ext_modules=[Extension("cachekit._fastpath", ["cachekit/_fastpath.c"], optional=True)])
