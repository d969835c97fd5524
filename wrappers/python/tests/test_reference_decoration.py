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


# -- cache.local(max_entries=...): the reference's checks --------------------------------

@pytest.mark.parametrize("n", [0, -1])
def test_local_max_entries_below_one_is_a_value_error(n):
    with pytest.raises(ValueError, match="max_entries must be >= 1"):
        cache.local(max_entries=n)(plain)
    with pytest.raises(ValueError, match="max_entries must be >= 1"):
        cache(backend=None, max_entries=n)(plain)


@pytest.mark.parametrize("n", [1.5, "10"])
def test_local_max_entries_not_an_int_is_a_type_error(n):
    with pytest.raises(TypeError, match="max_entries must be an int"):
        cache.local(max_entries=n)(plain)


def test_local_max_entries_one_keeps_one():
    g = cache.local(max_entries=1)(plain)
    g(1), g(2)
    assert g.cache_info().currsize == 1 and g.cache_info().maxsize == 1


# -- a backend string that looks like a URL but is not one -------------------------------

@pytest.mark.parametrize("url", ["redis//127.0.0.1:6379", "REDIS//127.0.0.1", "redis:/127.0.0.1:6379",
                                 "redis:127.0.0.1", "127.0.0.1:6379", "localhost:6379", "file:/tmp/x",
                                 "memory:", "unix//run/redis.sock"])
@pytest.mark.parametrize("fail_closed", [None, True])
def test_a_malformed_url_is_refused_not_a_directory(url, fail_closed, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigurationError, match="unsupported backend URL"):
        cache(backend=url, fail_closed=fail_closed)(plain)
    assert list(tmp_path.iterdir()) == []  # no ./redis/ (or any) directory was made


def test_set_default_backend_refuses_a_malformed_url():
    from cachekit import get_default_backend, set_default_backend
    with pytest.raises(ConfigurationError, match="unsupported backend URL"):
        set_default_backend("redis//127.0.0.1:6379")
    assert get_default_backend() is None


@pytest.mark.parametrize("rel", ["redis", "redis/cache", "cache-dir", "./redis:v1", "data.v2/x"])
def test_directory_paths_are_still_file_caches(rel, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    calls = []

    @cache(backend=rel, ttl=60)
    def f(x):
        calls.append(x)
        return x

    assert f(1) == 1 and f(1) == 1 and calls == [1]
    assert f._cachekit.core_spec[1]["backend_url"] == "file://" + str(tmp_path / rel.removeprefix("./"))


# -- ainvalidate_cache, which the static type declares on every decorated function ---------

@pytest.mark.parametrize("backend", [None, "memory://"], ids=["object", "l2"])
def test_sync_functions_have_ainvalidate_cache(backend):
    import asyncio
    calls = []

    @cache(backend=backend, ttl=60)
    def f(x):
        calls.append(x)
        return x

    f(1), f(1)
    asyncio.run(f.ainvalidate_cache(1))
    f(1)
    assert calls == [1, 1]
