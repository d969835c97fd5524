"""The static types of the public API: what a decorated function is (for
mypy --strict and pyright users; nothing here runs on a call)."""
from __future__ import annotations

from typing import Any, Awaitable, Callable, Concatenate, ParamSpec, Protocol, TypeVar, overload

from cachekit._outcome import InvalidationOutcome
from cachekit._stats import CacheInfo

P = ParamSpec("P")
P2 = ParamSpec("P2")
R = TypeVar("R")
R_co = TypeVar("R_co", covariant=True)
S = TypeVar("S")
S_contra = TypeVar("S_contra", contravariant=True)


class _CacheMethods(Protocol):
    """The reference's methods on a decorated function. invalidate_cache's result is
    an InvalidationOutcome (None for the whole function), or an awaitable of it for a
    coroutine function (Any: one type cannot say both); ainvalidate_cache is awaited in both."""

    def cache_info(self) -> CacheInfo:
        """This function's counters: hits, misses, L1/L2 hits, sizes, backend health."""
        ...

    def cache_clear(self) -> None:
        """Reset the counters, then invalidate every entry of this function."""
        ...

    def invalidate_cache(self, *args: Any, **kwargs: Any) -> Any:
        """Drop the entry of these arguments (none, on a function with parameters: every entry)."""
        ...

    def ainvalidate_cache(self, *args: Any, **kwargs: Any) -> Awaitable[InvalidationOutcome | None]:
        """invalidate_cache as a coroutine (on sync functions too)."""
        ...


class BoundCachedFunction(_CacheMethods, Protocol[P, R_co]):
    """A decorated method read from an instance, or a decorated classmethod: its
    first parameter bound, the cache methods kept."""

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R_co: ...


class CachedFunction(_CacheMethods, Protocol[P, R]):
    """A function decorated with @cache: called as the function itself, plus the
    reference's methods; a descriptor like a function, so a decorated method read
    from an instance binds its first parameter (and from its class does not).
    For a coroutine function, R is its coroutine."""

    __wrapped__: Callable[P, R]

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R: ...

    @overload
    def __get__(self, instance: None, owner: type[Any] | None = None) -> CachedFunction[P, R]: ...

    @overload
    def __get__(self: CachedFunction[Concatenate[S, P2], R], instance: S,
                owner: type[Any] | None = None) -> BoundCachedFunction[P2, R]: ...

    # A first parameter that does not take the instance: @staticmethod above @cache
    # (pyright hands it to __get__ as well), read unbound.
    @overload
    def __get__(self, instance: object, owner: type[Any] | None = None) -> CachedFunction[P, R]: ...

    def __get__(self, instance: Any, owner: type[Any] | None = None) -> Any: ...


class CachedClassFunction(_CacheMethods, Protocol[S_contra, P, R_co]):
    """A decorated function whose first parameter takes a class: a classmethod's
    (`@classmethod` above `@cache`; type checkers give its `cls` the type
    type[Class]). Type checkers hand a classmethod of a callable object to its
    __get__ with no instance, so read from its class or an instance it is bound."""

    @property
    def __wrapped__(self) -> Callable[Concatenate[type[S_contra], P], R_co]: ...

    def __call__(self, cls: type[S_contra], /, *args: P.args, **kwargs: P.kwargs) -> R_co: ...

    def __get__(self, instance: Any, owner: type[Any] | None = None) -> BoundCachedFunction[P, R_co]: ...


class TenantExtractor(Protocol):
    """tenant_extractor= as an object: each call's tenant (a UUID) from its arguments."""

    def extract(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> object: ...


class AnyFirst:
    """Never made: a function whose first parameter takes it (typed Any, object or a
    bare TypeVar, unannotated, or *args) is no classmethod, though it would match the
    classmethod overload; the decorator's first overload catches it before and types it
    loosely (arguments and result unchecked) rather than wrongly."""

    __slots__ = ()


class CacheDecorator(Protocol):
    """What `cache(...)` and the presets called with options return."""

    @overload
    def __call__(self, fn: Callable[Concatenate[AnyFirst, P], Any], /) -> CachedFunction[..., Any]: ...

    @overload
    def __call__(self, fn: Callable[Concatenate[type[S], P], R], /) -> CachedClassFunction[S, P, R]: ...  # pyright: ignore[reportOverlappingOverload]

    @overload
    def __call__(self, fn: Callable[P, R], /) -> CachedFunction[P, R]: ...


__all__ = ["BoundCachedFunction", "CacheDecorator", "CachedClassFunction", "CachedFunction", "TenantExtractor"]
