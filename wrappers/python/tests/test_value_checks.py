"""Single-value checks with cachekit-py 0.24.1's classes and messages (issue 28): a
non-number ttl is a TypeError, cache.local takes whole seconds (an int >= 1), the
serializer name "standard" is unknown there; a bool ttl is refused here (the reference
reads True as 1 second)."""
from __future__ import annotations

import pytest

from cachekit import cache


def f(x):
    return x


@pytest.mark.parametrize("ttl", ["60", b"1", [], {}])
@pytest.mark.parametrize("deco", [cache, cache.production], ids=["cache", "preset"])
def test_a_non_number_ttl_is_a_type_error(deco, ttl):
    with pytest.raises(TypeError, match="must be real number, not"):
        deco(ttl=ttl, backend=None)(f)


@pytest.mark.parametrize("ttl,match", [(float("nan"), "finite"), (float("inf"), "finite"), (-1, "non-negative")])
def test_a_bad_number_is_a_value_error(ttl, match):
    with pytest.raises(ValueError, match=match):
        cache(ttl=ttl, backend="memory://")(f)


@pytest.mark.parametrize("ttl", [True, False])
def test_a_bool_ttl_is_refused(ttl):
    with pytest.raises(TypeError, match="not a bool"):
        cache(ttl=ttl, backend=None)(f)
    with pytest.raises(TypeError, match="not a bool"):
        cache.local(ttl=ttl)(f)


@pytest.mark.parametrize("ttl,error,message", [
    (1.5, TypeError, "ttl must be an int, got float"), (1.0, TypeError, "ttl must be an int, got float"),
    ("60", TypeError, "ttl must be an int, got str"), (-5, ValueError, "ttl must be >= 1, got -5"),
])
def test_cache_local_takes_whole_seconds(ttl, error, message):
    with pytest.raises(error, match=message):
        cache.local(ttl=ttl)(f)
    assert cache.local(ttl=2)(f)(1) == 1


def test_serializer_standard_is_unknown_as_in_0_24_1():
    with pytest.raises(ValueError, match="Unknown serializer: 'standard'"):
        cache(serializer="standard", backend="memory://")(f)
    for name in ("default", "std", "auto", "pythonic"):
        assert cache(serializer=name, backend="memory://")(f)(1) == 1


def test_fractional_ttls_stay_accepted_outside_cache_local():
    assert cache(ttl=1.5, backend=None)(f)(1) == 1
    assert cache(ttl=0.25, backend="memory://")(f)(1) == 1
