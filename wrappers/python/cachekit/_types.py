"""The static types of the public API: what a decorated function is (for
mypy --strict users; nothing here runs on a call)."""
from __future__ import annotations

from typing import Any, Callable, ParamSpec, Protocol, TypeVar

from cachekit._stats import CacheInfo

P = ParamSpec("P")
R = TypeVar("R")


class CachedFunction(Protocol[P, R]):
    """A function decorated with @cache: called as the function itself, plus
    the reference's methods. For a coroutine function, R is its coroutine and
    invalidate_cache / ainvalidate_cache return awaitables."""

    __wrapped__: Callable[P, R]

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R: ...

    def cache_info(self) -> CacheInfo: ...

    def cache_clear(self) -> None: ...

    def invalidate_cache(self, *args: Any, **kwargs: Any) -> Any: ...
