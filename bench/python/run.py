#!/usr/bin/env python3
"""Python wrapper benchmarks (B4, B7, B8py). One JSON line per case:

{"case": "B4", "figure": ns, "anchor": ns, "unit": "ns", "ratio": figure/anchor,
 "target": t, "better": "lower", "anchor_desc": "..."}

Usage: CACHEKIT_BUILD=<meson builddir> /usr/bin/python3 bench/python/run.py [B4 B7 B8py]
(CACHEKIT_BUILD defaults to build-bench, relative to the source root.) The
extension is compiled against that build tree into <builddir>/bench/python-ext.
"""
from __future__ import annotations

import functools
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import timeit

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
WRAPPER = os.path.join(ROOT, "wrappers", "python")


def setup_import() -> None:
    build = os.environ.get("CACHEKIT_BUILD", "build-bench")
    if not os.path.isabs(build):
        build = os.path.join(ROOT, build)
    out = os.path.join(build, "bench", "python-ext")
    sys.path.insert(0, WRAPPER)
    sys.path.insert(0, out)
    sys.path.insert(0, HERE)
    try:
        import cachekit._ffi  # noqa: F401
        return
    except ImportError:
        pass
    for m in [m for m in sys.modules if m == "cachekit" or m.startswith("cachekit.")]:
        del sys.modules[m]
    subprocess.run([sys.executable, os.path.join(WRAPPER, "build_ext.py"), "--build-dir", build, "--out", out,
                    "--quiet"], check=True, stdout=subprocess.DEVNULL)
    import importlib
    importlib.invalidate_caches()


def best_ns(stmt, number: int, repeat: int = 7) -> float:
    t = timeit.Timer(stmt)
    return min(t.repeat(repeat=repeat, number=number)) / number * 1e9


def best_pair(figure_stmt, anchor_stmt, number: int, repeat: int = 15) -> tuple[float, float]:
    """Best-of-`repeat` for both sides, interleaved so both see the same machine load."""
    tf, ta = timeit.Timer(figure_stmt), timeit.Timer(anchor_stmt)
    bf = ba = float("inf")
    for _ in range(repeat):
        bf = min(bf, tf.timeit(number))
        ba = min(ba, ta.timeit(number))
    return bf / number * 1e9, ba / number * 1e9


def emit(case: str, figure: float, anchor: float, target: float, desc: str, **extra) -> None:
    row = {"case": case, "figure": round(figure, 1), "anchor": round(anchor, 1), "unit": "ns",
           "ratio": round(figure / anchor, 3), "target": target, "better": "lower", "anchor_desc": desc}
    row.update(extra)
    print(json.dumps(row), flush=True)


def b4() -> None:
    from cachekit import cache

    @cache(backend=None)
    def f(x):
        return x * 2

    @functools.lru_cache(maxsize=None)
    def g(x):
        return x * 2

    f(42), g(42)
    fig, anc = best_pair(lambda: f(42), lambda: g(42), 100_000, repeat=25)
    emit("B4", fig, anc, 4.0, "functools.lru_cache hit, one int argument (same process, timeit, interleaved best of 25)")


def b7() -> None:
    import msgpack
    from cachekit import cache
    from payload import users_payload
    value = users_payload()
    packed = msgpack.packb(value, use_bin_type=True)
    tmp = tempfile.mkdtemp(prefix="ck-b7-")
    try:
        @cache(backend="file://" + tmp, namespace="b7", ttl=3600)
        def get_users(page):
            return value

        get_users(1)
        get_users(1)
        assert get_users(1) == value
        n = 2000
        fig, anc = best_pair(lambda: get_users(1), lambda: msgpack.unpackb(packed), 500)
        emit("B7", fig, anc, 1.2, f"msgpack.unpackb of the same {len(packed)}-byte payload", payload_bytes=len(packed))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def b8py() -> None:
    try:
        import redis  # Debian python3-redis
    except ImportError:
        print(json.dumps({"case": "B8py", "skipped": "redis-py (python3-redis) is not installed", "target": 1.0}))
        return
    server = shutil.which("redis-server")
    url = os.environ.get("CACHEKIT_BENCH_REDIS_URL")
    proc = None
    tmp = tempfile.mkdtemp(prefix="ck-b8-")
    if not url:
        if not server:
            print(json.dumps({"case": "B8py", "skipped": "no redis-server and no CACHEKIT_BENCH_REDIS_URL",
                              "target": 1.0}))
            return
        port = _free_port()
        proc = subprocess.Popen([server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly",
                                 "no", "--dir", tmp], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        url = f"redis://127.0.0.1:{port}/0"
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
                break
            except OSError:
                time.sleep(0.05)
    try:
        import msgpack
        from cachekit import cache
        from payload import users_payload
        value = users_payload()
        packed = msgpack.packb(value, use_bin_type=True)

        @cache(backend=url, namespace="b8", ttl=3600, l1=False)
        def get_users(page):
            return value

        get_users(1)
        assert get_users(1) == value
        r = redis.Redis.from_url(url)
        r.set("b8py:anchor", packed)
        assert msgpack.unpackb(r.get("b8py:anchor")) == value
        n = 2000
        fig, anc = best_pair(lambda: get_users(1), lambda: msgpack.unpackb(r.get("b8py:anchor")), 500)
        emit("B8py", fig, anc, 1.0, "redis-py GET + msgpack.unpackb of the same payload (same server)",
             payload_bytes=len(packed))
    finally:
        if proc is not None:
            proc.send_signal(signal.SIGTERM)
            proc.wait(5)
        shutil.rmtree(tmp, ignore_errors=True)


CASES = {"B4": b4, "B7": b7, "B8py": b8py}


def main(argv: list[str]) -> int:
    setup_import()
    wanted = argv or list(CASES)
    for c in wanted:
        if c not in CASES:
            print(f"unknown case {c!r}; known: {', '.join(CASES)}", file=sys.stderr)
            return 2
        CASES[c]()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
