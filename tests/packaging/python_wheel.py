#!/usr/bin/env python3
"""The Python distribution `libcachekit` as a user gets it (meson suite `packaging`).

Everything under one temp dir, removed at the end:
1. a venv of Debian's python3 with the pinned tools (requirements-wheel.txt);
2. `python -m build` of the source root: the sdist (`meson dist`: the committed
   tree), then the wheel from that sdist, in build's isolated environment with
   pyproject.toml's pinned build requirements (release, ninja -j2);
3. `auditwheel repair` to the manylinux tag `auditwheel show` names;
4. a fresh venv installs the repaired wheel (cffi and msgpack from the index), and
   from another directory, with no LD_LIBRARY_PATH and the build tree on no path:
   `import cachekit`; _ffi exports only PyInit__ffi (the core is linked in,
   private); ldd of the installed cachekit._ffi resolves each bundled
   library to the wheel's copy (none from /usr/lib or /lib, none missing); a
   decorated function with backend=None gets a miss then a hit; one on a
   redis-server started here on a free loopback port gets a miss, a hit, and a
   hit from a second process; the harness answers a key.interop.typed request
   with the key the package computes.
Prints the wheel's name and size and each step's time. Skipped (77) when the
package index cannot be reached or redis-server is not installed.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "interop"))
# The python suite's redis-server starter (free loopback port, PING until PONG).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "wrappers", "python", "tests"))
import pyvenv  # noqa: E402
from conftest import RedisServer  # noqa: E402

USE = r"""
import json, sys
import cachekit, cachekit._ffi
from cachekit import cache

local_calls, redis_calls = [], []

@cache(backend=None)
def local_square(x):
    local_calls.append(x)
    return x * x

@cache(backend=sys.argv[1], ttl=600, namespace="wheeltest")
def redis_square(x):
    redis_calls.append(x)
    return {"x": x, "square": x * x}

local = [local_square(7), local_square(7)]
remote = [redis_square(12), redis_square(12)]
print(json.dumps({"file": cachekit.__file__, "ffi": cachekit._ffi.__file__, "version": cachekit.__version__,
                  "local": local, "local_calls": len(local_calls),
                  "remote": remote, "redis_calls": len(redis_calls), "redis_hits": redis_square.cache_info().hits,
                  "interop_key": cachekit.generate_interop_key("users", "get_user", [42])}))
"""


class Steps:
    """Each step's wall time, printed at the end (reported, never asserted)."""

    def __init__(self) -> None:
        self.times: list[tuple[str, float]] = []
        self.t0 = time.monotonic()

    def run(self, name: str, cmd: list[str], **kw) -> subprocess.CompletedProcess:
        t = time.monotonic()
        r = subprocess.run(cmd, capture_output=True, text=True, **kw)
        self.times.append((name, time.monotonic() - t))
        if r.returncode != 0:
            pyvenv.fail(f"{name}: `{' '.join(cmd)}` exited {r.returncode}:\n{r.stdout[-6000:]}{r.stderr[-6000:]}")
        return r

    def report(self) -> str:
        total = time.monotonic() - self.t0
        return ", ".join(f"{n} {s:.1f} s" for n, s in self.times) + f"; total {total:.1f} s"


def build_env(tools_bin: str) -> dict[str, str]:
    env = pyvenv.clean_env(PATH=tools_bin + os.pathsep + os.environ.get("PATH", ""))
    # ccache (when there) makes a rebuild of unchanged sources cheap; the build is the same.
    if shutil.which("ccache") and "CC" not in os.environ and "CXX" not in os.environ:
        env["CC"], env["CXX"] = "ccache cc", "ccache c++"
    return env


