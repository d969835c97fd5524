"""CACHEKIT_INVALIDATION_LISTENER_ENABLED (the reference's cross-process L1 invalidation
listener) is the core's L1 coherence on the reference's channel for the environment's
Redis: another process's invalidation drops this process's L1 copy (issue 28)."""
from __future__ import annotations

import logging
import os
import subprocess
import sys
import textwrap
import time

import pytest

from cachekit import ConfigurationError, cache

WRITER = """
from cachekit import cache

def f(x):
    return x

f.__module__, f.__qualname__ = "listener_probe", "f"
g = cache(ttl=600, namespace={ns!r})(f)
g(1)
print(g.invalidate_cache(1))
"""


def probe(ns, calls):
    def f(x):
        calls.append(x)
        return len(calls)

    f.__module__, f.__qualname__ = "listener_probe", "f"
    return cache(ttl=600, namespace=ns)(f)


def other_process_invalidates(ns, env):
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(WRITER.format(ns=ns))], env=env,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["InvalidationOutcome.SUCCEEDED"]


def recomputes_within(f, calls, seconds=10.0):
    """True once f(1) runs the function again: the invalidation reached this process's L1
    (delivery is asynchronous; bounded)."""
    before = len(calls)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        f(1)
        if len(calls) > before:
            return True
        time.sleep(0.02)
    return False


@pytest.mark.parametrize("var", ["CACHEKIT_REDIS_URL", "REDIS_URL"])
def test_another_process_invalidation_drops_the_l1_copy(redis_server, unique_ns, monkeypatch, var):
    monkeypatch.setenv(var, redis_server.url)
    monkeypatch.setenv("CACHEKIT_INVALIDATION_LISTENER_ENABLED", "true")
    calls: list = []
    f = probe(unique_ns, calls)
    assert f(1) == f(1) == 1 and calls == [1]  # the second is an L1 hit
    assert f._cachekit.core.health()["coherence"] != "off"
    other_process_invalidates(unique_ns, dict(os.environ))
    assert recomputes_within(f, calls)


def test_off_by_default_as_in_the_reference(redis_server, unique_ns, monkeypatch):
    monkeypatch.setenv("REDIS_URL", redis_server.url)
    calls: list = []
    f = probe(unique_ns, calls)
    f(1)
    assert f._cachekit.core.health()["coherence"] == "off"
    assert f._cachekit.core_spec[1]["backend_url"] is None


def test_an_explicit_backend_warns_once(redis_server, monkeypatch, caplog):
    from cachekit import _options
    monkeypatch.setenv("CACHEKIT_INVALIDATION_LISTENER_ENABLED", "1")
    monkeypatch.setattr(_options, "_listener_warned", False)
    with caplog.at_level(logging.WARNING, logger="cachekit"):
        cache(backend=redis_server.url, ttl=60)(lambda x: x)
        cache(backend=redis_server.url, ttl=60, namespace="two")(lambda x: x)
        cache(backend=redis_server.url + "?l1_coherence=pubsub", ttl=60, namespace="three")(lambda x: x)
    warned = [r for r in caplog.records if "CACHEKIT_INVALIDATION_LISTENER_ENABLED" in r.getMessage()]
    assert len(warned) == 1 and "l1_coherence" in warned[0].getMessage()


def test_a_bad_value_is_a_configuration_error(monkeypatch, redis_server):
    monkeypatch.setenv("REDIS_URL", redis_server.url)
    monkeypatch.setenv("CACHEKIT_INVALIDATION_LISTENER_ENABLED", "maybe")
    with pytest.raises(ConfigurationError, match="CACHEKIT_INVALIDATION_LISTENER_ENABLED"):
        cache(ttl=60)(lambda x: x)(1)


def test_the_url_keeps_its_own_choice():
    from cachekit._options import with_listener
    assert with_listener("redis://h:1/0") == "redis://h:1/0?l1_coherence=pubsub"
    assert with_listener("redis://h:1?l1_coherence=auto") == "redis://h:1?l1_coherence=auto"
    assert with_listener("unix:///s.sock?db=1") == "unix:///s.sock?db=1&l1_coherence=pubsub"
