#!/usr/bin/env python3
"""Write the C source of cachekit._ffi (cffi API mode, out of line) to argv[1].

The meson build of the Python package (wrappers/python/meson.build) compiles it
itself with the core linked in, so nothing here looks for an installed library:
only the declarations (_build_ffi.CDEF) and the header the source includes.
"""
from __future__ import annotations

import importlib.util
import os
import sys

from cffi import FFI


def main(out: str) -> int:
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location("_cachekit_build_ffi", os.path.join(here, "cachekit", "_build_ffi.py"))
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    builder = FFI()
    builder.cdef(mod.CDEF)
    builder.set_source("cachekit._ffi", "#include <cachekit/cachekit.h>\n")
    builder.emit_c_code(out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
