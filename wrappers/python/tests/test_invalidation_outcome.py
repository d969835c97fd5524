"""invalidate_cache / ainvalidate_cache return the reference's InvalidationOutcome
(cachekit-py 0.24.1): SUCCEEDED when the L2 delete returned, FAILED when it failed
(fail-open: nothing raised), NO_L2 without an L2; None for the whole function."""
from __future__ import annotations

import asyncio
import socket

import pytest

import cachekit
from cachekit import InvalidationOutcome, cache

OK, FAILED, NO_L2 = InvalidationOutcome.SUCCEEDED, InvalidationOutcome.FAILED, InvalidationOutcome.NO_L2


def test_the_reference_enum():
    assert [(m.name, m.value) for m in InvalidationOutcome] == [
        ("SUCCEEDED", "succeeded"), ("FAILED", "failed"), ("NO_L2", "no_l2")]
    assert "InvalidationOutcome" in cachekit.__all__


def test_object_mode_is_no_l2():
    @cache(backend=None)
    def square(x):
        return x * x

    square(3)
    assert square.invalidate_cache(3) is NO_L2
    assert square.invalidate_cache() is None  # the whole function reports nothing
    assert asyncio.run(square.ainvalidate_cache(3)) is NO_L2


def test_cache_local_is_always_no_l2():
    @cache.local(ttl=30)
    def f(x):
        return x

    f(1)
    assert f.invalidate_cache(1) is NO_L2
    assert f.invalidate_cache() is NO_L2  # as the reference's local wrapper: every call


def test_zero_config_settled_in_process_is_no_l2():
    @cache
    def f(x):
        return x

    assert f.invalidate_cache(1) is NO_L2


def test_a_delete_that_returned_is_succeeded():
    calls = []

    @cache(backend="memory://", ttl=60)
    def f(x):
        calls.append(x)
        return x

    f(1)
    assert f.invalidate_cache(1) is OK
    f(1)
    assert calls == [1, 1]
    assert f.invalidate_cache() is None
    assert asyncio.run(f.ainvalidate_cache(1)) is OK


def test_async_function_outcomes():
    @cache(backend="memory://", ttl=60)
    async def f(x):
        return x

    async def run():
        await f(1)
        return await f.invalidate_cache(1), await f.ainvalidate_cache(1), await f.ainvalidate_cache()

    assert asyncio.run(run()) == (OK, OK, None)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_failed_core_delete_is_failed_not_raised():
    @cache(backend=f"redis://127.0.0.1:{_closed_port()}", ttl=60)
    def f(x):
        return x

    assert f(1) == 1  # fail-open: served uncached
    assert f.invalidate_cache(1) is FAILED
    assert asyncio.run(f.ainvalidate_cache(1)) is FAILED


class _Backend:
    def __init__(self, fail_delete: bool) -> None:
        self.data: dict = {}
        self.fail_delete = fail_delete

    def get(self, key):
        return self.data.get(key)

    def set(self, key, value, ttl=None):
        self.data[key] = value

    def delete(self, key):
        if self.fail_delete:
            raise ConnectionError("down")
        return self.data.pop(key, None) is not None

    def exists(self, key):
        return key in self.data


@pytest.mark.parametrize("fail_delete,expected", [(False, OK), (True, FAILED)], ids=["ok", "delete-raises"])
def test_a_user_backend_reports_its_own_delete(fail_delete, expected):
    b = _Backend(fail_delete)

    @cache(backend=b, ttl=60)
    def f(x):
        return x

    f(1)
    assert f.invalidate_cache(1) is expected
    assert (len(b.data) == 0) is (not fail_delete)
