"""Thread scaffolding shared by the single-flight tests (object mode and L2
mode): start callers together, poll for a state, join with a bound. The
polling limits only turn a hang into a failure; nothing waits on timing."""
from __future__ import annotations

import threading
import time


def until(pred, what, limit=30.0):
    deadline = time.monotonic() + limit
    while not pred():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.001)


def run_threads(n, target):
    """n daemon threads released together by a barrier; returns (threads,
    results, errors), filled in as each call returns or raises."""
    barrier = threading.Barrier(n)
    results, errors = [None] * n, [None] * n

    def run(i):
        barrier.wait()
        try:
            results[i] = target()
        except Exception as exc:  # noqa: BLE001 - collected for the assertions
            errors[i] = exc

    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(n)]
    for t in threads:
        t.start()
    return threads, results, errors


def join(threads):
    for t in threads:
        t.join(30)
        assert not t.is_alive()
