"""A minimal Django project for the django suite: its caches are cachekit.django's, on the
private redis-server conftest.py starts (CACHEKIT_DJANGO_TEST_REDIS) and on memory://."""
import os

REDIS = os.environ["CACHEKIT_DJANGO_TEST_REDIS"]
FILE_DIR = os.environ["CACHEKIT_DJANGO_TEST_FILE_DIR"]

SECRET_KEY = "cachekit-django-tests"
DEBUG = False
ALLOWED_HOSTS = ["testserver"]
ROOT_URLCONF = "djproject.urls"
INSTALLED_APPS: list = []
MIDDLEWARE: list = []
DATABASES: dict = {}
USE_TZ = True


def key_function(key, key_prefix, version):
    return f"kf|{key_prefix}|{version}|{key}"


BACKEND = "cachekit.django.CacheKitCache"
CACHES = {
    "default": {"BACKEND": BACKEND, "LOCATION": REDIS, "KEY_PREFIX": "site", "TIMEOUT": 300,
                "OPTIONS": {"COMMAND_TIMEOUT_MS": 2000}},
    "other": {"BACKEND": BACKEND, "LOCATION": REDIS, "KEY_PREFIX": "other",
              "OPTIONS": {"COMMAND_TIMEOUT_MS": 2000}},
    # "site:x" starts with "site": its keys must survive default's clear() and the reverse.
    "nested": {"BACKEND": BACKEND, "LOCATION": REDIS, "KEY_PREFIX": "site:x",
               "OPTIONS": {"COMMAND_TIMEOUT_MS": 2000}},
    "keyfunc": {"BACKEND": BACKEND, "LOCATION": REDIS, "KEY_PREFIX": "kfp", "KEY_FUNCTION": key_function,
                "OPTIONS": {"COMMAND_TIMEOUT_MS": 2000}},
    "memory": {"BACKEND": BACKEND, "LOCATION": "memory://", "KEY_PREFIX": "site", "TIMEOUT": 300},
    "memory_other": {"BACKEND": BACKEND, "LOCATION": "memory://", "KEY_PREFIX": "other"},
    "memory_nested": {"BACKEND": BACKEND, "LOCATION": "memory://", "KEY_PREFIX": "site:x"},
    "file": {"BACKEND": BACKEND, "LOCATION": "file://" + FILE_DIR},
}
