"""Shared fixtures: vectors, private backends, a private redis-server."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid

import pytest

from redis_procs import (RedisSentinel, RedisServer, SentinelSet, _free_port,  # noqa: F401 (re-exported)
                         redis_command)

HERE = os.path.dirname(os.path.abspath(__file__))
PKG_ROOT = os.path.dirname(HERE)
REPO_ROOT = os.path.dirname(os.path.dirname(PKG_ROOT))
if PKG_ROOT not in sys.path:
    sys.path.insert(0, PKG_ROOT)


def vectors_dir() -> str | None:
    for cand in (os.environ.get("CACHEKIT_VECTORS_DIR"), os.environ.get("CACHEKIT_VECTORS_DIR_DEFAULT"),
                 os.path.join(REPO_ROOT, "..", "shared", "vectors", "upstream")):
        if cand and os.path.isdir(cand):
            return os.path.abspath(cand)
    return None


def load_vectors(name: str) -> dict | None:
    d = vectors_dir()
    if d is None or not os.path.exists(os.path.join(d, name)):
        return None
    with open(os.path.join(d, name), encoding="utf-8") as f:
        return json.load(f)


def vector_params(file: str, section: str) -> list:
    """pytest params, one per vector, id = vector name; one skipping param if absent."""
    data = load_vectors(file)
    if data is None:
        return [pytest.param(None, marks=pytest.mark.skip(
            reason=f"conformance vectors not found ({file}): set CACHEKIT_VECTORS_DIR"), id="vectors-missing")]
    return [pytest.param(v, id=v["name"]) for v in data.get(section, [])]


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    # Tests choose their backends explicitly; keep the environment from steering them.
    for var in ("CACHEKIT_REDIS_URL", "REDIS_URL", "CACHEKIT_FILE_CACHE_DIR", "CACHEKIT_MASTER_KEY",
                "CACHEKIT_PREVIOUS_MASTER_KEYS", "CACHEKIT_ENCRYPTION_FAIL_CLOSED",
                "CACHEKIT_INVALIDATION_LISTENER_ENABLED"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def memory_backend():
    from cachekit import Backend
    b = Backend("memory://")
    yield b


@pytest.fixture
def unique_ns() -> str:
    return "t" + uuid.uuid4().hex[:12]


@pytest.fixture(scope="session")
def redis_sentinel(tmp_path_factory):
    if not shutil.which("redis-server"):
        pytest.skip("redis-server is not installed")
    s = SentinelSet(str(tmp_path_factory.mktemp("sentinel")))
    yield s
    s.stop()


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory):
    if not shutil.which("redis-server"):
        pytest.skip("redis-server is not installed")
    srv = RedisServer(str(tmp_path_factory.mktemp("redis")))
    yield srv
    srv.stop()


def make_tls_certs(d: str) -> bool:
    """Throwaway CAs "ca" and "other-ca", a server cert for 127.0.0.1 and localhost and
    a client cert from "ca" (<d>/<name>.crt/.key), with the openssl CLI, as
    tests/redis/tls_certs.hpp makes them. False when openssl fails."""
    key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]

    def run(*args: str) -> bool:
        return subprocess.run(["openssl", *args], cwd=d, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL).returncode == 0

    def leaf(name: str, issuer: str, ext: str) -> bool:
        with open(os.path.join(d, name + ".ext"), "w") as f:
            f.write(ext + "\n")
        return (run("req", *key, "-keyout", name + ".key", "-out", name + ".csr", "-subj", "/CN=" + name)
                and run("x509", "-req", "-in", name + ".csr", "-CA", issuer + ".crt", "-CAkey", issuer + ".key",
                        "-CAcreateserial", "-days", "2", "-out", name + ".crt", "-extfile", name + ".ext"))

    return (all(run("req", "-x509", *key, "-keyout", n + ".key", "-out", n + ".crt", "-days", "2", "-subj", "/CN=" + n)
                for n in ("ca", "other-ca"))
            and leaf("server", "ca", "subjectAltName=DNS:localhost,IP:127.0.0.1")
            and leaf("client", "ca", "extendedKeyUsage=clientAuth"))


class TlsRedis:
    """A redis-server with a TLS port that wants client certificates (mutual TLS)."""

    def __init__(self, tmp: str, certs: str) -> None:
        self.certs = certs
        self.tls_port = _free_port()
        self.server = RedisServer(tmp, ("--tls-port", str(self.tls_port), "--tls-cert-file", self.file("server.crt"),
                                        "--tls-key-file", self.file("server.key"), "--tls-ca-cert-file",
                                        self.file("ca.crt"), "--tls-auth-clients", "yes"))

    def file(self, name: str) -> str:
        return os.path.join(self.certs, name)

    def stop(self) -> None:
        self.server.stop()


@pytest.fixture(scope="session")
def tls_redis(tmp_path_factory):
    if not shutil.which("redis-server") or not shutil.which("openssl"):
        pytest.skip("redis-server or the openssl CLI is not installed")
    certs = str(tmp_path_factory.mktemp("tls-certs"))
    if not make_tls_certs(certs):
        pytest.skip("cannot make test certificates with the openssl CLI")
    srv = TlsRedis(str(tmp_path_factory.mktemp("redis-tls")), certs)
    yield srv
    srv.stop()


def define(fn_name: str, module: str = "__main__", qualname: str | None = None):
    """A plain function whose __module__/__qualname__ are set as the vectors need."""
    calls = []

    def f(*args, **kwargs):
        calls.append((args, kwargs))
        return {"n": len(calls), "args": list(args)}

    f.__name__ = fn_name
    f.__qualname__ = qualname or fn_name
    f.__module__ = module
    f.calls = calls
    return f


@pytest.fixture(autouse=True)
def _fresh_handles():
    """Each test starts without shared core handles (so memory:// is empty), and
    without the counters of earlier tests' functions of the same name (cache_info is
    per function identity, as the reference's)."""
    from cachekit import _cores, _stats
    with _cores._handles_lock:
        _cores._handles.clear()
    with _stats._COUNTERS_LOCK:
        _stats._COUNTERS.clear()
    yield
