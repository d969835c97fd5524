"""cachekit.decorators (the reference's module): the cache decorator and DecoratorConfig."""
from __future__ import annotations

from cachekit._decorator import cache
from cachekit._unavailable import module_getattr
from cachekit.config import DecoratorConfig

__getattr__ = module_getattr(__name__, {
    "FeatureOrchestrator": "the reference's per-function feature object: circuit breaking, backpressure and "
                           "metrics are libcachekit's, configured by the decorator's options",
})

__all__ = ["DecoratorConfig", "cache"]
