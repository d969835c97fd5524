"""File-backend TTLs as the reference 0.24.1's file backend keeps them (issue 28).

The file header holds the expiry in whole Unix seconds (protocol.md section 7). The
core writes `int(now + ttl)`, as the reference does, so an entry never outlives its
TTL: a ttl=1 entry is gone 1 s after its write (it used to be rounded up, living up
to 2 s), and a sub-second TTL is honoured. The writer's L1 keeps the exact TTL in
milliseconds. Each check sleeps past the TTL and then asserts what a call does."""
from __future__ import annotations

import os
import struct
import time
import uuid

import pytest

from cachekit import cache


def _entries(d: str) -> list[str]:
    return [os.path.join(d, n) for n in os.listdir(d) if len(n) == 32 and ".tmp." not in n]


def _counted(tmp_path, ttl, l1):
    calls = []

    def f(x):
        calls.append(x)
        return [x, len(calls)]

    f.__qualname__ = "ttl_" + uuid.uuid4().hex
    return cache(backend=str(tmp_path), ttl=ttl, l1_enabled=l1)(f), calls


@pytest.mark.parametrize("l1", [True, False], ids=["l1", "no-l1"])
@pytest.mark.parametrize("ttl", [1, 0.4], ids=["1s", "0.4s"])
def test_an_entry_is_gone_once_its_ttl_has_passed(tmp_path, ttl, l1):
    f, calls = _counted(tmp_path, ttl, l1)
    t0 = time.time()
    assert f(1) == [1, 1]
    time.sleep(max(0.0, t0 + ttl + 0.05 - time.time()))
    assert f(1) == [1, 2]  # recomputed: no copy outlived the TTL, in L1 or in the file
    assert calls == [1, 1]


def test_the_writers_l1_serves_the_exact_ttl(tmp_path):
    f, calls = _counted(tmp_path, 0.6, True)
    assert f(2) == [2, 1]
    assert f(2) == [2, 1]  # within the TTL: an L1 hit, whatever second the file's expiry fell in
    assert f.cache_info().l1_hits == 1


def test_the_header_expiry_is_the_references_int_of_now_plus_ttl(tmp_path):
    f, _ = _counted(tmp_path, 30, False)
    before = time.time()
    f(3)
    after = time.time()
    (path,) = _entries(str(tmp_path))
    with open(path, "rb") as fh:
        header = fh.read(14)
    (expiry,) = struct.unpack(">Q", header[6:14])
    assert header[:3] == b"CK\x01"
    assert int(before + 30) <= expiry <= int(after + 30)  # the reference's int(time.time() + ttl)
