"""Decorator semantics, presets, cache_info, invalidation, object mode."""
from __future__ import annotations

import datetime as dt
import logging
import time

import pytest

from cachekit import Backend, CacheInfo, ConfigurationError, cache
from cachekit._cores import _handles


def counter():
    calls = []

    def f(x, y=0):
        calls.append((x, y))
        return {"x": x, "y": y, "n": len(calls)}

    f.calls = calls
    return f


@pytest.fixture(params=["memory", "file", "object"])
def backend(request, tmp_path):
    return {"memory": "memory://", "file": str(tmp_path), "object": None}[request.param]


def test_hit_miss_and_info(backend):
    f = counter()
    g = cache(backend=backend, namespace="n1")(f)
    assert g(1) == {"x": 1, "y": 0, "n": 1}
    assert g(1) == {"x": 1, "y": 0, "n": 1}
    assert g(2)["n"] == 2
    assert len(f.calls) == 2
    info = g.cache_info()
    assert isinstance(info, CacheInfo)
    assert (info.hits, info.misses) == (1, 2)
    assert info.l1_hits + info.l2_hits == info.hits
    assert g.__wrapped__ is f
    assert g.__name__ == "f"


def test_kwargs_are_not_bound(backend):
    f = counter()
    g = cache(backend=backend)(f)
    g(1)
    g(x=1)
    assert len(f.calls) == 2  # f(1) != f(x=1), as the reference SDK


def test_bypass_cache(backend):
    f = counter()
    g = cache(backend=backend)(f)
    g(1)
    g(1, _bypass_cache=True)
    assert len(f.calls) == 2
    g(1, _bypass_cache=False)
    assert len(f.calls) == 2


def test_invalidate_and_clear(backend):
    f = counter()
    g = cache(backend=backend, namespace="inv")(f)
    g(1), g(2)
    g.invalidate_cache(1)
    g(1), g(2)
    assert len(f.calls) == 3
    g.invalidate_cache()  # no args on a parameterised function: everything this process wrote
    g(1), g(2)
    assert len(f.calls) == 5
    g.cache_clear()
    info = g.cache_info()
    assert (info.hits, info.misses) == (0, 0)
    assert "#1" in info.session_id
    g(1)
    assert len(f.calls) == 6


def test_ttl_expiry(backend):
    # The file backend stores expiry in whole Unix seconds (file-backend.json).
    ttl, wait = (1, 2.05) if backend not in (None, "memory://") else (0.3, 0.45)
    f = counter()
    g = cache(backend=backend, ttl=ttl)(f)
    g(1)
    g(1)
    assert len(f.calls) == 1
    time.sleep(wait)
    g(1)
    assert len(f.calls) == 2


def test_type_distinct_keys(backend):
    calls = []

    @cache(backend=backend)
    def ident(x):
        calls.append(x)
        return repr(x)

    assert ident(1) == "1"
    assert ident(True) == "True"
    assert ident(1.0) == "1.0"
    assert ident(1) == "1"
    assert len(calls) == 3


def test_unsupported_args_run_uncached_and_warn_once(backend, caplog):
    f = counter()
    g = cache(backend=backend)(f)
    with caplog.at_level(logging.WARNING, logger="cachekit"):
        g(dt.datetime(2024, 1, 1))
        g(dt.datetime(2024, 1, 1))
        g({1, 2})
    assert len(f.calls) == 3
    assert len([r for r in caplog.records if "uncached" in r.getMessage()]) == 1


def test_values_round_trip_l2(tmp_path):
    aware = dt.datetime(2024, 1, 1, 12, 30, tzinfo=dt.timezone.utc)
    value = {"when": aware, "day": dt.date(2024, 1, 2), "t": dt.time(3, 4, 5), "b": b"\x00\xff", "tup": (1, 2),
             "nested": [{"f": 1.5, "none": None}]}

    @cache(backend=str(tmp_path), l1=False)
    def get():
        return value

    assert get() is value  # the computing call returns the very object
    got = get()
    assert got["when"] == aware and got["day"] == dt.date(2024, 1, 2) and got["t"] == dt.time(3, 4, 5)
    assert got["b"] == b"\x00\xff" and got["tup"] == [1, 2] and got["nested"] == [{"f": 1.5, "none": None}]


