"""DecoratorConfig (cachekit.config.decorator): the reference's fields and defaults, for
@cache(config=DecoratorConfig(...)), which reads it field by field."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Callable, Optional

from cachekit._core import ConfigurationError, lib
from cachekit._defaults import get_default_backend, set_default_backend
from cachekit.config.nested import (BackpressureConfig, CircuitBreakerConfig, EncryptionConfig, L1CacheConfig,
                                    MonitoringConfig)


class _Unset(Enum):
    """An omitted backend (resolved at the first call), unlike backend=None (L1 only)."""

    UNSET = "UNSET"


UNSET = _Unset.UNSET


@dataclass
class DecoratorConfig:
    ttl: Optional[int] = None
    stale_ttl: Optional[int] = None
    swr_by_default: bool = False
    namespace: Optional[str] = None
    serializer: Any = "default"
    integrity_checking: bool = True
    key: Optional[Callable[..., str]] = None
    interop: Optional[str] = None
    refresh_ttl_on_get: bool = False
    ttl_refresh_threshold: float = 0.5
    backend: Any = UNSET
    l1: L1CacheConfig = field(default_factory=L1CacheConfig)
    circuit_breaker: CircuitBreakerConfig = field(default_factory=CircuitBreakerConfig)
    backpressure: BackpressureConfig = field(default_factory=BackpressureConfig)
    monitoring: MonitoringConfig = field(default_factory=MonitoringConfig)
    encryption: EncryptionConfig = field(default_factory=EncryptionConfig)

    def __post_init__(self) -> None:
        # The reference's construction-time checks (the decorator checks the rest).
        if self.ttl is not None:
            if not math.isfinite(self.ttl):
                raise ValueError(f"ttl must be a finite number, got {self.ttl!r}")
            if self.ttl < 0:
                raise ValueError(f"ttl must be non-negative, got {self.ttl}")
        if not 0.0 <= self.ttl_refresh_threshold <= 1.0:
            raise ConfigurationError(lib.CACHEKIT_EINVAL,
                                     f"ttl_refresh_threshold must be 0.0-1.0, got {self.ttl_refresh_threshold}")
        if not isinstance(self.integrity_checking, bool):
            raise ConfigurationError(lib.CACHEKIT_EINVAL, "integrity_checking must be a bool, got "
                                     f"{type(self.integrity_checking).__name__}")
        if isinstance(self.encryption, bool):
            self.encryption = EncryptionConfig(enabled=self.encryption)
        if not isinstance(self.circuit_breaker, CircuitBreakerConfig):
            raise TypeError("circuit_breaker must be a cachekit.config.nested.CircuitBreakerConfig, got "
                            f"{type(self.circuit_breaker).__module__}.{type(self.circuit_breaker).__qualname__}")
        for group in (self.l1, self.circuit_breaker, self.backpressure, self.monitoring, self.encryption):
            group.validate()


__all__ = ["DecoratorConfig", "UNSET", "get_default_backend", "set_default_backend"]
