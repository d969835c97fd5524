"""The reference SDK's (cachekit-py 0.24.1) public modules and names (issue 28): code
importing them runs, a RedisBackend / FileBackend a user builds works as backend=, keys
and interop helpers are the reference's (the expected values were computed with it),
and a name that cannot be honoured raises ImportError saying why."""
from __future__ import annotations

import importlib
import os
import subprocess
import sys
import textwrap

import pytest

import cachekit
from cachekit import ConfigurationError, cache, set_default_backend

# The reference's __all__ of each module (a name marked * is refused with a reason).
REFERENCE = {
    "cachekit": ["cache", "CacheInfo", "CircuitBreakerConfig", "DecoratorConfig", "decode_interop_value",
                 "encode_interop_value", "generate_interop_key", "HealthLevel", "HealthStatus", "InteropError",
                 "InvalidationOutcome", "*HealthCheckResult", "*get_health_checker", "*health_check_handler",
                 "*async_health_check_handler"],
    "cachekit.backends": ["BaseBackend", "BaseBackendConfig", "inherit_config", "TTLInspectableBackend",
                          "LockableBackend", "KeyTrackableBackend", "TimeoutConfigurableBackend", "BackendProvider",
                          "BackendError", "BackendErrorType", "CapabilityNotAvailableError", "RedisBackend",
                          "MemcachedBackend"],
    "cachekit.backends.redis": ["RedisBackend", "RedisBackendConfig"],
    "cachekit.backends.file": ["FileBackend", "FileBackendConfig"],
    "cachekit.config": ["DecoratorConfig", "BackpressureConfig", "CircuitBreakerConfig", "EncryptionConfig",
                        "L1CacheConfig", "MonitoringConfig", "UNSET", "set_default_backend", "get_default_backend",
                        "ConfigurationError", "*CachekitConfig", "*get_settings", "*reset_settings",
                        "*validate_encryption_config"],
    "cachekit.config.nested": ["BackpressureConfig", "CircuitBreakerConfig", "EncryptionConfig", "L1CacheConfig",
                               "MonitoringConfig"],
    "cachekit.serializers": ["ArrowSerializer", "AutoSerializer", "DecryptionAuthenticationError",
                             "OrjsonSerializer", "StandardSerializer", "SerializationError", "SerializerProtocol",
                             "get_serializer", "SERIALIZER_REGISTRY", "*EncryptionWrapper", "*KeyringConfigurationError",
                             "*EncryptionError", "*TenantMismatchError", "*CrossSDKSerializerProtocol",
                             "*EnvelopeShapeError", "*SerializationFormat", "*SerializationMetadata",
                             "*SuspiciousCacheEntryError", "*benchmark_serializers", "*get_available_serializers",
                             "*get_serializer_info"],
    "cachekit.key_generator": ["CacheKeyGenerator"],
    "cachekit.decorators": ["DecoratorConfig", "cache", "*FeatureOrchestrator"],
    "cachekit.decorators.wrapper": ["CacheInfo", "InvalidationOutcome"],
    "cachekit.interop": ["InteropDecodeError", "InteropError", "RESERVED_NAMESPACES", "SEGMENT_RE", "args_hash",
                         "bind_flat_args", "canonical_args_bytes", "decode_interop_value", "encode_interop_value",
                         "ensure_interop_backend_compatible", "generate_interop_key", "validate_interop_config",
                         "validate_segment"],
}
CASES = [(m, n) for m, names in REFERENCE.items() for n in names]


@pytest.mark.parametrize("module,name", CASES, ids=[f"{m}.{n}" for m, n in CASES])
def test_every_reference_name_imports_or_says_why(module, name):
    mod = importlib.import_module(module)
    if name.startswith("*"):
        with pytest.raises(ImportError, match="not provided by libcachekit's wrapper: .+"):
            getattr(mod, name[1:])
        with pytest.raises(ImportError, match=name[1:]):
            exec(f"from {module} import {name[1:]}", {})
    else:
        assert getattr(mod, name) is not None


def test_unknown_names_stay_attribute_errors():
    import cachekit.config
    assert not hasattr(cachekit, "no_such_name") and not hasattr(cachekit.config, "no_such_name")


def test_memcached_is_refused_with_the_reason():
    from cachekit.backends import MemcachedBackend
    with pytest.raises(ConfigurationError, match="Memcached is not available in libcachekit"):
        MemcachedBackend()


def _counted(calls):
    def lookup(x):
        calls.append(x)
        return {"x": x}
    return lookup


def test_file_backend_object_as_backend(tmp_path):
    from cachekit.backends.file import FileBackend, FileBackendConfig

    b = FileBackend(FileBackendConfig(cache_dir=tmp_path / "c"))
    calls: list = []
    f = cache(backend=b, ttl=60)(_counted(calls))
    assert f(1) == f(1) == {"x": 1} and calls == [1]
    assert os.listdir(tmp_path / "c")  # stored in the core's file backend there
    spec = f._cachekit.core_spec[1]  # the core's own file backend, not a user-defined object's bridge
    assert spec["backend_url"] == "file://" + str(tmp_path / "c") and "user_backend" not in spec
    # Its own BaseBackend methods work on the same directory.
    b.set("k", b"v", ttl=60)
    assert b.get("k") == b"v" and b.exists("k") and b.delete("k") and b.get("k") is None and not b.exists("k")
    assert b.health_check()[0] is True


