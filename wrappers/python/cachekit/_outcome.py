"""InvalidationOutcome: what one exact-key invalidate_cache / ainvalidate_cache call did
in L2, the reference's (cachekit-py 0.24.1) enum with its names and values."""
from __future__ import annotations

from enum import Enum


class InvalidationOutcome(Enum):
    """What one exact-key ``invalidate_cache(*args)`` did in L2 (invalidation never raises
    on a backend failure under fail-open, so this is how a caller learns it). Whole-function
    invalidation (no arguments on a function that takes parameters) returns ``None``.

    - ``SUCCEEDED``: the core's L2 delete returned normally (the entry is not in L2).
    - ``FAILED``: the L2 delete failed (the core counted a backend error or timeout), or
      the entry could not be addressed; it may still be served from L2.
    - ``NO_L2``: there is no L2: ``backend=None``, ``cache.local`` or a zero-config
      function settled in process.
    """

    SUCCEEDED = "succeeded"
    FAILED = "failed"
    NO_L2 = "no_l2"


__all__ = ["InvalidationOutcome"]
