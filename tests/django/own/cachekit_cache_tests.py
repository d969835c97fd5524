"""Django's own cache tests on cachekit.django.CacheKitCache: the BaseCacheTests mixin
of the pinned sdist's tests/cache/tests.py, configured as Django's RedisCacheTests
configures it (caches_setting_for_tests on one server, the cull caches excluded: the
server evicts), on the private redis-server of run_django.py, and the same on
memory:// and on a file:// directory.

Every test that does not pass or does not apply is in cachekit_cache_differences.py,
by name, with its reason; the same table is in docs/django.md ("Django's own cache
tests") and run_django.py checks that both list the same names with the same reasons."""
from __future__ import annotations

import os
import unittest

from cache import tests as django_tests  # the sdist's tests/cache (run_own.py puts it on sys.path)
from cachekit_cache_differences import DIFFERENCES
from django.test import TestCase, override_settings

def _params(location: str) -> dict:
    return {"BACKEND": "cachekit.django.CacheKitCache", "LOCATION": location, "OPTIONS": {"COMMAND_TIMEOUT_MS": 2000}}


def _settings(location: str) -> override_settings:
    return override_settings(CACHES=django_tests.caches_setting_for_tests(
        base=_params(location), exclude=django_tests.redis_excluded_caches))


@_settings(os.environ["CACHEKIT_DJANGO_TEST_REDIS"])
class CacheKitCacheTests(django_tests.BaseCacheTests, TestCase):
    # incr/decr of a value that is not an integer (cachekit.django raises TypeError,
    # as LocMemCache does; Django's Redis backend raises redis-py's ResponseError).
    incr_decr_type_error = TypeError


@_settings("memory://")
class CacheKitMemoryCacheTests(CacheKitCacheTests):
    """The same on the core's memory:// backend (this process only)."""


@_settings("file://" + os.environ["CACHEKIT_DJANGO_TEST_FILE_DIR"])
class CacheKitFileCacheTests(CacheKitCacheTests):
    """The same on the core's file backend (a directory of its own: clear() empties it)."""


def _mark(cls: type) -> None:
    for name, (how, reason) in DIFFERENCES.items():
        test = getattr(cls, name)  # a name that no longer exists fails the run
        if how == "skip":
            setattr(cls, name, unittest.skip(reason)(test))
        else:  # must fail: one that starts passing fails the run ("unexpected success")
            setattr(cls, name, unittest.expectedFailure(test))


_mark(CacheKitCacheTests)  # the subclasses inherit the marks
