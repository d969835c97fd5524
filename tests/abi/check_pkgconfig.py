#!/usr/bin/env python3
"""The build tree's uninstalled cachekit.pc lets a C program build and run.

usage: check_pkgconfig.py UNINSTALLED_PC_DIR LIBRARY_DIR CC [CC ARGS...]

Runs `pkg-config --cflags --libs cachekit` with PKG_CONFIG_PATH set to the
meson-uninstalled folder (pkg-config prefers cachekit-uninstalled.pc there),
compiles and links a tiny C program with those flags, and runs it with
LD_LIBRARY_PATH at the built library.
"""
import os
import shlex
import subprocess
import sys
import tempfile

PROGRAM = r"""
#include <cachekit/cachekit.h>
#include <stdio.h>
#include <string.h>
int main(void) {
    cachekit_buf b = CACHEKIT_BUF_INIT;
    int ok = cachekit_version_number() == CACHEKIT_VERSION_NUMBER &&
             strcmp(cachekit_version_string(), CACHEKIT_VERSION_STRING) == 0 &&
             cachekit_serializer_code(&b, "orjson") == CACHEKIT_OK && strcmp(b.ptr, "o") == 0;
    cachekit_buf_dispose(&b);
    printf("linked libcachekit %s: %s\n", cachekit_version_string(), ok ? "ok" : "MISMATCH");
    return ok ? 0 : 1;
}
"""


def main():
    if len(sys.argv) < 4:
        print(__doc__)
        return 2
    pc_dir, lib_dir, cc = sys.argv[1], sys.argv[2], sys.argv[3:]
    passed = failed = 0

    def check(ok, what, detail=""):
        nonlocal passed, failed
        if ok:
            passed += 1
            print(f"ok {what}")
        else:
            failed += 1
            print(f"FAIL {what}" + (f":\n{detail}" if detail else ""))
        return ok

    env = dict(os.environ)
    env["PKG_CONFIG_PATH"] = pc_dir
    env.pop("PKG_CONFIG_DISABLE_UNINSTALLED", None)
    check(os.path.isfile(os.path.join(pc_dir, "cachekit-uninstalled.pc")),
          f"{pc_dir}/cachekit-uninstalled.pc exists")
    r = subprocess.run(["pkg-config", "--cflags", "--libs", "cachekit"], env=env,
                       capture_output=True, text=True)
    if not check(r.returncode == 0, "pkg-config --cflags --libs cachekit", r.stderr):
        print(f"check_pkgconfig: {passed} passed, {failed} failed")
        return 1
    flags = shlex.split(r.stdout)
    print("flags: " + r.stdout.strip())
    r = subprocess.run(["pkg-config", "--modversion", "cachekit"], env=env, capture_output=True, text=True)
    print("version: " + r.stdout.strip())

    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "use_cachekit.c")
        exe = os.path.join(tmp, "use_cachekit")
        with open(src, "w", encoding="utf-8") as f:
            f.write(PROGRAM)
        r = subprocess.run(cc + ["-std=c99", "-Wall", "-Wextra", "-Werror", src, "-o", exe] + flags,
                           capture_output=True, text=True)
        if check(r.returncode == 0, "a C program compiles and links with those flags", r.stdout + r.stderr):
            run_env = dict(os.environ)
            run_env["LD_LIBRARY_PATH"] = lib_dir + (":" + run_env["LD_LIBRARY_PATH"]
                                                    if run_env.get("LD_LIBRARY_PATH") else "")
            r = subprocess.run([exe], env=run_env, capture_output=True, text=True)
            print(r.stdout.strip())
            check(r.returncode == 0, "the program runs against the built library", r.stderr)

    print(f"check_pkgconfig: {passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
