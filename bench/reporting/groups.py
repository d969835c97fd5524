"""The benchmark cases bench/report runs, grouped the way bench/run runs them (one
Google Benchmark binary, or one external runner), each group with the check of its
prerequisites: a group whose prerequisite is missing is reported as skipped, with why."""
from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.dirname(HERE)


def load_bench_run():
    """bench/run as a module (it is a script without a .py suffix)."""
    loader = importlib.machinery.SourceFileLoader("bench_run", os.path.join(BENCH, "run"))
    spec = importlib.util.spec_from_loader("bench_run", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def _tool(name: str, fallback: str) -> str | None:
    return None if (shutil.which(name) or os.path.exists(fallback)) else f"{name} is not installed"


def _redis() -> str | None:
    return None if shutil.which("redis-server") else "redis-server is not installed"


NEEDS_REDIS = ("redis/", "cache/cache_redis_bench", "cache/coherence_bench", "cluster/")


def groups() -> list[tuple[list[str], callable]]:
    """[(case ids, prerequisite check returning the reason to skip or None)]: the
    Google Benchmark binaries first (E, B, H, C, KR), then the external runners."""
    run = load_bench_run()
    out = []
    by_binary: dict[str, list[str]] = {}
    for c in run.CASES:
        by_binary.setdefault(c.binary, []).append(c.id)
    for binary, ids in by_binary.items():
        check = _redis if binary.startswith(NEEDS_REDIS) else (lambda: None)
        out.append((ids, check))
    for ids, runner in run.EXTERNAL_RUNNERS:
        name = getattr(runner, "__name__", "")
        if name == "run_go":
            check = lambda: _tool("go", "/usr/local/go/bin/go")  # noqa: E731
        elif name == "run_rust":
            check = lambda: _tool("cargo", os.path.expanduser("~/.cargo/bin/cargo"))  # noqa: E731
        else:
            check = lambda: None  # noqa: E731  (the Python runners print their own skips)
        out.append((list(ids), check))
    return out


def all_ids() -> list[str]:
    return [i for ids, _ in groups() for i in ids]
