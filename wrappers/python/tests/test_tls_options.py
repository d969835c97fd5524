"""redis-py's TLS keywords (ssl, ssl_cert_reqs, ssl_ca_certs, ssl_ca_path, ssl_certfile,
ssl_keyfile, ssl_check_hostname) on Backend and RedisBackend, against a private
redis-server whose TLS port wants client certificates (conftest.tls_redis)."""
from __future__ import annotations

import pathlib
import ssl

import pytest

from cachekit import Backend, cache
from cachekit._core import BackendError, ConfigurationError
from cachekit.backends.redis import RedisBackend


def plain_url(srv) -> str:
    return f"redis://127.0.0.1:{srv.tls_port}/0"


def client(srv) -> dict:
    return dict(ssl_certfile=srv.file("client.crt"), ssl_keyfile=srv.file("client.key"))


def test_keywords_make_redis_url_tls(tls_redis):
    b = Backend(plain_url(tls_redis), fail_closed=True, ssl=True, ssl_ca_certs=tls_redis.file("ca.crt"),
                **client(tls_redis))
    b.set("tls:k", b"v")
    assert b.get("tls:k") == b"v"


def test_pathlike_and_cert_constants(tls_redis):
    b = Backend(plain_url(tls_redis), fail_closed=True, ssl=True,
                ssl_ca_certs=pathlib.Path(tls_redis.file("ca.crt")), ssl_cert_reqs=ssl.CERT_REQUIRED,
                ssl_check_hostname=True, ssl_certfile=pathlib.Path(tls_redis.file("client.crt")),
                ssl_keyfile=tls_redis.file("client.key"))
    b.set("tls:p", b"1")
    none = Backend(plain_url(tls_redis), fail_closed=True, ssl=True, ssl_cert_reqs="none", **client(tls_redis))
    assert none.get("tls:p") == b"1"


def test_wrong_ca_refused(tls_redis):
    b = Backend(plain_url(tls_redis), fail_closed=True, ssl=True, ssl_ca_certs=tls_redis.file("other-ca.crt"),
                **client(tls_redis))
    with pytest.raises(BackendError, match="certificate verify failed"):
        b.get("tls:k")


def test_client_certificate_needed(tls_redis):
    b = Backend(plain_url(tls_redis), fail_closed=True, ssl=True, ssl_ca_certs=tls_redis.file("ca.crt"))
    with pytest.raises(BackendError):
        b.get("tls:k")


def test_url_parameter_wins(tls_redis):
    url = f"rediss://127.0.0.1:{tls_redis.tls_port}/0?ssl_ca_certs={tls_redis.file('ca.crt')}"
    b = Backend(url, fail_closed=True, ssl_ca_certs=tls_redis.file("other-ca.crt"), **client(tls_redis))
    b.set("tls:u", b"2")
    assert b.get("tls:u") == b"2"


def test_redis_backend_in_the_decorator(tls_redis):
    backend = RedisBackend(plain_url(tls_redis), ssl=True, ssl_ca_certs=tls_redis.file("ca.crt"),
                           **client(tls_redis))
    calls = []

    @cache(backend=backend, namespace="tls-deco", l1=False, fail_closed=True)
    def f(x):
        calls.append(x)
        return {"x": x}

    assert f(3) == {"x": 3}
    assert f(3) == {"x": 3}
    assert calls == [3]  # the second came from Redis over TLS
    assert f.cache_info().l2_hits == 1
    backend.set("raw", b"r")  # the object's own handle takes the same keywords
    assert backend.get("raw") == b"r"


def test_refusals(tls_redis, tmp_path):
    with pytest.raises(ConfigurationError, match="set tls = 1 or use rediss://"):
        Backend(plain_url(tls_redis), ssl_ca_certs=tls_redis.file("ca.crt"))  # never silently in clear
    with pytest.raises(ConfigurationError, match="apply to Redis URLs only"):
        Backend(f"file://{tmp_path}", ssl=True)
    with pytest.raises(ConfigurationError, match="apply to Redis URLs only"):
        Backend("memory://", ssl_cert_reqs="none")
    with pytest.raises(ConfigurationError, match="set tls = 1 or use rediss-cluster://"):
        RedisBackend("redis-cluster://127.0.0.1:7000", ssl_ca_certs=tls_redis.file("ca.crt"))
    missing = str(tmp_path / "no-such-ca.pem")
    with pytest.raises(ConfigurationError, match="no-such-ca.pem"):
        Backend(plain_url(tls_redis), ssl=True, ssl_ca_certs=missing)
    with pytest.raises(ConfigurationError, match="ssl_cert_reqs"):
        Backend(plain_url(tls_redis), ssl=True, ssl_cert_reqs="sometimes")
    with pytest.raises(TypeError):
        Backend(plain_url(tls_redis), ssl=True, ssl_check_hostname="yes")
    with pytest.raises(TypeError):
        Backend(plain_url(tls_redis), ssl=True, ssl_ca_certs=3)
    with pytest.raises(TypeError):
        RedisBackend(plain_url(tls_redis), ssl_verify=True)  # not a redis-py TLS keyword here
