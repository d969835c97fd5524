"""The django suite's fixtures: one private redis-server (wrappers/python/tests/redis_procs.py)
started before Django reads its settings (djproject.settings), and the caches by alias."""
from __future__ import annotations

import os
import shutil
import tempfile

import pytest

from redis_procs import RedisServer

_tmp = tempfile.mkdtemp(prefix="cachekit-django-")
_server = RedisServer(_tmp)
os.environ["CACHEKIT_DJANGO_TEST_REDIS"] = _server.url
os.environ["CACHEKIT_DJANGO_TEST_FILE_DIR"] = os.path.join(_tmp, "files")
os.environ["DJANGO_SETTINGS_MODULE"] = "djproject.settings"

import django  # noqa: E402

django.setup()


def pytest_unconfigure(config):
    _server.stop()
    shutil.rmtree(_tmp, ignore_errors=True)


@pytest.fixture(scope="session")
def redis_server() -> RedisServer:
    return _server


# Each behaviour test runs on Redis and on memory://: (cache, its KEY_PREFIX sibling, the nested one).
PAIRS = {"redis": ("default", "other", "nested"), "memory": ("memory", "memory_other", "memory_nested")}


@pytest.fixture(params=sorted(PAIRS))
def kind(request) -> str:
    return request.param


@pytest.fixture
def cache(kind):
    from django.core.cache import caches
    c = caches[PAIRS[kind][0]]
    c.clear()
    yield c
    c.clear()


@pytest.fixture
def sibling(kind):
    from django.core.cache import caches
    c = caches[PAIRS[kind][1]]
    c.clear()
    yield c
    c.clear()


@pytest.fixture
def nested(kind):
    from django.core.cache import caches
    c = caches[PAIRS[kind][2]]
    c.clear()
    yield c
    c.clear()
