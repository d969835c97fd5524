"""A coroutine function's leader hands its core load claim back however it
leaves: cancelled while its L2 read runs on the executor (the read goes on
and takes the claim after the task is gone), cancelled in the function,
closed. No claim stays held, each counts as a load error, and the next
caller computes the value (issue 25)."""
from __future__ import annotations

import asyncio
import threading
import time
import uuid
from typing import Optional

import pytest

from cachekit import cache

LEADERS = 120


class GatedBackend:
    """A user backend (the reference's BaseBackend shape) whose reads wait on
    `gate` while it is closed, so a test can cancel a leader mid-read."""

    def __init__(self) -> None:
        self.data: dict[str, bytes] = {}
        self.lock = threading.Lock()
        self.gate = threading.Event()
        self.gate.set()
        self.reads_entered = 0

    def get(self, key: str) -> Optional[bytes]:
        with self.lock:
            self.reads_entered += 1
        self.gate.wait()
        with self.lock:
            return self.data.get(key)

    def set(self, key: str, value: bytes, ttl: Optional[int] = None) -> None:
        with self.lock:
            self.data[key] = value

    def delete(self, key: str) -> bool:
        with self.lock:
            return self.data.pop(key, None) is not None

    def exists(self, key: str) -> bool:
        with self.lock:
            return key in self.data


async def _until(pred, what: str, limit: float = 30.0) -> None:
    end = time.monotonic() + limit
    while not pred():
        assert time.monotonic() < end, f"timed out waiting for {what}"
        await asyncio.sleep(0.001)


def _decorated(backend: GatedBackend):
    calls = []

    @cache(backend=backend, ttl=60, namespace="aclaim" + uuid.uuid4().hex[:8])
    async def lookup(x):
        calls.append(x)
        await asyncio.sleep(0)
        return {"x": x}

    return lookup, calls


def _core_of(fn):
    state = fn._cachekit
    return state._core or state.build_core(), state.ns_bytes


def test_leaders_cancelled_during_their_l2_read_release_their_claims():
    backend = GatedBackend()
    lookup, calls = _decorated(backend)

    async def main():
        core, ns = _core_of(lookup)
        for i in range(LEADERS):
            backend.gate.clear()
            entered = backend.reads_entered
            task = asyncio.ensure_future(lookup(i))
            await _until(lambda: backend.reads_entered > entered, f"leader {i}'s L2 read")
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            backend.gate.set()  # the read finishes after its task is gone and takes a claim
        # Each read ends on the executor after its task is gone: its claim
        # abandoned there is a load error (the unfixed wrapper leaked them all).
        await _until(lambda: core.stats(ns)["load_errors"] >= LEADERS, "the cancelled leaders' load errors", 20.0)
        assert core.stats(ns)["load_errors"] == LEADERS
        assert core.claims_held() == 0
        assert calls == []
        assert await lookup(0) == {"x": 0}  # the next caller computes (and stores) the value
        assert calls == [0]
        assert core.claims_held() == 0
        assert await lookup(0) == {"x": 0}
        assert calls == [0]

    asyncio.run(main())


def test_leader_cancelled_in_the_function_releases_its_claim():
    backend = GatedBackend()
    started = []

    @cache(backend=backend, ttl=60, namespace="aclaimfn" + uuid.uuid4().hex[:8])
    async def slow(x):
        started.append(x)
        await asyncio.sleep(3600)

    async def main():
        core, ns = _core_of(slow)
        tasks = [asyncio.ensure_future(slow(i)) for i in range(LEADERS)]
        await _until(lambda: len(started) == LEADERS, "every leader to run its function")
        assert core.claims_held() == LEADERS
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        assert core.claims_held() == 0
        assert core.stats(ns)["load_errors"] == LEADERS

    asyncio.run(main())


@pytest.mark.parametrize("where", ["read", "function"])
def test_closed_leader_releases_its_claim(where):
    """The caller closed (GeneratorExit) while its load reads L2 or runs the function:
    nobody else awaits the load, so it is cancelled and hands its claim back."""
    backend = GatedBackend()
    started = []

    @cache(backend=backend, ttl=60, namespace="aclaimclose" + uuid.uuid4().hex[:8])
    async def parked(x):
        started.append(x)
        await asyncio.sleep(3600)

    async def main():
        core, ns = _core_of(parked)
        if where == "read":
            backend.gate.clear()
        # Driven by hand, so it can be closed (GeneratorExit) at its await of the load.
        coro = parked(1)
        coro.send(None)
        if where == "read":
            await _until(lambda: backend.reads_entered == 1, "the load's L2 read")
        else:
            await _until(lambda: started == [1], "the function")
            assert core.claims_held() == 1
        coro.close()
        backend.gate.set()  # the read goes on, and its claim is handed back once it ends
        await _until(lambda: core.claims_held() == 0, "the claim handed back")
        await _until(lambda: core.stats(ns)["load_errors"] == 1, "the load error")
        assert not parked._cachekit.aflights

    asyncio.run(main())
