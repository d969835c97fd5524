"""Temporal values through the L2 beyond the three whole-second UTC
sentinels wire-format.json pins (tests/conformance/requirement_coverage.json,
WIRE-20): a datetime with a non-UTC offset and microseconds, a naive one, a
date and a time are written as the reference's sentinel maps and revived as
the same values, offset and digits included."""
from __future__ import annotations

import datetime as dt

from cachekit import Backend, cache

OFFSET = dt.timezone(dt.timedelta(hours=5, minutes=30))
VALUES = {
    "aware": dt.datetime(2026, 1, 2, 3, 4, 5, 123456, tzinfo=OFFSET),
    "west": dt.datetime(1999, 12, 31, 23, 59, 59, 1, tzinfo=dt.timezone(dt.timedelta(hours=-8))),
    "naive": dt.datetime(2026, 1, 2, 3, 4, 5, 999999),
    "date": dt.date(2026, 2, 3),
    "time": dt.time(4, 5, 6, 789),
}


def test_temporal_values_revive_with_their_offset_and_digits():
    backend = Backend("memory://")
    calls = []

    def f(x):
        calls.append(x)
        return VALUES

    g = cache(backend=backend, namespace="temporal", l1=False)(f)
    g(1)
    payload, _ = g._cachekit.core.get(g._cachekit.ns_bytes, g._cachekit.cached_key((1,), {}))
    payload = bytes(payload)  # the MessagePack inside the frame's envelope
    assert b"__datetime__" in payload and b"2026-01-02T03:04:05.123456+05:30" in payload
    assert b"__date__" in payload and b"__time__" in payload
    back = g(1)
    assert calls == [1]  # the second call is an L2 hit
    assert back == VALUES
    for name, value in VALUES.items():
        assert type(back[name]) is type(value)
        if isinstance(value, dt.datetime):
            assert back[name].utcoffset() == value.utcoffset() and back[name].microsecond == value.microsecond
