"""`import cachekit` without its pieces: the ImportError names what is missing
(issue 27) rather than saying "not built" for every cause."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

from cachekit._ffi_import import describe_import_failure

PKG = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "cachekit")


def test_an_absent_extension_says_it_is_not_built(tmp_path):
    # The package alone, without the compiled extension beside it.
    shutil.copytree(PKG, tmp_path / "cachekit", ignore=shutil.ignore_patterns("_ffi*.so", "__pycache__"))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(tmp_path)
    run = subprocess.run([sys.executable, "-c", "import cachekit"], env=env, capture_output=True, text=True)
    assert run.returncode != 0
    last = run.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: cachekit._ffi (the cffi extension) is not built"), last
    assert "build_ext.py" in last


def test_a_missing_library_is_named_with_the_loaders_reason():
    exc = ImportError("libcachekit.so.1: cannot open shared object file: No such file or directory")
    message = describe_import_failure(exc)
    assert "cannot find libcachekit.so.1" in message
    assert "No such file or directory" in message
    assert "not built" not in message


def test_an_older_library_is_named_as_the_cause():
    exc = ImportError("/x/_ffi.abi3.so: undefined symbol: cachekit_cache_put_refresh_ex")
    message = describe_import_failure(exc)
    assert "older than the one cachekit was built against" in message
    assert "cachekit_cache_put_refresh_ex" in message


def test_another_loader_failure_keeps_its_text():
    exc = ImportError("/x/_ffi.abi3.so: version `GLIBC_2.99' not found")
    message = describe_import_failure(exc)
    assert "GLIBC_2.99" in message and "older than" not in message
