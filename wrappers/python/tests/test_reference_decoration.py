"""What cachekit-py 0.24.1 accepts or refuses when a function is decorated, and
how its attributes read (issue 28, "Bugs"): each checked there with the same call."""
from __future__ import annotations

import inspect
from unittest import mock

import pytest

from cachekit import ConfigurationError, cache


def plain(x):
    return x


# -- cache.io: an attribute that reads like any other; using it is refused --------------

def test_cache_io_reads_without_raising():
    assert hasattr(cache, "io")
    assert getattr(cache, "io", None) is not None and callable(cache.io)
    names = dict(inspect.getmembers(cache))
    assert "io" in names and "local" in names
    spec = mock.create_autospec(cache)
    assert hasattr(spec, "io")


@pytest.mark.parametrize("use", [lambda: cache.io(plain), lambda: cache.io()(plain),
                                 lambda: cache.io(ttl=60, api_key="k")(plain)],
                         ids=["bare", "called", "with-options"])
def test_cache_io_is_refused_at_decoration(use):
    # The reference refuses it there too (no api_key); here there is no HTTP backend at all.
    with pytest.raises(ConfigurationError, match="CachekitIO"):
        use()


# -- @cache above @classmethod: refused at import, not at every call ---------------------

@pytest.mark.parametrize("deco", [cache, cache(ttl=60), cache(ttl=60, backend="memory://"), cache.production,
                                  cache.local(ttl=5)], ids=["bare", "called", "memory", "preset", "local"])
def test_cache_above_classmethod_is_refused_when_the_class_is_built(deco):
    with pytest.raises(TypeError, match="not a callable object"):
        class Repo:  # noqa: F841
            @deco
            @classmethod
            def cm(cls, x):
                return x


def test_classmethod_above_cache_works():
    calls = []

    class Repo:
        @classmethod
        @cache(backend=None)
        def cm(cls, x):
            calls.append(x)
            return (cls.__name__, x)

    # A class is no key argument (here as in the reference: the call runs uncached), but it runs.
    assert Repo.cm(1) == ("Repo", 1) and Repo().cm(2) == ("Repo", 2) and calls == [1, 2]
