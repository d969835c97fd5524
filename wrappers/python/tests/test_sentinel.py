"""redis-sentinel:// and rediss-sentinel:// from Python: one private primary and one sentinel
monitoring it as "m" (quorum 1, conftest.redis_sentinel); a raw Backend and the decorator
through the sentinel URL, each write read back on the primary with a plain client."""
from __future__ import annotations

import pytest

from cachekit import Backend, cache
from cachekit.backends.redis import RedisBackend
from cachekit._core import BackendError, ConfigurationError

from conftest import RedisSentinel, _free_port


def test_backend_through_the_sentinel(redis_sentinel, unique_ns):
    key = f"{unique_ns}:k"
    b = Backend(redis_sentinel.url(), fail_closed=True)
    b.set(key, b"through-sentinel")
    assert b.get(key) == b"through-sentinel"
    assert redis_sentinel.primary.command("GET", key) == b"through-sentinel"  # on the primary itself
    assert b.delete(key)
    assert redis_sentinel.primary.command("EXISTS", key) == 0


def test_decorator_through_the_sentinel(redis_sentinel, unique_ns):
    calls = []

    @cache(backend=redis_sentinel.url(), namespace=unique_ns, l1=False, fail_closed=True)
    def f(x):
        calls.append(x)
        return {"x": x}

    assert f(5) == {"x": 5}
    assert f(5) == {"x": 5}
    assert calls == [5]  # the second came from the primary, found through the sentinel
    assert f.cache_info().l2_hits == 1
    keys = redis_sentinel.primary.command("KEYS", f"*{unique_ns}*")
    assert len(keys) == 1, keys


def test_unknown_master_is_a_backend_error(redis_sentinel):
    url = redis_sentinel.url().replace("/m", "/no-such-master")
    with pytest.raises(BackendError, match="no-such-master"):
        Backend(url, fail_closed=True).get("k")
    with pytest.raises(ConfigurationError, match="l1_coherence"):
        Backend(redis_sentinel.url("l1_coherence=sometimes"))


def test_redis_backend_takes_sentinel_urls(redis_sentinel, unique_ns):
    """RedisBackend (the reference's class) takes redis-sentinel:// as it takes redis://."""
    key = f"{unique_ns}:rb"
    b = RedisBackend(redis_sentinel.url())
    b.set(key, b"via-redis-backend")
    assert redis_sentinel.primary.command("GET", key) == b"via-redis-backend"


def test_tls_sentinel(tls_redis, tmp_path, unique_ns):
    """rediss-sentinel://: TLS to a sentinel (its tls-port) that names the primary's TLS port
    (tls-replication yes); one CA and client certificate for both connections."""
    f = tls_redis.file
    tls_port = _free_port()
    sentinel = RedisSentinel(str(tmp_path), tls_redis.tls_port,
                             f"tls-port {tls_port}\ntls-cert-file {f('server.crt')}\n"
                             f"tls-key-file {f('server.key')}\ntls-ca-cert-file {f('ca.crt')}\n"
                             "tls-auth-clients no\ntls-replication yes\n")
    try:
        url = (f"rediss-sentinel://127.0.0.1:{tls_port}/m?ssl_ca_certs={f('ca.crt')}"
               f"&ssl_certfile={f('client.crt')}&ssl_keyfile={f('client.key')}")
        key = f"{unique_ns}:tls"
        b = Backend(url, fail_closed=True)
        b.set(key, b"over-tls")
        assert b.get(key) == b"over-tls"
        assert tls_redis.server.command("GET", key) == b"over-tls"
        wrong_ca = url.replace(f("ca.crt"), f("other-ca.crt"))
        with pytest.raises(BackendError, match="certificate verify failed"):
            Backend(wrong_ca, fail_closed=True).get(key)
    finally:
        sentinel.stop()

