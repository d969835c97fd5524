"""cachekit.health (the reference's module): its HealthStatus and HealthLevel enums. The
health checker and its handlers are not provided: a decorated function's
cache_info().backend_health is the core's view of its L2 (docs/python.md)."""
from __future__ import annotations

from enum import Enum

from cachekit._unavailable import module_getattr


class HealthStatus(Enum):
    HEALTHY = "healthy"
    DEGRADED = "degraded"
    UNHEALTHY = "unhealthy"


class HealthLevel(Enum):
    PING = "ping"
    BASIC = "basic"
    FULL = "full"


_WHY = ("the reference's health checker probes its own Redis pool and L1; here read a function's "
        "cache_info().backend_health (the core's L2 health) or the core's metrics (cachekit.prometheus)")
UNAVAILABLE = {n: _WHY for n in ("HealthChecker", "HealthCheckResult", "ComponentHealth", "get_health_checker",
                                 "health_check_handler", "async_health_check_handler")}
__getattr__ = module_getattr(__name__, UNAVAILABLE)

__all__ = ["HealthLevel", "HealthStatus"]
