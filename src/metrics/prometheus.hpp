// The Prometheus text exposition of a cache's metrics, with the reference
// SDK's series names where they apply.
#pragma once

#include <string>

#include "metrics/cache_metrics.hpp"

namespace cachekit::metrics {

struct ExpositionContext {
    std::string serializer = "default";  // the serializer label
    int breaker_state = 0;               // CACHEKIT_BREAKER_*
    bool has_backend = false;
};

std::string prometheus_text(const CacheMetrics &metrics, const ExpositionContext &ctx);

}  // namespace cachekit::metrics
