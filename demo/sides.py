"""Building the demo's four programs: each build returns the command that runs
its side, or None with the reason it cannot (printed, never silent)."""
from __future__ import annotations

import os
import shutil
import subprocess
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


class Skip(Exception):
    """A side that cannot be built here, with the reason."""


def progress(message: str) -> None:
    print(f"[demo] {message}", flush=True)


def step(label: str, fn, *args):
    """Run one build step between two progress lines; Skip is reported, not raised."""
    start = time.monotonic()
    progress(f"{label} ...")
    try:
        result = fn(*args)
    except Skip as why:
        progress(f"{label}: SKIPPED: {why}")
        return None
    except RuntimeError as failure:
        raise SystemExit(f"[demo] {label}: FAILED: {failure}") from None
    progress(f"{label}: done ({time.monotonic() - start:.1f} s)")
    return result


def tool(name: str, fallback: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    return fallback if os.access(fallback, os.X_OK) else None


def build_env(build_dir: str) -> dict:
    env = dict(os.environ)
    pc = os.path.join(build_dir, "meson-uninstalled")
    env["PKG_CONFIG_PATH"] = pc + (os.pathsep + env["PKG_CONFIG_PATH"] if env.get("PKG_CONFIG_PATH") else "")
    env["CACHEKIT_SYSTEM"] = "1"  # Rust: the build tree's library, not the bundled core
    env["LD_LIBRARY_PATH"] = os.path.join(build_dir, "src") + (
        os.pathsep + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    return env


def run_build(cmd: list[str], cwd: str, env: dict, what: str, offline_hint: str | None = None) -> str:
    r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        out = (r.stdout + r.stderr)[-3000:]
        if "because --locked was passed" in out:  # a stale lock file, whose message says "network" too
            raise RuntimeError(f"{what}: the lock file is out of date with the crates it builds\n{out}")
        if offline_hint and any(w in out.lower() for w in
                                ("could not resolve", "failed to download", "network", "timed out",
                                 "dial tcp", "connection refused", "failed to get", "failed to query")):
            raise Skip(f"{offline_hint}\n{out}")
        raise RuntimeError(f"{what} failed: {' '.join(cmd)}\n{out}")
    return r.stdout


def c_side(build_dir: str) -> list[str]:
    exe = os.path.join(build_dir, "demo", "get_user")
    if not os.access(exe, os.X_OK):
        raise RuntimeError(f"{exe} is missing: build the meson tree first (ninja -C {build_dir})")
    return [exe]


def python_side(build_dir: str, ext_dir: str) -> list[str]:
    """The cffi extension for this build tree into ext_dir, rebuilt when the
    library or the extension's sources are newer than it (it must match them)."""
    probe = subprocess.run(["/usr/bin/python3", "-c", "import cffi, msgpack"], capture_output=True)
    if probe.returncode != 0:
        raise Skip("/usr/bin/python3 lacks cffi or msgpack (apt-get install python3-cffi python3-msgpack)")
    if _stale(ext_dir, build_dir):
        run_build(["/usr/bin/python3", os.path.join(ROOT, "wrappers", "python", "build_ext.py"),
                   "--build-dir", build_dir, "--out", ext_dir, "--quiet"], ROOT, build_env(build_dir),
                  "the Python extension")
    return ["/usr/bin/python3", os.path.join(HERE, "python", "get_user.py")]


def _stale(ext_dir: str, build_dir: str) -> bool:
    pkg = os.path.join(ROOT, "wrappers", "python", "cachekit")
    inputs = [os.path.join(build_dir, "src", "libcachekit.so"), os.path.join(ROOT, "include", "cachekit", "cachekit.h"),
              os.path.join(pkg, "_build_ffi.py"), os.path.join(pkg, "_fastpath.c")]
    built = [os.path.join(ext_dir, "cachekit", f) for f in os.listdir(os.path.join(ext_dir, "cachekit"))
             if f.endswith(".so")] if os.path.isdir(os.path.join(ext_dir, "cachekit")) else []
    if len(built) < 2:  # _ffi and _fastpath
        return True
    return max(os.path.getmtime(f) for f in inputs if os.path.exists(f)) > min(map(os.path.getmtime, built))


def rust_side(build_dir: str, target_dir: str, release: bool) -> list[str]:
    cargo = tool("cargo", os.path.expanduser("~/.cargo/bin/cargo"))
    if cargo is None:
        raise Skip("cargo not found on PATH or in ~/.cargo/bin (install a Rust toolchain with rustup)")
    env = build_env(build_dir)
    env["CARGO_TARGET_DIR"] = target_dir
    env["CARGO_TERM_COLOR"] = "never"
    env["PATH"] = os.path.dirname(cargo) + os.pathsep + env.get("PATH", "")
    crate = os.path.join(HERE, "rust")
    run_build([cargo, "fetch", "--locked"], crate, env, "cargo fetch",
              "crates.io cannot be reached for the pinned dependencies (demo/rust/Cargo.lock)")
    run_build([cargo, "build", "--locked", "--quiet"] + (["--release"] if release else []), crate, env,
              "cargo build")
    return [os.path.join(target_dir, "release" if release else "debug", "get_user")]


def go_side(build_dir: str, out_dir: str) -> list[str]:
    go = tool("go", "/usr/local/go/bin/go")
    if go is None:
        raise Skip("go not found on PATH or at /usr/local/go/bin/go (install Go >= 1.22)")
    env = build_env(build_dir)
    env["CGO_ENABLED"] = "1"
    # Go's build cache does not key a cgo package on pkg-config's answer: name the library dir.
    env["CGO_LDFLAGS"] = f"-L{os.path.join(build_dir, 'src')} " + env.get("CGO_LDFLAGS", "-O2 -g")
    env["GOFLAGS"] = "-mod=readonly -tags=cachekit_system"  # this build's library, not the bundled core
    exe = os.path.join(out_dir, "get_user_go")
    run_build([go, "build", "-o", exe, "."], os.path.join(HERE, "go"), env, "go build",
              "the Go module proxy cannot be reached for the pinned modules (demo/go/go.sum)")
    return [exe]
