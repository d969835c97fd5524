"""Settings for Django's own cache tests (tests/cache of the pinned sdist) on
cachekit.django: the `cache` test app (its Poll model needs a database: sqlite in
memory) and the private redis-server of run_django.py (CACHEKIT_DJANGO_TEST_REDIS)."""
import os

SECRET_KEY = "cachekit-django-own-tests"
USE_TZ = True
INSTALLED_APPS = ["django.contrib.contenttypes", "django.contrib.auth", "cache"]
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}}
CACHES = {"default": {"BACKEND": "cachekit.django.CacheKitCache",
                      "LOCATION": os.environ["CACHEKIT_DJANGO_TEST_REDIS"],
                      "OPTIONS": {"COMMAND_TIMEOUT_MS": 2000}}}
MIDDLEWARE: list = []
DEFAULT_AUTO_FIELD = "django.db.models.AutoField"