def test_core_reports_temporal_keys_of_what_it_checked():
    """An L2 read tells the wrapper whether the payload can hold temporal
    sentinel maps (so it need not search the bytes); an L1 hit does not know."""
    from cachekit._codec import encode_value
    from cachekit._core import CoreCache

    seen = []

    def decode(payload, temporal_keys):
        seen.append((type(payload), temporal_keys))
        return bytes(payload)

    for l1 in (False, True):
        c = CoreCache(backend_url="memory://", l1=l1)
        try:
            for key, value in ((b"n:plain", {"id": 1, "name": "__date"}), (b"n:dated", {"d": dt.date(2024, 1, 2)})):
                c.put(b"n", key, encode_value(value), 0.0)
                assert c.get_or_load(b"n", key, 0.0, lambda: b"\xc0", decode)[0] == encode_value(value)
        finally:
            c.close()
    # The L2 reads pass the payload in place with the core's answer; the L1 hits pass bytes and -1.
    assert [t for _, t in seen] == [0, 1, -1, -1]
    assert seen[0][0] is not bytes and seen[2][0] is bytes


def test_object_mode_keeps_objects():
    sentinel = object()

    @cache(backend=None)
    def get(x):
        return (sentinel, {x})

    a = get(1)
    b = get(1)
    assert a is b and isinstance(a, tuple)


def test_unserialisable_value_returned_uncached(caplog):
    calls = []

    @cache(backend="memory://")
    def get(x):
        calls.append(x)
        return {1, 2}

    assert get(1) == {1, 2}
    assert get(1) == {1, 2}
    assert len(calls) == 2


def test_exception_propagates_and_is_not_cached(backend):
    calls = []

    @cache(backend=backend)
    def boom(x):
        calls.append(x)
        raise KeyError(x)

    for _ in range(2):
        with pytest.raises(KeyError):
            boom(1)
    assert len(calls) == 2


def test_unknown_parameter_is_type_error():
    with pytest.raises(TypeError):
        cache(ttl=1, bogus=True)
    with pytest.raises(TypeError):
        cache.production(nope=1)


def test_bad_ttl():
    with pytest.raises(ValueError):
        cache(ttl=float("nan"), backend=None)(lambda: 1)
    with pytest.raises(ValueError):
        cache(ttl=-1, backend=None)(lambda: 1)


def test_presets():
    f = counter()
    assert cache.minimal(backend="memory://")(f)._cachekit.ttl == 300
    assert cache.minimal(backend="memory://")(f)._cachekit.integrity is False
    assert cache.production(backend="memory://")(f)._cachekit.ttl == 600
    assert cache.dev(backend="memory://")(f)._cachekit.ttl is not None
    assert cache.test(backend="memory://")(f)._cachekit.ttl is not None
    g = cache.production(f)  # bare form
    assert g._cachekit.ttl == 600
    loc = cache.local(f)
    assert loc._cachekit.object_mode and loc._cachekit.ttl == 300 and loc._cachekit.objects.max_entries == 256
    assert cache.local(ttl=5)(f)._cachekit.ttl == 5
    with pytest.raises(TypeError):
        cache.local(backend="memory://")(f)
    with pytest.raises(ConfigurationError, match="not available"):
        cache.io(f)
    with pytest.raises(ValueError):
        cache.secure(backend="memory://")(f)  # no master key anywhere


def test_master_key_env_never_turns_encryption_on(monkeypatch):
    # (Without an explicit choice it is refused: tests/test_values_and_choices.py.)
    monkeypatch.setenv("CACHEKIT_MASTER_KEY", "ab" * 32)
    backend = Backend("memory://")
    f = counter()
    g = cache(backend=backend, namespace="plain", encryption=False)(f)
    g(1)
    raw = backend.get(g._cachekit.key_for((1,), {}))
    assert b'"encrypted"' not in raw  # plaintext frame


def test_secure_with_env_key(monkeypatch):
    monkeypatch.setenv("CACHEKIT_MASTER_KEY", "ab" * 32)
    f = counter()
    g = cache.secure(backend="memory://")(f)
    assert g(1)["n"] == 1 and g(1)["n"] == 1


def test_local_entry_bound():
    f = counter()
    g = cache.local(max_entries=10)(f)
    for i in range(50):
        g(i)
    assert g.cache_info().currsize <= 10
    assert g.cache_info().maxsize == 10


def test_object_mode_byte_budget():
    @cache(backend=None, l1_max_size_mb=0.01)
    def big(i):
        return "x" * 2000

    for i in range(100):
        big(i)
    st = big._cachekit.objects
    assert st.bytes <= st.max_bytes and len(st) < 100


def test_shared_core_handle_per_configuration(tmp_path):
    a = cache(backend=str(tmp_path), namespace="a")(counter())
    b = cache(backend=str(tmp_path), namespace="b")(counter())
    c = cache(backend=str(tmp_path), namespace="c", l1=False)(counter())
    assert a._cachekit.core is b._cachekit.core
    assert a._cachekit.core is not c._cachekit.core
    a(1)
    # One function identity (counter.<locals>.f): one set of counters, as the reference's.
    assert a.cache_info().misses == 1 and b.cache_info().misses == 1


