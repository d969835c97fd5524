"""What bench/report records about where it ran: the machine (CPU model, cores, kernel,
load average) and the versions of the anchors the cases compare against."""
from __future__ import annotations

import datetime
import os
import platform
import re
import shutil
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def machine() -> dict:
    return {"cpu": cpu_model(), "cores": os.cpu_count(), "kernel": platform.release(),
            "load_start": load_average(),
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}


def _out(cmd: list[str]) -> str:
    if not shutil.which(cmd[0]) and not os.path.exists(cmd[0]):
        return ""
    r = subprocess.run(cmd, capture_output=True, text=True)
    return (r.stdout or r.stderr).strip() if r.returncode == 0 else ""


def _grep(path: str, pattern: str) -> str:
    try:
        with open(os.path.join(ROOT, path)) as f:
            m = re.search(pattern, f.read(), re.M)
        return m.group(1) if m else ""
    except OSError:
        return ""


def versions() -> dict:
    """The anchors' versions, each read from where the benchmarks pin or find it."""
    v = {
        "reference SDK (PyPI cachekit)": _grep("tests/interop/requirements-reference.txt", r"^cachekit==(\S+)"),
        "cachekit-rs": _grep("bench/rust/Cargo.lock", r'name = "cachekit-rs"\nversion = "([^"]+)"'),
        "cached (Rust)": _grep("bench/rust/Cargo.lock", r'name = "cached"\nversion = "([^"]+)"'),
        "go-redis": _grep("wrappers/go/bench/go.mod", r"github.com/redis/go-redis/v9 (\S+)"),
        "redis-py (reference SDK)": _grep("tests/interop/requirements-reference.txt", r"^redis==(\S+)"),
    }
    for lib in ("hiredis", "liblz4", "libsodium", "libxxhash", "benchmark"):
        v[lib] = _out(["pkg-config", "--modversion", lib])
    server = re.search(r"v=(\S+)", _out(["redis-server", "--version"]))
    v["redis-server"] = server.group(1) if server else ""
    v["gcc"] = _out(["gcc", "-dumpfullversion"])
    # the Python the Python cases run under (bench/run uses Debian's)
    v["python"] = _out(["/usr/bin/python3", "--version"]).replace("Python ", "") or platform.python_version()
    go = shutil.which("go") or "/usr/local/go/bin/go"
    v["go"] = _out([go, "env", "GOVERSION"]) if os.path.exists(go) else ""
    rustc = shutil.which("rustc") or os.path.expanduser("~/.cargo/bin/rustc")
    v["rustc"] = _out([rustc, "--version"]).replace("rustc ", "").split(" ")[0] if os.path.exists(rustc) else ""
    return {k: val for k, val in v.items() if val}