def ldd(path: str) -> dict[str, str]:
    """{soname: resolved path or 'not found'} of `ldd path`."""
    out = subprocess.run(["ldd", path], capture_output=True, text=True, env=pyvenv.clean_env()).stdout
    libs = {}
    for line in out.splitlines():
        m = re.match(r"\s*(\S+) => (not found|\S+)", line)
        if m:
            libs[m.group(1)] = m.group(2)
    return libs


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--source-root", required=True)
    a = ap.parse_args()
    src = os.path.abspath(a.source_root)
    if not shutil.which("redis-server"):
        pyvenv.skip("redis-server is not installed")
    dirty = subprocess.run(["git", "-C", src, "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    if dirty:
        print("note: the sdist holds the committed tree; uncommitted changes are not tested", flush=True)

    steps = Steps()
    tmp = tempfile.mkdtemp(prefix="cachekit-wheel-")
    redis = None
    try:
        t = time.monotonic()
        tools = pyvenv.ensure(os.path.join(tmp, "tools"), os.path.join(HERE, "requirements-wheel.txt"))
        steps.times.append(("tools venv", time.monotonic() - t))
        tools_bin = os.path.dirname(tools)
        env = build_env(tools_bin)

        # The sdist, then the wheel from it (what `pip install <sdist>` does), at fixed
        # paths under tmp so that ccache, when there, hits on a rerun.
        dist = os.path.join(tmp, "dist")
        steps.run("sdist", [tools, "-m", "build", "--sdist", "--outdir", dist, src], env=env, cwd=tmp)
        sdists = [n for n in os.listdir(dist) if n.endswith(".tar.gz")]
        if len(sdists) != 1 or not sdists[0].startswith("libcachekit-"):
            pyvenv.fail(f"python -m build --sdist made {sorted(os.listdir(dist))}: expected one libcachekit-*.tar.gz")
        sdist = os.path.join(dist, sdists[0])
        unpacked = os.path.join(tmp, "unpacked")
        os.makedirs(unpacked)
        steps.run("unpack", ["tar", "-xzf", sdist, "-C", unpacked])
        (top,) = os.listdir(unpacked)
        os.rename(os.path.join(unpacked, top), os.path.join(tmp, "src"))
        steps.run("wheel", [tools, "-m", "build", "--wheel", "--outdir", dist, "-Cbuild-dir=" + os.path.join(tmp, "build"),
                            "-Csetup-args=-Dbuildtype=release", "-Ccompile-args=-j2", os.path.join(tmp, "src")],
                  env=dict(env, CCACHE_BASEDIR=tmp), cwd=tmp)
        wheels = [n for n in os.listdir(dist) if n.endswith(".whl")]
        if len(wheels) != 1:
            pyvenv.fail(f"python -m build --wheel made {sorted(os.listdir(dist))}: expected one wheel")
        wheel = os.path.join(dist, wheels[0])
        print(f"ok: python -m build -> {sdists[0]} ({os.path.getsize(sdist) / 1e6:.2f} MB), then from it {wheels[0]}",
              flush=True)

        show = steps.run("auditwheel show", [os.path.join(tools_bin, "auditwheel"), "show", wheel], env=env).stdout
        m = re.search(r'constrains the platform tag to\s+"(manylinux_\d+_\d+_x86_64)"', " ".join(show.split()))
        if not m:
            pyvenv.fail(f"auditwheel show names no manylinux tag:\n{show}")
        plat = m.group(1)
        house = os.path.join(tmp, "wheelhouse")
        steps.run("auditwheel repair", [os.path.join(tools_bin, "auditwheel"), "repair", "--plat", plat, "-w", house,
                                        wheel], env=env)
        (repaired,) = [os.path.join(house, n) for n in os.listdir(house)]
        with zipfile.ZipFile(repaired) as z:
            bundled = sorted(os.path.basename(n) for n in z.namelist() if n.startswith("libcachekit.libs/")
                             and os.path.basename(n))
        if plat not in os.path.basename(repaired):
            pyvenv.fail(f"the repaired wheel {repaired} is not tagged {plat}")
        wanted = ("libsodium", "liblz4", "libhiredis")
        missing = [w for w in wanted if not any(b.startswith(w + "-") for b in bundled)]
        if missing:
            pyvenv.fail(f"the repaired wheel does not bundle {missing}: it has {bundled}")
        print(f"ok: auditwheel repair -> {os.path.basename(repaired)} ({os.path.getsize(repaired) / 1e6:.2f} MB), "
              f"bundling {', '.join(bundled)}", flush=True)

        user = os.path.join(tmp, "user")
        steps.run("fresh venv", [pyvenv.BASE_PYTHON, "-m", "venv", user])
        py = pyvenv.venv_python(user)
        steps.run("pip install wheel", [py, "-m", "pip", "install", "-q", "--disable-pip-version-check", repaired],
                  env=pyvenv.clean_env())
        print(f"ok: pip install {os.path.basename(repaired)} into a fresh venv", flush=True)

        redis = RedisServer(tmp)
        url = redis.url
        here = os.path.join(tmp, "elsewhere")  # not the source tree: nothing imports from it
        os.makedirs(here)
        user_env = pyvenv.clean_env(XDG_CACHE_HOME=os.path.join(tmp, "xdg"))
        runs = [json.loads(steps.run(f"use {i}", [py, "-c", USE, url], env=user_env, cwd=here).stdout
                           .strip().splitlines()[-1]) for i in (1, 2)]
        first, second = runs
        site = os.path.join(user, "lib")
        libs = ldd(first["ffi"])
        libs_dir = os.path.join(os.path.dirname(os.path.dirname(first["ffi"])), "libcachekit.libs")
        libs = {k: os.path.realpath(v) if v.startswith("/") else v for k, v in libs.items()}
        missing_libs = [k for k, v in libs.items() if v == "not found"]
        checks = [
            (first["file"].startswith(site), f"cachekit imported from the venv ({first['file']})"),
            (not missing_libs, f"ldd finds all {len(libs)} libraries of _ffi (missing: {missing_libs or 'none'})"),
        ]
        for name in bundled:
            soname = next((k for k in libs if k == name), None)
            where = libs.get(soname or "", "")
            checks.append((where.startswith(libs_dir + os.sep), f"{name} resolves to the wheel's copy ({where})"))
        nm = subprocess.run(["nm", "-D", "--defined-only", first["ffi"]], capture_output=True, text=True).stdout
        exported = [line.split()[-1] for line in nm.splitlines() if line.strip()]
        checks.append((exported == ["PyInit__ffi"],
                       f"_ffi exports only PyInit__ffi, none of the core's symbols (linked in, kept private): {exported}"))
        bases = {b.split("-")[0] for b in bundled}
        system = [f"{k} => {v}" for k, v in libs.items()
                  if v.startswith(("/usr/lib", "/lib")) and re.split(r"[-.]", k)[0] in bases]
        checks.append((not system, f"none of {sorted(bases)} from the system ({system or 'none'})"))
        checks += [
            (first["local"] == [49, 49] and first["local_calls"] == 1, "backend=None: a miss, then a hit"),
            (first["remote"] == [{"x": 12, "square": 144}] * 2 and first["redis_calls"] == 1,
             "Redis: a miss, then a hit, the value round-trips"),
            (second["redis_calls"] == 0 and second["redis_hits"] == 2,
             f"Redis: a second process hits ({second['redis_hits']} hits, {second['redis_calls']} calls)"),
        ]
        version = re.match(r"libcachekit-([^-]+)-", os.path.basename(repaired)).group(1)
        checks.append((first["version"] == version, f"cachekit.__version__ {first['version']} == the wheel's {version}"))

        req = json.dumps({"id": 1, "op": "key.interop.typed", "namespace": "users", "operation": "get_user",
                          "args_json": [42]}) + "\n"
        harness = steps.run("harness", [py, "-m", "cachekit.harness"], input=req, env=user_env, cwd=here).stdout
        answer = json.loads(harness.strip().splitlines()[-1])
        checks.append((answer.get("ok") is True and answer.get("key") == first["interop_key"]
                       and answer["key"].startswith("users:get_user:"),
                       f"python -m cachekit.harness answers key.interop.typed ({answer})"))
        for ok, what in checks:
            if not ok:
                pyvenv.fail(what)
            print("ok:", what, flush=True)
        print(f"installed: {os.path.basename(repaired)}, {os.path.getsize(repaired) / 1e6:.2f} MB "
              f"(unrepaired {os.path.getsize(wheel) / 1e6:.2f} MB)")
    finally:
        if redis:
            redis.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    print("timing:", steps.report())
    print("python-wheel: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
