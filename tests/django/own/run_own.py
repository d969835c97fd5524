"""Run Django's own cache tests (cachekit_cache_tests.py) with Django's test runner:
argv[1] is the folder holding the sdist's tests/cache as `cache`."""
from __future__ import annotations

import os
import sys

sys.path[:0] = [sys.argv[1], os.path.dirname(os.path.abspath(__file__))]
os.environ["DJANGO_SETTINGS_MODULE"] = "settings"

import django  # noqa: E402
from django.test.runner import DiscoverRunner  # noqa: E402

django.setup()
failures = DiscoverRunner(verbosity=2, interactive=False).run_tests(["cachekit_cache_tests"])
sys.exit(1 if failures else 0)
