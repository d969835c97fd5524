"""The package's public decoders against hostile documents (issue 25): every
decode-bounds.json vector, then a deterministic mutation run seeded with them
(bits flipped, cuts, widest headers inserted, runs repeated). The interop reader
must refuse every reject vector with the core's named error and read every
accept vector; what the core's check accepts goes through the standard and auto
decoders too (as in the cache). No decoder may raise anything but a decode
error, and none may crash or exhaust memory (the run would end)."""
from __future__ import annotations

import random

import msgpack
import pytest

from cachekit import _codec
from cachekit._core import CacheKitError
from conftest import load_vectors, vector_params

FILE = "decode-bounds.json"
MUTATIONS = 200
WIDE = bytes([0xdd, 0xdf, 0xdb, 0xc6, 0xc9, 0xdc, 0xde, 0xda, 0xc5, 0xc8])  # widest counts and lengths
# What a refused document may raise: the core's errors, msgpack-python's own.
REFUSALS = (CacheKitError, ValueError, msgpack.ExtraData, msgpack.FormatError, msgpack.StackError)


def construct(v: dict) -> bytes:
    c = v["construction"]
    return bytes.fromhex(c["repeat_hex"]) * c["count"] + bytes.fromhex(c["suffix_hex"])


def decode_every_way(data: bytes) -> bool:
    """True when the interop reader (the core's bounds check, then the decode)
    accepted `data`. Only then do the standard and auto decoders see it, as in
    the cache, where every value they decode has passed the core's check; they
    may still refuse it, with a decode error."""
    try:
        _codec.decode_interop_value(data)
    except CacheKitError:
        return False
    for decode in (_codec.decode_value, _codec.decode_auto_value):
        try:
            decode(data)
        except REFUSALS:
            pass
    return True


@pytest.mark.parametrize("v", vector_params(FILE, "reject_vectors"))
def test_reject_vector_is_refused_by_name(v):
    with pytest.raises(CacheKitError) as e:
        _codec.decode_interop_value(construct(v))
    allowed = {"depth": {"DepthExceeded", "Overclaim"}, "overclaim": {"Overclaim", "Truncated"},
               "incomplete": {"Truncated"}}
    names = set().union(*(allowed[r] for r in v["reject_reasons"]))
    assert e.value.name in names, (e.value.name, v["reject_reasons"])


@pytest.mark.parametrize("v", vector_params(FILE, "accept_vectors"))
def test_accept_vector_is_read(v):
    assert decode_every_way(construct(v))


def mutate(rng: random.Random, seed: bytes) -> bytes:
    b = bytearray(seed)
    for _ in range(1 + rng.randrange(4)):
        op = rng.randrange(5)
        if op == 0 and b:
            b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
        elif op == 1 and b:
            del b[rng.randrange(len(b)):]
        elif op == 2:
            i = rng.randrange(len(b) + 1)
            b[i:i] = bytes([WIDE[rng.randrange(len(WIDE))]]) + b"\xff" * 4
        elif op == 3 and b:
            i = rng.randrange(len(b))
            n = 1 + rng.randrange(min(16, len(b) - i))
            b[i:i] = b[i:i + n]
        else:
            b.append(rng.randrange(256))
    return bytes(b)


def test_mutations_of_every_vector_never_crash():
    data = load_vectors(FILE)
    if data is None:
        pytest.skip("conformance vectors not found (decode-bounds.json): set CACHEKIT_VECTORS_DIR")
    seeds = [construct(v) for v in data["reject_vectors"] + data["accept_vectors"]]
    seeds.append(bytes([0xdd, 0xff, 0xff, 0xff, 0xff]))  # a 2^32-1 element array header alone
    rng = random.Random(25)
    for seed in seeds:
        for _ in range(MUTATIONS):
            decode_every_way(mutate(rng, seed))


@pytest.mark.parametrize("doc", ["81910102", "8181a16101a162"], ids=["array-key", "map-key"])
def test_a_key_python_cannot_hold_is_a_decode_error(doc):
    """{[1]: 2} and {{"a": 1}: "b"} are well-formed, but a dict cannot hold the key:
    a DecodeError (the cache's miss), not msgpack-python's bare TypeError."""
    from cachekit._core import DecodeError
    for decode in (_codec.decode_value, _codec.decode_auto_value, _codec.decode_interop_value):
        with pytest.raises(DecodeError) as e:
            decode(bytes.fromhex(doc))
        assert e.value.name == "DeserializationFailed" and "TypeError" in e.value.message
