"""The prefork pattern (gunicorn --preload, Celery prefork, uWSGI): a cache built and
used before fork() serves every worker. Workers must never share a nonce sequence or
a Redis connection with their parent or each other."""
from __future__ import annotations

import os
import struct

import pytest

from cachekit import Backend, cache

KEY = "5a" * 32
WORKERS = 4
SEALS_PER_PROCESS = 10_000


@pytest.fixture(autouse=True)
def _patient_redis(monkeypatch):
    """Every entry must land: with the fail-fast default (250 ms per command), a
    loaded machine's stall is a timeout, and a fail-open cache skips that store
    (and its breaker may skip the next ones). The workers inherit this."""
    monkeypatch.setenv("CACHEKIT_SOCKET_TIMEOUT", "10")


def _nonce_of(stored: bytes) -> bytes:
    # A CK v3 frame: "CK" 03 u32be(header length) header payload; an encrypted
    # payload is nonce(12) || ciphertext || tag(16).
    assert stored[:3] == b"CK\x03", stored[:16]
    (hlen,) = struct.unpack(">I", stored[3:7])
    payload = stored[7 + hlen:]
    assert b'"encrypted":true' in stored[7:7 + hlen].replace(b" ", b"")
    return payload[:12]


def _work(fn, worker: int, count: int) -> str | None:
    """Store `count` values, each read back through Redis; the first wrong answer, if any."""
    for i in range(count):
        first = fn(worker, i)
        again = fn(worker, i)
        if first != {"w": worker, "i": i} or again != first:
            return f"worker {worker} call {i}: got {first!r} then {again!r}"
    return None


def _fork_workers(lookup, child_check=None) -> list[str]:
    """Fork WORKERS children that each run _work (after child_check(), whose
    complaint, if any, is their report) while the parent does too; their reports."""
    children = []
    for worker in range(WORKERS):
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - runs in the child
            os.close(read_end)
            status = 1
            try:
                problem = child_check() if child_check else None
                problem = problem or _work(lookup, worker, SEALS_PER_PROCESS)
                os.write(write_end, (problem or "ok").encode())
                status = 0
            finally:
                os._exit(status)
        os.close(write_end)
        children.append((pid, read_end))

    # The parent keeps working on its connections while the children run.
    parent_problem = _work(lookup, WORKERS, SEALS_PER_PROCESS)

    reports = []
    for pid, read_end in children:
        with os.fdopen(read_end, "rb") as f:
            reports.append(f.read().decode())
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
    assert parent_problem is None
    return reports


def _assert_distinct_nonces(lookup, url: str) -> None:
    raw = Backend(url, command_timeout_ms=10_000, fail_closed=True)  # a timeout raises, never reads as a miss
    nonces = set()
    for worker in range(WORKERS + 1):
        for i in range(SEALS_PER_PROCESS):
            stored = raw.get(lookup._cachekit.key_for((worker, i), {}))
            assert stored is not None, (worker, i)
            nonces.add(_nonce_of(stored))
    assert len(nonces) == (WORKERS + 1) * SEALS_PER_PROCESS


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
def test_forked_workers_seal_distinct_nonces_and_never_cross_replies(redis_server, unique_ns):
    @cache(backend=redis_server.url, namespace=unique_ns, encryption=True, master_key=KEY, l1=False, ttl=600)
    def lookup(worker: int, i: int) -> dict:
        return {"w": worker, "i": i}

    # The parent uses the cache first, so its core (keyring, Redis pool) exists
    # before the fork: each child must build its own, never use the parent's.
    assert lookup(-1, 0) == {"w": -1, "i": 0}
    parent_core = lookup._cachekit.core

    def child_check() -> str | None:
        if lookup._cachekit._core is not None:
            return "the child kept the parent's core"
        lookup(-2, os.getpid())
        if lookup._cachekit.core is parent_core or lookup._cachekit.core is None:
            return "the child did not build a core of its own"
        return None

    assert _fork_workers(lookup, child_check) == ["ok"] * WORKERS
    assert lookup._cachekit.core is parent_core
    _assert_distinct_nonces(lookup, redis_server.url)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
def test_prefork_decorated_at_import_builds_one_core_per_worker(redis_server, unique_ns):
    """gunicorn --preload: decorated in the parent (as at import), never called
    there before the fork; every worker builds its core on first use."""
    from cachekit import _cores

    @cache(backend=redis_server.url, namespace=unique_ns, encryption=True, master_key=KEY, l1=False, ttl=600)
    def lookup(worker: int, i: int) -> dict:
        return {"w": worker, "i": i}

    # Decoration checked the configuration with a core it freed at once: none is kept.
    assert lookup._cachekit._core is None
    assert not _cores.all_core_caches()

    def child_check() -> str | None:
        return "a core came from the parent" if _cores.all_core_caches() else None

    assert _fork_workers(lookup, child_check) == ["ok"] * WORKERS
    _assert_distinct_nonces(lookup, redis_server.url)


def test_a_core_of_another_process_is_never_handed_out(monkeypatch):
    """The pid check behind the fork hook: a table of cores built by another
    process (a fork that ran no hook) is dropped, not used."""
    from cachekit import _cores

    @cache(backend="memory://", namespace="pidcheck")
    def f(x):
        return x

    f(1)
    first = f._cachekit.core
    monkeypatch.setattr(_cores, "_handles_pid", -1)
    assert _cores.all_core_caches() == []
    assert f._cachekit._core is first  # the hook, not this check, clears the functions' cores
    f._cachekit._core = None
    f(1)
    assert f._cachekit.core is not first and _cores._handles_pid == os.getpid()
