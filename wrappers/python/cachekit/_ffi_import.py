"""Import the cffi extension (cachekit._ffi), or say which piece is missing.

"cachekit._ffi is not built" is true only when the extension module itself
is absent. When it is there but the library it links cannot be loaded (moved,
removed, another version), the error names that library and the loader's
reason instead, so the real cause is not hidden in a chained traceback.
"""
from __future__ import annotations

import re
from typing import Any, Tuple

_BUILD_HINT = (
    "build it with `python3 wrappers/python/build_ext.py --build-dir <meson builddir> --out <dir>` and put "
    "<dir> on PYTHONPATH, or install the package: `pip install .` at the repository root (or the "
    "libcachekit wheel), or `pip install ./wrappers/python` with libcachekit visible to pkg-config"
)
_LIBRARY = re.compile(r"(lib[\w.+-]*\.so(?:\.[\d.]+)?)")


def describe_import_failure(exc: ImportError) -> str:
    """The message of the ImportError that `import cachekit` raises for `exc`."""
    if isinstance(exc, ModuleNotFoundError) and exc.name == "cachekit._ffi":
        return f"cachekit._ffi (the cffi extension) is not built: {_BUILD_HINT}"
    text = str(exc)
    library = _LIBRARY.search(text)
    if "cannot open shared object file" in text and library:
        return (
            f"cachekit._ffi is built but the dynamic loader cannot find {library.group(1)} ({text}): "
            "install libcachekit, or put the folder of the copy cachekit was built against on LD_LIBRARY_PATH"
        )
    if re.search(r"undefined symbol: cachekit_|version `CACHEKIT_", text):
        return (
            f"cachekit._ffi cannot use the libcachekit it loaded ({text}): the library is older than the one "
            "cachekit was built against; install a matching libcachekit or rebuild cachekit"
        )
    return f"cachekit._ffi cannot be loaded ({text}): {_BUILD_HINT}"


def import_ffi() -> Tuple[Any, Any]:
    """cachekit._ffi's (ffi, lib), or an ImportError naming what is missing."""
    try:
        from cachekit._ffi import ffi, lib  # type: ignore[import-not-found]
    except ImportError as exc:  # depends on the build and the installed library
        raise ImportError(describe_import_failure(exc)) from exc
    return ffi, lib
