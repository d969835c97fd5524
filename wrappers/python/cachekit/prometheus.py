"""Optional prometheus_client integration: re-expose the core's metrics.

    from prometheus_client import REGISTRY
    from cachekit.prometheus import CachekitCollector
    REGISTRY.register(CachekitCollector())

The collector parses cachekit_cache_metrics_text of every cache handle this
process created (or the ones given) at each scrape. Metric families that occur
in several handles are merged (samples keep their labels).
"""
from __future__ import annotations

from typing import Any, Iterable, Iterator, Optional

try:
    from prometheus_client.parser import text_string_to_metric_families
    from prometheus_client.registry import Collector
    HAVE_PROMETHEUS = True
except ImportError:  # pragma: no cover - optional dependency
    HAVE_PROMETHEUS = False
    Collector = object  # type: ignore[assignment,misc]


def metrics_text(caches: Optional[Iterable[Any]] = None) -> str:
    """The concatenated Prometheus text of the given (or all) core caches."""
    from cachekit._cores import all_core_caches
    return "".join(c.metrics_text() for c in (caches if caches is not None else all_core_caches()))


class CachekitCollector(Collector):  # type: ignore[misc,valid-type]
    def __init__(self, caches: Optional[Iterable[Any]] = None) -> None:
        if not HAVE_PROMETHEUS:
            raise ImportError("prometheus_client is not installed")
        self._caches = list(caches) if caches is not None else None

    def collect(self) -> Iterator[Any]:
        merged: dict[str, Any] = {}
        from cachekit._cores import all_core_caches
        for c in (self._caches if self._caches is not None else all_core_caches()):
            for fam in text_string_to_metric_families(c.metrics_text()):
                have = merged.get(fam.name)
                if have is None:
                    merged[fam.name] = fam
                else:
                    have.samples.extend(fam.samples)
        yield from merged.values()
