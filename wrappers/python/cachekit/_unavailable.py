"""Names of the reference's modules that this wrapper cannot honour: reading one raises
ImportError with the reason (so `from cachekit.x import Name` says why), where a name
that never existed raises the usual AttributeError."""
from __future__ import annotations

from typing import Any, Callable


def module_getattr(module: str, reasons: dict[str, str]) -> Callable[[str], Any]:
    def __getattr__(name: str) -> Any:
        why = reasons.get(name)
        if why is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        raise ImportError(f"{module}.{name} (cachekit-py) is not provided by libcachekit's wrapper: {why}",
                          name=module)

    return __getattr__
