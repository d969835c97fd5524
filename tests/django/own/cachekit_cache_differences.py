"""The tests of Django's BaseCacheTests (the pinned sdist's tests/cache/tests.py) that
cachekit.django does not pass or that do not apply to it: name -> ("skip" | "xfail",
reason). Kept in step with the table in docs/django.md ("Django's own cache tests"):
run_django.py fails when they differ."""

_CULL = "the server evicts (MAX_ENTRIES and CULL_FREQUENCY are ignored): its cull caches are left out, as for Django's RedisCache"

DIFFERENCES: dict[str, tuple[str, str]] = {
    "test_cull": ("skip", _CULL),
    "test_cull_delete_when_store_empty": ("skip", _CULL),
    "test_zero_cull": ("skip", _CULL),
}
