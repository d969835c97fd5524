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

// The L1's TinyLFU admission counters (only a cache with l1_admission =
// tinylfu shows them): candidates admitted over a victim, and rejected.
std::string l1_admission_text(uint64_t admitted, uint64_t rejected);

}  // namespace cachekit::metrics
