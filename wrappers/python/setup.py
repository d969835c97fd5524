"""setuptools hook for the cffi extension (cffi_modules cannot be set in pyproject.toml).

Building needs libcachekit's headers and library visible to pkg-config
(`pkg-config --cflags --libs cachekit`); for a meson build tree set
PKG_CONFIG_PATH=<builddir>/meson-uninstalled and CACHEKIT_RPATH=<builddir>/src.
"""
from setuptools import setup

setup(cffi_modules=["cachekit/_build_ffi.py:ffibuilder"])
