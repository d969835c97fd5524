"""The cffi cdef declares every cachekit_* function of the public header."""
from __future__ import annotations

import os
import re

from conftest import REPO_ROOT

HEADER = os.path.join(REPO_ROOT, "include", "cachekit", "cachekit.h")


def header_functions() -> set[str]:
    with open(HEADER, encoding="utf-8") as f:
        text = f.read()
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return set(re.findall(r"CACHEKIT_API\s+[^;(]*?\b(cachekit_\w+)\s*\(", text))


def cdef_functions() -> set[str]:
    from cachekit import _build_ffi
    return set(re.findall(r"\b(cachekit_\w+)\s*\(", _build_ffi.CDEF))


def test_header_parsed():
    names = header_functions()
    assert len(names) > 50
    assert "cachekit_cache_get_or_load" in names and "cachekit_key_auto" in names


def test_cdef_declares_every_header_function():
    missing = header_functions() - cdef_functions()
    assert not missing, f"cdef lacks: {sorted(missing)}"


def test_extension_exports_every_function():
    from cachekit._core import lib
    missing = [n for n in header_functions() if not hasattr(lib, n)]
    assert not missing


def test_constants_and_version():
    from cachekit._core import ffi, lib
    assert lib.CACHEKIT_MSGPACK_EXT_SET == 83
    assert lib.CACHEKIT_MSGPACK_EXT_TIMESTAMP == -1
    assert lib.CACHEKIT_TTL_DEFAULT == -1.0
    assert lib.CACHEKIT_ENOTFOUND == -1
    assert ffi.string(lib.cachekit_version_string()).decode().count(".") == 2
    assert ffi.string(lib.cachekit_error_name(lib.CACHEKIT_EOVERCLAIM)) == b"Overclaim"