def test_two_env_selectors_is_a_configuration_error(monkeypatch, tmp_path):
    monkeypatch.setenv("CACHEKIT_REDIS_URL", "redis://127.0.0.1:1")
    monkeypatch.setenv("CACHEKIT_FILE_CACHE_DIR", str(tmp_path))
    with pytest.raises(ConfigurationError):
        cache(ttl=5)(counter())


def test_env_file_dir_backend(monkeypatch, tmp_path):
    monkeypatch.setenv("CACHEKIT_FILE_CACHE_DIR", str(tmp_path))
    f = counter()
    g = cache(namespace="envdir")(f)
    g(1)
    assert any(tmp_path.iterdir())


def test_custom_key_function():
    f = counter()
    backend = Backend("memory://")
    g = cache(backend=backend, namespace="k", key=lambda x, y=0: f"item-{x}")(f)
    g(7)
    # The reference 0.24's form: the function's BLAKE3 identity, then {namespace}:{key}.
    from cachekit._core import key_custom
    key = key_custom("k", f.__module__, f.__qualname__, "item-7")
    assert key.endswith("-k:item-7") and len(key) == 16 + len("-k:item-7")
    assert backend.get(key) is not None


def test_none_namespace_has_no_ns_segment():
    g = cache(backend="memory://")(counter())
    assert g._cachekit.key_for((1,), {}).startswith("func:")
    h = cache(backend="memory://", namespace="x")(counter())
    assert h._cachekit.key_for((1,), {}).startswith("ns:x:func:")


def test_namespace_with_nul_is_refused():
    # The C API takes namespaces NUL-terminated: a NUL would silently name another one.
    with pytest.raises(ValueError, match="NUL"):
        cache(backend="memory://", namespace="a\0b")(counter())


def test_l1_off_hits_come_from_l2():
    g = cache(backend="memory://", l1=False)(counter())
    g(1)
    g(1)
    info = g.cache_info()
    assert info.l2_hits == 1 and info.l1_hits == 0


def test_object_mode_swr_refreshes_in_background():
    calls = []

    @cache(backend=None, ttl=0.4, swr_threshold_ratio=0.5)
    def get(x):
        calls.append(x)
        return len(calls)

    assert get(1) == 1
    time.sleep(0.3)  # past 0.4 * 0.5 * 1.1
    assert get(1) == 1  # stale value served at once
    deadline = time.time() + 2
    while len(calls) < 2 and time.time() < deadline:
        time.sleep(0.01)
    time.sleep(0.05)
    assert get(1) == 2


def test_l2_swr_refresh(tmp_path):
    calls = []

    @cache(backend="memory://", ttl=1.0, stale_while_revalidate=True, swr_threshold_ratio=0.3)
    def get(x):
        calls.append(x)
        return len(calls)

    assert get(1) == 1
    time.sleep(0.4)
    assert get(1) == 1  # stale, refresh claimed and run in the background
    deadline = time.time() + 3
    while len(calls) < 2 and time.time() < deadline:
        time.sleep(0.01)
    time.sleep(0.1)
    assert get(1) == 2


def test_metrics_text_and_prometheus():
    g = cache(backend="memory://", namespace="prom")(counter())
    g(1), g(1)
    text = g._cachekit.core.metrics_text()
    assert "cache_operations_total" in text
    prom = pytest.importorskip("prometheus_client")
    from cachekit.prometheus import CachekitCollector
    reg = prom.CollectorRegistry()
    reg.register(CachekitCollector([g._cachekit.core]))
    out = prom.generate_latest(reg).decode()
    assert "cache_operations_total" in out


def test_l1_admission_reaches_the_core(monkeypatch):
    monkeypatch.delenv("CACHEKIT_L1_ADMISSION", raising=False)
    # TinyLFU's counters show in the metrics text only when the core's L1 runs it.
    g = cache(backend="memory://", namespace="adm", l1_admission="tinylfu")(counter())
    g(1), g(1)
    assert "cachekit_l1_admitted_total" in g._cachekit.core.metrics_text()
    h = cache(backend="memory://", namespace="adm-lru", l1_admission="lru")(counter())
    h(1)
    assert "cachekit_l1_admitted_total" not in h._cachekit.core.metrics_text()
    # The environment variable chooses when the option is not given.
    monkeypatch.setenv("CACHEKIT_L1_ADMISSION", "tinylfu")
    e = cache(backend="memory://", namespace="adm-env")(counter())
    e(1)
    assert "cachekit_l1_admitted_total" in e._cachekit.core.metrics_text()
    with pytest.raises(ConfigurationError, match="l1_admission"):
        cache(backend="memory://", l1_admission="lfu")(counter())
    monkeypatch.setenv("CACHEKIT_L1_ADMISSION", "bogus")
    with pytest.raises(ConfigurationError, match="CACHEKIT_L1_ADMISSION"):
        cache(backend="memory://", namespace="adm-bad")(counter())(1)
