"""The reference's nested configuration groups (cachekit.config.nested), with its
fields, defaults and validate() checks. The decorator reads them field by field
(docs/python.md: encryption=, l1=, circuit_breaker=, backpressure=, config=)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from cachekit._core import ConfigurationError, lib


def _bad(msg: str) -> ConfigurationError:
    return ConfigurationError(lib.CACHEKIT_EINVAL, msg)


@dataclass
class L1CacheConfig:
    enabled: bool = True
    max_size_mb: Optional[int] = None
    swr_enabled: bool = True
    swr_threshold_ratio: float = 0.5
    swr_retry_interval: float = 10.0

    def validate(self) -> None:
        if self.max_size_mb is not None and self.max_size_mb < 1:
            raise _bad(f"L1 max_size_mb must be >= 1, got {self.max_size_mb}")
        if not 0.0 < self.swr_threshold_ratio <= 1.0:
            raise _bad(f"L1 swr_threshold_ratio must be in (0.0, 1.0], got {self.swr_threshold_ratio}")
        if self.swr_retry_interval < 0:
            raise _bad(f"L1 swr_retry_interval must be >= 0, got {self.swr_retry_interval}")


@dataclass
class CircuitBreakerConfig:
    enabled: bool = True
    failure_threshold: int = 5
    success_threshold: int = 3
    recovery_timeout: float = 30.0
    half_open_requests: int = 3

    def validate(self) -> None:
        from cachekit import _options
        _options.breaker_options(self)  # the decorator's checks, the reference's rules


@dataclass
class BackpressureConfig:
    enabled: bool = True
    max_concurrent_requests: int = 100
    queue_size: int = 1000
    timeout: float = 0.1

    def validate(self) -> None:
        from cachekit import _options
        _options.backpressure_options(self)


@dataclass
class MonitoringConfig:
    """Accepted and not used: the core's metrics are always on (cachekit.prometheus)."""

    collect_stats: bool = True
    enable_structured_logging: bool = True
    enable_prometheus_metrics: bool = True

    def validate(self) -> None:
        return None


@dataclass
class EncryptionConfig:
    enabled: Optional[bool] = None
    master_key: Optional[str] = field(default=None, repr=False)
    tenant_extractor: Any = None
    single_tenant_mode: bool = False
    deployment_uuid: Optional[str] = None
    fail_closed: Optional[bool] = None

    def validate(self) -> None:
        if self.tenant_extractor is not None and self.single_tenant_mode:
            raise _bad("Cannot use both tenant_extractor and single_tenant_mode. Choose multi-tenant "
                       "(tenant_extractor) OR single-tenant (single_tenant_mode=True).")
        if self.master_key is not None:
            from cachekit import _options
            _options.master_key_hex(self.master_key)


__all__ = ["BackpressureConfig", "CircuitBreakerConfig", "EncryptionConfig", "L1CacheConfig", "MonitoringConfig"]
