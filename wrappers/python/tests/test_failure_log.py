"""Failures a user can see (issue 25): the core's backend events reach
logging.getLogger("cachekit"), and cache_info() carries the L2's health."""
from __future__ import annotations

import logging
import socket

from cachekit import cache


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def events(caplog, name: str) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "cachekit" and getattr(r, "cachekit_event", None) == name]


def test_refused_port_logs_one_warning_and_cache_info_shows_it_down(caplog):
    url = f"redis://127.0.0.1:{free_port()}"

    def get_item(x):
        return {"x": x}

    g = cache(backend=url, namespace="faillog", l1=False)(get_item)
    with caplog.at_level(logging.INFO, logger="cachekit"):
        for i in range(50):
            assert g(i) == {"x": i}  # fail-open: every call still answers
    down = events(caplog, "backend_down")
    assert len(down) == 1, [r.getMessage() for r in caplog.records]
    assert down[0].levelno == logging.WARNING
    assert down[0].getMessage().startswith(url + ": ")
    assert "refused" in down[0].getMessage()
    assert len(events(caplog, "breaker_open")) == 1
    assert len([r for r in caplog.records if r.name == "cachekit"]) == 2  # bounded: 50 calls, 2 lines

    health = g.cache_info().backend_health
    assert health is not None
    assert health["state"] == "breaker_open"
    assert health["backend"] == url
    assert "refused" in health["last_error"]
    assert health["last_error_at"] > 0
    assert health["coherence"] == "off"


def test_password_never_logged(caplog):
    port = free_port()

    def get_item(x):
        return x

    g = cache(backend=f"redis://:sekrit-pw@127.0.0.1:{port}", namespace="faillog-pw", l1=False)(get_item)
    with caplog.at_level(logging.INFO, logger="cachekit"):
        g(1)
    down = events(caplog, "backend_down")
    assert len(down) == 1
    assert down[0].getMessage().startswith(f"redis://127.0.0.1:{port}: ")
    assert "sekrit" not in caplog.text
    assert "sekrit" not in repr(g.cache_info().backend_health)


def test_healthy_backend_logs_nothing(caplog, memory_backend):
    def get_item(x):
        return x

    g = cache(backend=memory_backend, namespace="faillog-ok", l1=False)(get_item)
    with caplog.at_level(logging.INFO, logger="cachekit"):
        g(1)
        g(1)
    assert not [r for r in caplog.records if r.name == "cachekit"]
    assert g.cache_info().backend_health["state"] == "ok"
