"""A user-defined backend (the reference's BaseBackend protocol: get/set/delete/
exists) as the L2: it sees the keys and the bytes the core would store in its
own backend, values come back verified (and decrypted), failures degrade."""
from __future__ import annotations

import asyncio
import threading
from typing import Optional

import pytest

from cachekit import Backend, BackendError, cache

KEY = "4d" * 32


class DictBackend:
    """The reference's BaseBackend shape, in a dict."""

    def __init__(self) -> None:
        self.data: dict[str, bytes] = {}
        self.ttls: dict[str, Optional[int]] = {}
        self.ops: list[tuple[str, str]] = []
        self.lock = threading.Lock()

    def get(self, key: str) -> Optional[bytes]:
        with self.lock:
            self.ops.append(("get", key))
            return self.data.get(key)

    def set(self, key: str, value: bytes, ttl: Optional[int] = None) -> None:
        assert isinstance(key, str) and isinstance(value, bytes)
        with self.lock:
            self.ops.append(("set", key))
            self.data[key] = value
            self.ttls[key] = ttl

    def delete(self, key: str) -> bool:
        with self.lock:
            self.ops.append(("delete", key))
            return self.data.pop(key, None) is not None

    def exists(self, key: str) -> bool:
        return key in self.data


def fn_pair(**kw):
    """The same function decorated twice: with the user's backend and with a core memory:// backend."""
    calls = []

    def lookup(x):
        calls.append(x)
        return {"x": x, "items": [1, 2, 3]}

    return lookup, calls


def test_keys_and_bytes_are_what_the_core_stores():
    user, ref = DictBackend(), Backend("memory://")
    f, calls = fn_pair()
    g = cache(backend=user, ttl=60, namespace="ub")(f)
    r = cache(backend=ref, ttl=60, namespace="ub")(f)
    assert g(7) == {"x": 7, "items": [1, 2, 3]}
    r(7)
    (key,) = user.data
    assert key == g._cachekit.cached_key((7,), {}).decode()
    assert user.data[key] == ref.get(key)  # byte-identical (no encryption: deterministic)
    assert user.ttls[key] == 60


def test_hits_come_from_the_user_backend_and_invalidation_deletes():
    user = DictBackend()
    f, calls = fn_pair()
    g = cache(backend=user, ttl=60, l1=False)(f)
    assert g(1) == g(1) == {"x": 1, "items": [1, 2, 3]}
    assert calls == [1]
    assert g.cache_info().l2_hits == 1
    # Another process's entry (written straight into the backend) is read.
    h = cache(backend=user, ttl=60)(f)
    assert h(1) == {"x": 1, "items": [1, 2, 3]} and calls == [1]
    g.invalidate_cache(1)
    assert not user.data
    g(1)
    assert calls == [1, 1]


def test_a_corrupt_entry_is_a_miss_that_is_replaced():
    user = DictBackend()
    f, calls = fn_pair()
    g = cache(backend=user, ttl=60, l1=False)(f)
    g(2)
    (key,) = user.data
    hdr = 7 + int.from_bytes(user.data[key][3:7], "big")  # CK v3: the envelope follows the JSON header
    data = bytearray(user.data[key])
    data[hdr + 4] ^= 0xFF  # inside the compressed block: the checksum fails
    user.data[key] = bytes(data)
    assert g(2) == {"x": 2, "items": [1, 2, 3]} and calls == [2, 2]
    assert g(2) and calls == [2, 2]


def test_encrypted_values_are_sealed_in_the_user_backend():
    user = DictBackend()
    f, calls = fn_pair()
    g = cache(backend=user, ttl=60, encryption=True, master_key=KEY, l1=False)(f)
    g(3)
    (blob,) = user.data.values()
    assert b"items" not in blob
    assert g(3) == {"x": 3, "items": [1, 2, 3]} and calls == [3]


def test_a_failing_user_backend_degrades_or_raises_when_fail_closed():
    class Broken(DictBackend):
        def get(self, key):
            raise ConnectionError("down")

        def set(self, key, value, ttl=None):
            raise ConnectionError("down")

    f, calls = fn_pair()
    g = cache(backend=Broken(), ttl=60, l1=False)(f)
    assert g(1) == g(1) and calls == [1, 1]
    h = cache(backend=Broken(), ttl=60, l1=False, fail_closed=True)(f)
    with pytest.raises(BackendError, match="user backend get failed"):
        h(1)


def test_key_prefix_of_the_user_backend_is_bound_like_the_reference():
    class Prefixed(DictBackend):
        key_prefix = "app:"

    user = Prefixed()
    f, calls = fn_pair()
    g = cache(backend=user, ttl=60, l1=False, encryption=True, master_key=KEY)(f)
    g(1)
    assert list(user.data) == [g._cachekit.cached_key((1,), {}).decode()]  # the backend adds its own prefix
    assert g(1) and calls == [1]


def test_a_coroutine_function_with_a_user_backend():
    user = DictBackend()
    calls = []

    @cache(backend=user, ttl=60, l1=False)
    async def load(x):
        calls.append(x)
        await asyncio.sleep(0)
        return [x]

    async def main():
        assert await load(5) == [5]
        assert await load(5) == [5]

    asyncio.run(main())
    assert calls == [5] and len(user.data) == 1


def test_an_invalidation_during_a_read_keeps_the_entry_it_raced_out_of_l1():
    class Slow(DictBackend):
        """get() pauses once, after reading, while the test invalidates the key."""

        def __init__(self) -> None:
            super().__init__()
            self.reading = threading.Event()
            self.go_on = threading.Event()
            self.pause = False

        def get(self, key):
            value = super().get(key)
            if self.pause:
                self.pause = False
                self.reading.set()
                self.go_on.wait(10)
            return value

    user = Slow()
    f, calls = fn_pair()
    g = cache(backend=user, ttl=60)(f)
    g(1)
    from cachekit._core import CoreCache
    # Out of L1 only (the object keeps it): the next call reads the object.
    CoreCache.invalidate(g._cachekit.core, g._cachekit.ns_bytes, g._cachekit.cached_key((1,), {}))
    user.pause = True
    reader = threading.Thread(target=g, args=(1,))
    reader.start()
    assert user.reading.wait(10)
    g.invalidate_cache(1)  # while the reader holds the entry's old bytes
    user.go_on.set()
    reader.join(10)
    assert calls == [1]  # the reader was served the entry it read
    g(1)  # not served from an L1 copy of the invalidated entry: recomputed
    assert calls == [1, 1]
