"""cachekit.key_generator (the reference's module): CacheKeyGenerator, whose keys are the
core's auto-mode keys (cachekit_key_auto), the ones the decorator stores under."""
from __future__ import annotations

from typing import Any, Callable, Optional

from cachekit import _codec


class CacheKeyGenerator:
    """generate_key(func, args, kwargs, ...) -> the decorator's key for that call."""

    def generate_key(self, func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any],
                     namespace: Optional[str] = None, integrity_checking: bool = True,
                     serializer_type: str = "std") -> str:
        module = str(getattr(func, "__module__", None) or "__main__")
        qualname = str(getattr(func, "__qualname__", None) or getattr(func, "__name__", "fn"))
        return _codec.auto_key(namespace, module, qualname, tuple(args), dict(kwargs), integrity_checking,
                               serializer_type)

    @classmethod
    def serializer_code(cls, serializer_type: str) -> str:
        """The code a key ends with for this serializer (after its integrity digit): the
        core's table, or the reference's code + 4 hex digits for an unknown identity."""
        if not isinstance(serializer_type, str):
            raise TypeError(f"serializer_type must be str, got {type(serializer_type).__name__}")
        if not serializer_type:
            raise ValueError("serializer_type must not be empty")
        key = _codec.auto_key(None, "m", "f", (), {}, True, serializer_type)
        return key.rsplit(":", 1)[1][1:]


__all__ = ["CacheKeyGenerator"]
