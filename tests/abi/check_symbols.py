#!/usr/bin/env python3
"""The shared library exports exactly the functions the public header declares.

usage: check_symbols.py LIBRARY HEADER

- the set of dynamic symbols the library defines (nm -D --defined-only) equals
  the set of `CACHEKIT_API ... cachekit_xxx(` declarations in the header
  (differences are printed both ways);
- no C++ (mangled _Z...) symbol is exported;
- the soname is libcachekit.so.1;
- every function that returns an int status (but the few that cannot fail)
  has an `_ex` form whose parameters are its own plus a last
  `cachekit_error *err`.
The comparison takes whatever both files hold now: functions added to the
header and the library together keep it passing.
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_abi_checks import NO_EX_FORM, declared_functions, status_functions  # noqa: E402

EXPECTED_SONAME = "libcachekit.so.1"


def exported_symbols(library):
    out = subprocess.run(["nm", "-D", "--defined-only", library], check=True,
                         capture_output=True, text=True).stdout
    symbols = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        kind, name = parts[-2], parts[-1]
        if kind == "A":  # version nodes (CACHEKIT_0.1) are not symbols
            continue
        symbols.add(name.split("@", 1)[0])
    return symbols


def soname(library):
    out = subprocess.run(["readelf", "-d", library], check=True,
                         capture_output=True, text=True).stdout
    m = re.search(r"\(SONAME\)\s+Library soname: \[([^\]]+)\]", out)
    return m.group(1) if m else None


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    library, header = sys.argv[1], sys.argv[2]
    passed = failed = 0

    def check(ok, what, detail=""):
        nonlocal passed, failed
        if ok:
            passed += 1
            print(f"ok {what}")
        else:
            failed += 1
            print(f"FAIL {what}" + (f": {detail}" if detail else ""))

    exported = exported_symbols(library)
    declared = declared_functions(header)
    print(f"{len(exported)} exported symbols, {len(declared)} CACHEKIT_API declarations")
    check(len(declared) > 0, "the header declares CACHEKIT_API functions")

    only_lib = sorted(exported - declared)
    only_hdr = sorted(declared - exported)
    for name in only_lib:
        print(f"  exported but not declared in the header: {name}")
    for name in only_hdr:
        print(f"  declared in the header but not exported: {name}")
    check(not only_lib and not only_hdr, "exported symbols == header declarations",
          f"{len(only_lib)} only in the library, {len(only_hdr)} only in the header")

    status = status_functions(header)
    plain = {n: p for n, p in status.items() if not n.endswith("_ex") and n not in NO_EX_FORM}
    missing = sorted(n for n in plain if n + "_ex" not in status)
    wrong = sorted(n for n in plain if n + "_ex" in status
                   and status[n + "_ex"] != plain[n] + ", cachekit_error *err")
    for name in missing:
        print(f"  no _ex form: {name}")
    for name in wrong:
        print(f"  _ex parameters differ from {name}'s plus `cachekit_error *err`")
    check(len(plain) > 50 and not missing and not wrong, f"{len(plain)} status functions have their _ex form")

    mangled = sorted(s for s in exported if s.startswith("_Z"))
    check(not mangled, "no C++ (mangled) symbol is exported", ", ".join(mangled[:10]))
    foreign = sorted(s for s in exported if not s.startswith("cachekit_"))
    check(not foreign, "every exported symbol starts with cachekit_", ", ".join(foreign[:10]))

    name = soname(library)
    check(name == EXPECTED_SONAME, f"soname is {EXPECTED_SONAME}", f"got {name}")

    print(f"check_symbols: {passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
