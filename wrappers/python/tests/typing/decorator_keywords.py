# pyright: reportUnnecessaryTypeIgnoreComment=true
"""The typed keywords of `cache(...)` and its presets, checked by the meson suite
python-typing with mypy --strict and pyright (tests/interop/python_typing.py);
never run.

The first part must type-check: every keyword the decorator takes, in the forms the
docs show. Each line of wrong_keywords() must stay an error for both checkers:
mypy --strict reports a `# type: ignore` that is no longer needed, and so does
pyright here (reportUnnecessaryTypeIgnoreComment, the line above), so a keyword
typed too loosely (or a return to **kw: Any) fails the suite."""
from __future__ import annotations

import pathlib
from typing import Any

from cachekit import Backend, CircuitBreakerConfig, DecoratorConfig, cache
from cachekit.config.nested import BackpressureConfig, EncryptionConfig, L1CacheConfig, MonitoringConfig

KEY = "ab" * 32


class Extractor:
    def extract(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
        return "6ba7b810-9dad-11d1-80b4-00c04fd430c8"


@cache(ttl=1.5, namespace="ns", backend="redis://127.0.0.1:6379", serializer="auto", integrity_checking=False,
       key=lambda x: str(x), l1=False, l1_enabled=True, l1_max_size_mb=8, l1_admission="tinylfu", max_entries=10,
       stale_while_revalidate=True, swr_enabled=False, swr_threshold_ratio=0.8, stale_ttl=0,
       refresh_ttl_on_get=True, ttl_refresh_threshold=0.3)
def everyday(x: int) -> int:
    return x


@cache(backend=pathlib.Path("/tmp/cache"), interop="get_user", encryption=False, fail_closed=True,
       circuit_breaker=CircuitBreakerConfig(failure_threshold=3), backpressure={"max_concurrent_requests": 8},
       monitoring=MonitoringConfig())
def interop(user_id: int) -> dict[str, int]:
    return {"id": user_id}


@cache.secure(master_key=KEY, backend=Backend("memory://"), tenant_extractor=Extractor())
def multi_tenant(user_id: int) -> str:
    return str(user_id)


@cache.secure(master_key=bytes(32), backend="memory://", deployment_uuid="6ba7b810-9dad-11d1-80b4-00c04fd430c8",
              single_tenant_mode=True, tenant_extractor=None)
def single_tenant(user_id: int) -> str:
    return str(user_id)


@cache(encryption=EncryptionConfig(enabled=True, master_key=KEY), backend="memory://",
       tenant_extractor=lambda args, kwargs: str(args[0]), l1=L1CacheConfig(max_size_mb=4),
       backpressure=BackpressureConfig(max_concurrent_requests=4))
def nested(x: int) -> int:
    return x


@cache.production(config=DecoratorConfig(ttl=60, backend=None), namespace="override", tenant="t1")
def configured(x: int) -> int:
    return x


@cache.minimal(ttl=None)
def forever(x: int) -> int:
    return x


@cache.dev(backend=None)
def in_dev(x: int) -> int:
    return x


@cache.test(backend=None)
def in_tests(x: int) -> int:
    return x


@cache.local(ttl=30, max_entries=100, namespace="local", key=lambda x: f"k{x}")
def local(x: int) -> int:
    return x


def use() -> None:
    total: int = everyday(1) + nested(2) + configured(3) + forever(4) + in_dev(5) + in_tests(6) + local(7)
    print(total, interop(1), multi_tenant(1), single_tenant(1))


def wrong_keywords() -> None:
    cache(ttl="60")  # type: ignore[call-overload]
    cache(namespace=1)  # type: ignore[call-overload]
    cache(tll=60)  # type: ignore[call-overload]
    cache(integrity_checking="yes")  # type: ignore[call-overload]
    cache(key="user")  # type: ignore[call-overload]
    cache(l1_admission="fifo")  # type: ignore[call-overload]
    cache(circuit_breaker=True)  # type: ignore[call-overload]
    cache(config="cfg")  # type: ignore[call-overload]
    cache.production(max_entries="10")  # type: ignore[call-overload]
    cache.secure(master_key=32)  # type: ignore[call-overload]
    cache.minimal(swr_threshold_ratio="0.5")  # type: ignore[call-overload]
    cache.test(stale_ttl=1.5)  # type: ignore[call-overload]
    cache.dev(tenant_extractor="tenant")  # type: ignore[call-overload]
    cache.local(ttl=1.5)  # type: ignore[call-overload]
    cache.local(backend=None)  # type: ignore[call-overload]
    cache.local(serializer="auto")  # type: ignore[call-overload]
