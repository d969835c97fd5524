"""Stale-while-revalidate: with an L2 off unless `stale_while_revalidate=True` (the
reference 0.24 recomputes only at expiry there), `swr_enabled` for object mode, and
one bounded refresh pool per decorated function in every mode."""
from __future__ import annotations

import threading
import time

from thread_helpers import until as _until

from cachekit import cache
from cachekit._refresh import _REFRESH_PENDING, _REFRESH_WORKERS


def _stale_soon(**opts):
    calls = []

    @cache(ttl=1.0, swr_threshold_ratio=0.1, **opts)
    def get(x):
        calls.append(x)
        return len(calls)

    return get, calls


def test_l2_mode_default_recomputes_only_at_expiry():
    # As the reference 0.24: no background refresh ahead of expiry, whatever swr_enabled says
    # (the reference's L1CacheConfig.swr_enabled is its L1-only mode's).
    for opts in ({}, {"swr_enabled": True}):
        get, calls = _stale_soon(backend="memory://", namespace=f"swrdef{len(opts)}", **opts)
        assert get._cachekit.core_spec[1]["swr"] is False
        assert get(1) == 1
        time.sleep(0.25)  # past ttl x ratio (+-10 %), well before the TTL
        assert get(1) == 1
        time.sleep(0.2)
        assert get(1) == 1 and calls == [1]  # no refresh ran
        _until(lambda: get(1) == 2, "the recompute at expiry")


def test_l2_mode_refreshes_with_stale_while_revalidate():
    get, calls = _stale_soon(backend="memory://", namespace="swron", stale_while_revalidate=True)
    assert get(1) == 1
    time.sleep(0.25)  # past ttl x ratio (+-10 %), well before the TTL
    assert get(1) == 1  # stale: served, refreshed in the background
    _until(lambda: len(calls) == 2, "the refresh")
    _until(lambda: get(1) == 2, "the refreshed value")


def test_l2_mode_swr_disabled_never_refreshes():
    get, calls = _stale_soon(backend="memory://", namespace="swroff", swr_enabled=False)
    assert get(1) == 1
    time.sleep(0.25)
    assert get(1) == 1
    time.sleep(0.2)
    assert calls == [1]


def test_refreshes_share_one_bounded_pool():
    gate = threading.Event()
    calls, refreshers = [], []

    @cache(backend=None, ttl=5.0, swr_threshold_ratio=0.1)
    def get(x):
        calls.append(x)
        if len(calls) > 100:
            refreshers.append(threading.get_ident())
            assert gate.wait(30)
        return x

    try:
        for i in range(100):
            get(i)
        time.sleep(0.6)  # every entry is stale now
        for i in range(100):
            assert get(i) == i  # served stale, at once
        state = get._cachekit
        assert state.refresh_pending == _REFRESH_PENDING  # the rest were not queued
        _until(lambda: len(refreshers) == _REFRESH_WORKERS, "the pool's threads at work")
        time.sleep(0.1)
        assert len(refreshers) == _REFRESH_WORKERS  # the other refreshes wait in the queue
    finally:
        gate.set()
    _until(lambda: get._cachekit.refresh_pending == 0, "the queued refreshes")
    assert len(calls) == 100 + _REFRESH_PENDING
