"""The keyword parameters of `cache(...)` and its presets as inspect.signature and
help() show them: one table, in the order and with the annotations of the typed
overloads in _decorator.py (tests/test_decorator_docs.py compares the two, and
both against the set _config._validate accepts). The decorator itself still takes
**kw: an option left out is "not given", which can differ from any value passed."""
from __future__ import annotations

import inspect
from typing import Any

from cachekit._config import _PRESETS


class _Annotation(str):
    """An annotation kept as its source text (as `from __future__ import annotations`
    keeps them), printed without the quotes a plain string gets in a signature."""

    def __repr__(self) -> str:
        return str(self)


class _NotGiven:
    """The default of an option whose absence means something of its own (backend:
    the environment's, decided at the first call; encryption: no choice made)."""

    def __repr__(self) -> str:
        return "<not given>"


NOT_GIVEN: Any = _NotGiven()

# name, annotation (the overloads' text, as ast.unparse spells it), default of plain `cache`.
PARAMS: tuple[tuple[str, str, Any], ...] = (
    ("ttl", "float | None", None),
    ("namespace", "str | None", None),
    ("backend", "Any", NOT_GIVEN),
    ("serializer", "str | Any", "default"),
    ("integrity_checking", "bool", True),
    ("key", "Callable[..., str] | None", None),
    ("interop", "str | None", None),
    ("encryption", "bool | EncryptionConfig | Mapping[str, Any] | None", NOT_GIVEN),
    ("master_key", "str | bytes | None", None),
    ("tenant", "str | None", None),
    ("fail_closed", "bool | None", None),
    ("l1", "bool | L1CacheConfig | Mapping[str, Any] | None", NOT_GIVEN),
    ("l1_enabled", "bool", True),
    ("l1_max_size_mb", "float | None", None),
    ("l1_admission", "Literal['lru', 'tinylfu'] | None", None),
    ("max_entries", "int | None", None),
    ("stale_while_revalidate", "bool | None", None),
    ("swr_enabled", "bool", NOT_GIVEN),
    ("swr_threshold_ratio", "float", 0.5),
    ("stale_ttl", "int | None", None),
    ("refresh_ttl_on_get", "bool", False),
    ("ttl_refresh_threshold", "float", 0.5),
    ("circuit_breaker", "CircuitBreakerConfig | Mapping[str, Any] | None", None),
    ("backpressure", "BackpressureConfig | Mapping[str, Any] | None", None),
    ("monitoring", "MonitoringConfig | Mapping[str, Any] | None", None),
    ("tenant_extractor", "TenantExtractor | Callable[[tuple[Any, ...], dict[str, Any]], object] | None", None),
    ("single_tenant_mode", "bool", False),
    ("deployment_uuid", "str | None", None),
    ("config", "DecoratorConfig | Mapping[str, Any] | None", None),
)

# cache.local's (the reference's): its own annotations, as its overload spells them.
LOCAL_PARAMS: tuple[tuple[str, str], ...] = (
    ("ttl", "int"), ("max_entries", "int"), ("namespace", "str | None"), ("key", "Callable[..., str] | None"),
)


def call_signature(preset: str) -> inspect.Signature:
    """`__call__`'s signature (self included) for `cache` or a preset: the preset's defaults."""
    defaults = _PRESETS.get(preset, {})
    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD),
              inspect.Parameter("fn", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None,
                                annotation=_Annotation("Callable[..., Any] | None"))]
    if preset == "local":
        table = [(name, ann, defaults.get(name)) for name, ann in LOCAL_PARAMS]
    else:
        table = [(name, ann, defaults.get(name, default)) for name, ann, default in PARAMS]
    params += [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default,
                                 annotation=_Annotation(ann)) for name, ann, default in table]
    return inspect.Signature(params)