def test_file_backend_refuses_limits_it_cannot_honour(tmp_path):
    from cachekit.backends.file import FileBackend, FileBackendConfig

    with pytest.raises(ConfigurationError, match="max_entry_count cannot be set here"):
        FileBackend(FileBackendConfig(cache_dir=tmp_path, max_entry_count=500))


def test_redis_backend_object_as_backend_and_default(redis_server, unique_ns):
    from cachekit.backends import RedisBackend
    from cachekit.backends.redis import RedisBackendConfig

    for b in (RedisBackend(redis_server.url), RedisBackend(RedisBackendConfig(redis_url=redis_server.url))):
        calls: list = []
        f = cache(backend=b, ttl=60, namespace=unique_ns)(_counted(calls))
        assert f(1) == f(1) == {"x": 1} and calls == [1]
        assert f.invalidate_cache(1) is cachekit.InvalidationOutcome.SUCCEEDED
        b.set(unique_ns + ":raw", b"v", ttl=60)
        assert b.get(unique_ns + ":raw") == b"v" and b.health_check()[0] is True
    set_default_backend(RedisBackend(redis_server.url))
    try:
        calls = []
        g = cache(ttl=60, namespace=unique_ns + "d")(_counted(calls))
        assert g(2) == g(2) and calls == [2] and not g._cachekit.object_mode
    finally:
        set_default_backend(None)


def test_redis_backend_from_the_environment(monkeypatch, redis_server):
    from cachekit.backends import RedisBackend

    monkeypatch.setenv("REDIS_URL", redis_server.url)
    assert RedisBackend().core_url == redis_server.url
    with pytest.raises(ConfigurationError, match="client_provider"):
        RedisBackend(client_provider=object())
    with pytest.raises(ConfigurationError, match="redis://"):
        RedisBackend("/tmp/dir")


def test_decorator_config_is_read():
    from cachekit.config import DecoratorConfig, L1CacheConfig

    calls: list = []
    f = cache(config=DecoratorConfig(ttl=60, namespace="cfg", backend=None, l1=L1CacheConfig()))(_counted(calls))
    assert f(1) == f(1) and calls == [1] and f._cachekit.object_mode and f._cachekit.ttl == 60.0
    with pytest.raises(ValueError, match="non-negative"):
        DecoratorConfig(ttl=-1)
    with pytest.raises(TypeError, match="CircuitBreakerConfig"):
        DecoratorConfig(circuit_breaker={"enabled": True})


def test_serializer_objects_are_keyed_as_the_reference_keys_instances():
    # The reference keys an instance as "<custom>:" + its class name (code x4874 for
    # AutoSerializer, x8542 for StandardSerializer), not as its registry name.
    from cachekit.serializers import AutoSerializer, StandardSerializer, get_serializer

    for ser, code in ((AutoSerializer(), ":1x4874"), (StandardSerializer(), ":1x8542"), ("auto", ":1a")):
        g = cache(backend="memory://", serializer=ser)(reference_f)
        assert g._cachekit.key_for((1,), {}).endswith(code)
    assert isinstance(get_serializer("pythonic"), AutoSerializer) and get_serializer("default").name == "default"
    with pytest.raises(ValueError, match="Unknown serializer"):
        get_serializer("nope")


def reference_f(x):
    return x


def test_keys_and_interop_helpers_are_the_reference_values():
    # Computed with cachekit-py 0.24.1 for the same inputs.
    from cachekit.interop import args_hash, canonical_args_bytes, generate_interop_key, validate_segment
    from cachekit.key_generator import CacheKeyGenerator

    assert args_hash([1, "a"]) == "2511af4f1227c50aebf6cfdc2ad507d553d87432c4d24293895c336d70112eb7"
    assert canonical_args_bytes([1, "a"]).hex() == "9201a161"
    assert generate_interop_key("users", "get", [1]) == \
        "users:get:405f09a3617bcc1425ea95b9840d9c2713e3ecebd5a3227abc599317b732e21a"
    reference_f.__module__, reference_f.__qualname__ = "__main__", "f"
    assert CacheKeyGenerator().generate_key(reference_f, (1,), {}, namespace="n") == \
        "ns:n:func:__main__.f:args:386979f533ce537f0c42d385c8174948ebd58566ad81b32bebb830a187cb4387:1s"
    assert (CacheKeyGenerator.serializer_code("auto"), CacheKeyGenerator.serializer_code("zzz")) == ("a", "x6ccb")
    with pytest.raises(cachekit.InteropError):
        validate_segment("namespace", "ns")


def test_a_prefork_parent_backend_object_serves_its_children(tmp_path):
    # Made at import in the parent; each forked child opens its own core (no shared socket).
    script = textwrap.dedent(f"""
        import os
        from cachekit import cache
        from cachekit.backends.file import FileBackend, FileBackendConfig
        b = FileBackend(FileBackendConfig(cache_dir={str(tmp_path / 'c')!r}))
        f = cache(backend=b, ttl=60)(lambda x: os.getpid())
        first = f(1)
        pid = os.fork()
        if pid == 0:
            os._exit(0 if f(1) == first else 3)
        _, st = os.waitpid(pid, 0)
        print(os.waitstatus_to_exitcode(st))
    """)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["0"]
