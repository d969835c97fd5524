#!/usr/bin/env python3
"""Print the files of the installed package `cachekit`, relative to wrappers/python.

Every .py module and py.typed, so a new module cannot be left out of the wheel;
the build-time helpers (_build_ffi.py) and C sources (compiled instead) are not.
"""
import os
import sys

BUILD_ONLY = {"_build_ffi.py"}


def main() -> int:
    here = os.path.dirname(os.path.abspath(__file__))
    out = []
    for root, dirs, files in os.walk(os.path.join(here, "cachekit")):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in files:
            if (name.endswith(".py") and name not in BUILD_ONLY) or name == "py.typed":
                out.append(os.path.relpath(os.path.join(root, name), here))
    print("\n".join(sorted(out)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
