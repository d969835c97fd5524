"""cachekit.decorators.wrapper (the reference's module of CacheInfo and InvalidationOutcome)."""
from __future__ import annotations

from cachekit._outcome import InvalidationOutcome
from cachekit._stats import CacheInfo

__all__ = ["CacheInfo", "InvalidationOutcome"]
