"""numpy 1-D array arguments are keyed as the reference SDK keys them (key_generator's
["__array_v1__", shape, dtype, blake2b-256] form). Expected keys were produced by
cachekit==0.24.1's CacheKeyGenerator().generate_key for a function with module "m",
qualname "f", namespace "ns", args (arr,) and kwargs {"b": arr}. Only these tests
skip when numpy is absent."""
from __future__ import annotations

import pytest

np = pytest.importorskip("numpy")

from cachekit import _codec, cache  # noqa: E402

REFERENCE = [
    (lambda: np.arange(5, dtype=np.int32),
     "ns:ns:func:m.f:args:1be70eb45ab6a132b3d2badb80b750c73ff7a05e1f7519f4697f36128e823eaa:1s"),
    (lambda: np.array([1.5, -0.0], dtype=">f8"),  # big-endian: hashed as little-endian
     "ns:ns:func:m.f:args:49446b2f462825819cf952b6803d535d5186963ea9127020525268e55c08cad1:1s"),
    (lambda: np.arange(3, dtype=np.int64)[::2],  # not contiguous: hashed in C order
     "ns:ns:func:m.f:args:bd9c3da502d8b9674699eca24addb8f4107aa6c8d0b16604d6a37150dedfd7de:1s"),
]


@pytest.mark.parametrize("make,expected", REFERENCE, ids=["int32", "float64-big-endian", "int64-strided"])
def test_array_keys_equal_the_reference(make, expected):
    arr = make()
    assert _codec.key_auto("ns", "m", "f", _codec.pack_auto_args((arr,), {"b": arr}), True, "default") == expected


@pytest.mark.parametrize("arr", [np.zeros((2, 2), dtype=np.int64), np.zeros(3, dtype=np.int16),
                                 np.zeros(100_001 // 8 + 1, dtype=np.float64)], ids=["2-D", "int16", "too-big"])
def test_arrays_the_reference_refuses_run_uncached(arr):
    with pytest.raises(_codec.UnsupportedArgument):
        _codec.pack_auto_args((arr,), {})


def test_the_aggregate_bound_counts_every_array_of_one_call():
    arr = np.zeros(12_000, dtype=np.float64)  # 96,000 bytes: under the per-array bound
    _codec.pack_auto_args(tuple([arr] * 52), {})  # 4,992,000 bytes
    with pytest.raises(_codec.UnsupportedArgument):
        _codec.pack_auto_args(tuple([arr] * 53), {})
    _codec.pack_auto_args((arr,), {})  # the count starts again with each key


def test_a_decorated_function_caches_array_calls(memory_backend):
    calls = []

    @cache(backend=memory_backend, ttl=60)
    def total(a):
        calls.append(1)
        return float(a.sum())

    assert total(np.arange(4, dtype=np.int64)) == 6.0
    assert total(np.arange(4, dtype=np.int64)) == 6.0
    assert total(np.arange(5, dtype=np.int64)) == 10.0
    assert len(calls) == 2
