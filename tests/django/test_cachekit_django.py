"""cachekit.django.CacheKitCache: Django's cache API on the core's backends (docs/django.md),
on a private redis-server and on memory://."""
from __future__ import annotations

import os
import pickle
import threading
import time

import pytest
from django.core.cache import caches
from django.core.exceptions import ImproperlyConfigured
from django.test import Client

import cachekit.django as ckdj
from cachekit import ConfigurationError
from cachekit.django import CacheKitCache


def raw_keys(redis_server) -> list[bytes]:
    return sorted(redis_server.command("KEYS", "*"))


def connections(redis_server) -> int:
    """Clients connected to the private server, less the one asking."""
    return len(redis_server.command("CLIENT", "LIST").strip().splitlines()) - 1


# -- the project -------------------------------------------------------------------------

def test_view_is_served_from_the_cache():
    from djproject import views
    caches["default"].delete("answer")
    views.computed["count"] = 0
    client = Client()
    first = client.get("/answer/")
    second = client.get("/answer/")
    assert first.status_code == second.status_code == 200
    assert first.content == second.content == b"answer=42 computed=1"
    assert views.computed["count"] == 1


# -- get / set and values ----------------------------------------------------------------

@pytest.mark.parametrize("value", [{"a": [1, 2.5, "x"]}, "text", b"\x00bytes", 7, -12, 2 ** 70, True, 1.5, None,
                                   (1, "t"), {"nested": {"set": {1, 2}}}])
def test_set_get_round_trips(cache, value):
    cache.set("k", value)
    got = cache.get("k", default="missing")
    assert got == value and type(got) is type(value)


def test_get_default_and_delete(cache):
    assert cache.get("nope") is None
    assert cache.get("nope", default=5) == 5
    cache.set("k", 1)
    assert cache.delete("k") is True
    assert cache.delete("k") is False
    assert cache.get("k") is None


def test_values_are_pickled_with_the_highest_protocol(redis_server):
    c = caches["default"]
    c.set("pickled", {"v": 1})
    raw = redis_server.command("GET", b"django:4:site:site:1:pickled")
    assert raw == pickle.dumps({"v": 1}, pickle.HIGHEST_PROTOCOL)
    c.set("int", 41)
    assert redis_server.command("GET", b"django:4:site:site:1:int") == b"41"  # digits, as Django's Redis backend


# -- timeouts ----------------------------------------------------------------------------

def test_timeout_none_is_forever(cache, kind, redis_server):
    cache.set("k", "v", timeout=None)
    assert cache.get("k") == "v"
    if kind == "redis":
        assert redis_server.command("TTL", b"django:4:site:site:1:k") == -1


def test_default_timeout_is_the_settings_timeout(cache, kind, redis_server):
    cache.set("k", "v")
    if kind == "redis":
        assert 295 <= redis_server.command("TTL", b"django:4:site:site:1:k") <= 300
    assert 295 <= ckdj._shared_backend(cache._location, cache._options).ttl(cache._key("k", None)) <= 300


def test_timeout_zero_does_not_store_and_expires_now(cache):
    cache.set("k", "old")
    cache.set("k", "new", timeout=0)
    assert cache.get("k") is None
    cache.set_many({"a": 1, "b": 2}, timeout=0)
    assert cache.get_many(["a", "b"]) == {}
    assert cache.add("fresh", 1, timeout=0) is True
    assert cache.get("fresh") is None
    cache.set("t", 1)
    assert cache.touch("t", timeout=0) is True
    assert cache.get("t") is None


def test_negative_timeout_expires_now(cache):
    cache.set("k", "v")
    cache.set("k", "v", timeout=-5)
    assert not cache.has_key("k")


def test_positive_timeout_expires(cache):
    cache.set("k", "v", timeout=0.3)
    cache.set_many({"m": 1}, timeout=0.3)
    assert cache.get("k") == "v" and cache.get("m") == 1
    time.sleep(0.5)
    assert cache.get("k") is None and cache.get("m") is None


