"""cachekit.config: the reference SDK's (cachekit-py 0.24.1) configuration names here.
DecoratorConfig and the nested groups are read by @cache(config=...) field by field;
the pydantic settings singleton is not provided (the core reads its environment)."""
from __future__ import annotations

from cachekit._core import ConfigurationError
from cachekit._unavailable import module_getattr
from cachekit.config.decorator import UNSET, DecoratorConfig, get_default_backend, set_default_backend
from cachekit.config.nested import (BackpressureConfig, CircuitBreakerConfig, EncryptionConfig, L1CacheConfig,
                                    MonitoringConfig)

_SETTINGS = ("the reference's pydantic settings singleton: libcachekit reads CACHEKIT_* itself "
             "(docs/configuration.md), and each option is a decorator argument")
__getattr__ = module_getattr(__name__, {
    "CachekitConfig": _SETTINGS, "get_settings": _SETTINGS, "reset_settings": _SETTINGS,
    "validate_encryption_config": "encryption options are checked when a function is decorated "
                                  "(@cache(encryption=..., master_key=...))",
})

__all__ = [
    "DecoratorConfig", "BackpressureConfig", "CircuitBreakerConfig", "EncryptionConfig", "L1CacheConfig",
    "MonitoringConfig", "UNSET", "set_default_backend", "get_default_backend", "ConfigurationError",
]