# -- add / touch / has_key / get_or_set ------------------------------------------------------

def test_add(cache):
    assert cache.add("k", "first") is True
    assert cache.add("k", "second") is False
    assert cache.get("k") == "first"


def test_add_is_one_winner_among_threads(cache):
    wins = []

    def racer(i):
        if cache.add("race", i):
            wins.append(i)

    threads = [threading.Thread(target=racer, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(wins) == 1 and cache.get("race") == wins[0]


def test_touch(cache, kind, redis_server):
    assert cache.touch("missing", 10) is False
    cache.set("k", "v", timeout=5)
    assert cache.touch("k", 100) is True
    assert cache.get("k") == "v"
    if kind == "redis":
        assert 95 <= redis_server.command("TTL", b"django:4:site:site:1:k") <= 100
        assert cache.touch("k", None) is True
        assert redis_server.command("TTL", b"django:4:site:site:1:k") == -1


def test_has_key(cache):
    assert cache.has_key("k") is False
    cache.set("k", None)  # a stored None is a key that exists
    assert cache.has_key("k") is True
    assert "k" in cache


def test_get_or_set(cache):
    calls = []
    assert cache.get_or_set("k", lambda: calls.append(1) or "computed") == "computed"
    assert cache.get_or_set("k", lambda: calls.append(1) or "again") == "computed"
    assert calls == [1]
    assert cache.get_or_set("plain", 3) == 3


# -- many --------------------------------------------------------------------------------

def test_get_set_delete_many(cache):
    assert cache.set_many({"a": 1, "b": "two", "c": [3]}) == []
    assert cache.get_many(["a", "b", "c", "missing"]) == {"a": 1, "b": "two", "c": [3]}
    assert cache.get_many([]) == {}
    cache.delete_many(["a", "c", "missing"])
    assert cache.get_many(["a", "b", "c"]) == {"b": "two"}


# -- incr / decr -------------------------------------------------------------------------

def test_incr_decr(cache):
    cache.set("n", 10)
    assert cache.incr("n") == 11
    assert cache.incr("n", 5) == 16
    assert cache.decr("n") == 15
    assert cache.decr("n", 20) == -5
    assert cache.get("n") == -5


def test_incr_missing_key_raises_value_error(cache):
    with pytest.raises(ValueError):
        cache.incr("missing")
    with pytest.raises(ValueError):
        cache.decr("missing")
    assert cache.get("missing") is None


def test_incr_keeps_the_expiry(cache, kind, redis_server):
    cache.set("n", 1, timeout=100)
    cache.incr("n")
    left = ckdj._shared_backend(cache._location, cache._options).ttl(cache._key("n", None))
    assert 0 < left <= 100
    cache.set("forever", 1, timeout=None)
    cache.incr("forever")
    if kind == "redis":
        assert redis_server.command("TTL", b"django:4:site:site:1:forever") == -1


def test_incr_from_threads_loses_no_update(cache):
    cache.set("n", 0)

    def bump():
        for _ in range(20):
            cache.incr("n")

    threads = [threading.Thread(target=bump) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert cache.get("n") == 80


def test_incr_of_a_non_integer_is_type_error(cache):
    cache.set("s", "text")
    with pytest.raises(TypeError):
        cache.incr("s")
    assert cache.get("s") == "text"
    cache.set("big", 2**63 - 1)
    with pytest.raises(OverflowError):
        cache.incr("big")
    assert cache.get("big") == 2**63 - 1



def test_one_command_each(redis_server):
    """incr/decr, add, touch and delete_many are one command each on the server, with no
    lock around them (INFO commandstats after CONFIG RESETSTAT)."""
    c = caches["default"]
    c.set("n", 1)
    c.incr("n")  # the first use caches the script
    redis_server.command("CONFIG", "RESETSTAT")
    assert c.incr("n") == 3 and c.decr("n", 2) == 1
    assert c.add("a", "v") is True and c.add("a", "w") is False
    assert c.touch("a", 50) is True and c.touch("a", None) is True
    c.delete_many(["n", "a", "none"])
    assert redis_server.command_calls("evalsha") == 2 and redis_server.command_calls("eval") == 0
    assert redis_server.command_calls("incrby") == 2  # inside the script
    assert redis_server.command_calls("set") == 2  # the two adds (SET NX), no lock
    assert redis_server.command_calls("pexpire") == 1 and redis_server.command_calls("persist") == 1
    assert redis_server.command_calls("unlink") == 1 and redis_server.command_calls("del") == 0
    assert c.get_many(["n", "a"]) == {}


# -- Django's key semantics --------------------------------------------------------------

def test_versioned_keys(cache):
    cache.set("k", "v1")
    cache.set("k", "v2", version=2)
    assert cache.get("k") == "v1"
    assert cache.get("k", version=2) == "v2"
    assert cache.get("k", version=3) is None
    cache.delete("k", version=2)
    assert cache.get("k", version=2) is None and cache.get("k") == "v1"
    assert cache.incr_version("k") == 2
    assert cache.get("k") is None and cache.get("k", version=2) == "v1"


def test_key_prefix_isolation(cache, sibling, nested):
    cache.set("k", "mine")
    sibling.set("k", "theirs")
    nested.set("k", "nested")
    assert (cache.get("k"), sibling.get("k"), nested.get("k")) == ("mine", "theirs", "nested")


def test_clear_leaves_other_caches_keys(cache, sibling, nested, kind, redis_server):
    cache.set("k", 1)
    sibling.set("k", 2)
    nested.set("k", 3)
    if kind == "redis":
        redis_server.command("SET", "foreign:key", "x")  # not a Django key at all
    cache.clear()
    assert cache.get("k") is None
    assert sibling.get("k") == 2 and nested.get("k") == 3
    nested.clear()
    assert nested.get("k") is None and sibling.get("k") == 2
    if kind == "redis":
        assert redis_server.command("GET", "foreign:key") == b"x"
        redis_server.command("DEL", "foreign:key")


def test_key_function(redis_server):
    c = caches["keyfunc"]
    c.set("k", "v")
    assert c.get("k") == "v"
    assert b"django:3:kfp:kf|kfp|1|k" in raw_keys(redis_server)
    c.clear()
    assert b"django:3:kfp:kf|kfp|1|k" not in raw_keys(redis_server)


def test_storage_key_layout(redis_server):
    caches["default"].set("layout", 1)
    assert b"django:4:site:site:1:layout" in raw_keys(redis_server)
    caches["default"].delete("layout")


# -- handles, connections, close -----------------------------------------------------------

def test_close_keeps_the_cache_usable(cache):
    cache.set("k", "v")
    cache.close()
    assert cache.get("k") == "v"
    cache.set("k", "w")
    assert cache.get("k") == "w"


def test_fifty_request_instances_open_no_more_connections_than_one(redis_server):
    first = caches.create_connection("default")
    first.set("conn", 1)
    assert first.get("conn") == 1
    baseline = connections(redis_server)
    handles = ckdj.open_handles()
    assert baseline >= 1
    for i in range(50):
        c = caches.create_connection("default")  # what Django builds for a new thread or request
        c.set("conn", i)
        assert c.get("conn") == i
        c.close()  # request_finished
    assert connections(redis_server) <= baseline
    assert ckdj.open_handles() == handles


def test_fifty_requests_through_the_client(redis_server):
    client = Client()
    client.get("/answer/")
    baseline = connections(redis_server)
    for _ in range(50):
        assert client.get("/answer/").status_code == 200
    assert connections(redis_server) <= baseline


def test_one_handle_per_configuration():
    a = CacheKitCache("memory://", {"OPTIONS": {"COMMAND_TIMEOUT_MS": 1234}})
    b = CacheKitCache("memory://", {"KEY_PREFIX": "p", "OPTIONS": {"COMMAND_TIMEOUT_MS": 1234}})
    c = CacheKitCache("memory://", {"OPTIONS": {"COMMAND_TIMEOUT_MS": 4321}})
    assert a._backend is b._backend
    assert a._backend is not c._backend


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_forked_child_opens_its_own_handle(redis_server):
    c = caches["default"]
    c.set("fork", "parent")
    parent_handle = c._backend
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        ok = 0
        try:
            os.close(r)
            ok = int(c.get("fork") == "parent" and c._backend is not parent_handle)
            c.set("fork", "child")
        finally:
            os.write(w, b"1" if ok else b"0")
            os._exit(0)
    os.close(w)
    answer = os.read(r, 1)
    os.waitpid(pid, 0)
    os.close(r)
    assert answer == b"1"
    assert c._backend is parent_handle
    assert c.get("fork") == "child"


# -- file:// and configuration ---------------------------------------------------------------

def test_file_backend():
    c = caches["file"]
    c.set("k", {"v": 1})
    c.set("n", 1)
    assert c.get("k") == {"v": 1}
    assert c.incr("n") == 2
    assert c.add("k", 2) is False
    c.clear()
    assert c.get("k") is None


def test_unknown_options_are_refused():
    with pytest.raises(ImproperlyConfigured, match="BOGUS"):
        CacheKitCache("memory://", {"OPTIONS": {"BOGUS": 1}})
    with pytest.raises(ImproperlyConfigured, match="ssl_nope"):
        CacheKitCache("memory://", {"OPTIONS": {"TLS": {"ssl_nope": 1}}})
    with pytest.raises(ImproperlyConfigured):
        CacheKitCache("", {})


def test_pickle_protocol_option(redis_server):
    c = CacheKitCache(redis_server.url, {"KEY_PREFIX": "proto", "OPTIONS": {"PICKLE_PROTOCOL": 2}})
    c.set("k", {"v": 1})
    assert redis_server.command("GET", b"django:5:proto:proto:1:k") == pickle.dumps({"v": 1}, 2)
    c.clear()


def test_a_server_that_is_down_raises():
    from cachekit import BackendError
    from redis_procs import _free_port
    c = CacheKitCache(f"redis://127.0.0.1:{_free_port()}/0", {"OPTIONS": {"COMMAND_TIMEOUT_MS": 300}})
    with pytest.raises(BackendError):
        c.get("k")
    with pytest.raises(BackendError):
        c.set("k", 1)


def test_pool_size_bounds_the_connections_of_fifty_concurrent_requests(redis_server):
    """DJ-conns' setting: 50 threads, each with its own cache instance (Django's per-thread
    caches[...]), all calling at once, reach the server through at most POOL_SIZE
    connections of the configuration's one handle; the calls wait their turn, none fails."""
    settings = {"KEY_PREFIX": "pool", "OPTIONS": {"POOL_SIZE": 2, "COMMAND_TIMEOUT_MS": 5000}}
    CacheKitCache(redis_server.url, settings).set("k", "v")
    before = connections(redis_server)
    start = threading.Barrier(50)
    results: list = []

    def request() -> None:
        c = CacheKitCache(redis_server.url, settings)  # a new instance per request
        start.wait()
        results.append(c.get("k"))

    threads = [threading.Thread(target=request) for _ in range(50)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == ["v"] * 50
    assert connections(redis_server) - before <= 1  # the set opened one; at most one more


def test_pool_size_must_be_a_whole_number():
    with pytest.raises(ConfigurationError, match="pool_size"):
        CacheKitCache("memory://", {"OPTIONS": {"POOL_SIZE": -1}})._backend
    with pytest.raises(ConfigurationError, match="pool_size"):
        CacheKitCache("memory://", {"OPTIONS": {"POOL_SIZE": "2"}})._backend
