#include "metrics/cache_metrics.hpp"

#include <atomic>

namespace cachekit::metrics {
namespace {
std::atomic<uint64_t> next_cache_id{1};

struct LastLookup {
    uint64_t cache_id = 0;
    std::string ns;
    NamespaceMetrics *metrics = nullptr;
};
thread_local LastLookup last_lookup;
}  // namespace

CacheMetrics::CacheMetrics() : id_(next_cache_id.fetch_add(1, std::memory_order_relaxed)) {}

NamespaceMetrics &CacheMetrics::of(std::string_view ns) {
    LastLookup &last = last_lookup;
    if (last.cache_id == id_ && last.ns == ns) return *last.metrics;
    NamespaceMetrics *found = nullptr;
    {
        std::shared_lock lock(mutex_);
        auto it = by_ns_.find(std::string(ns));
        if (it != by_ns_.end()) found = it->second.get();
    }
    if (!found) {
        std::unique_lock lock(mutex_);
        auto &slot = by_ns_[std::string(ns)];
        if (!slot) slot = std::make_unique<NamespaceMetrics>(std::string(ns));
        found = slot.get();
    }
    last.cache_id = id_;
    last.ns.assign(ns);
    last.metrics = found;
    return *found;
}

std::vector<const NamespaceMetrics *> CacheMetrics::all() const {
    std::shared_lock lock(mutex_);
    std::vector<const NamespaceMetrics *> out;
    out.reserve(by_ns_.size());
    for (const auto &[name, m] : by_ns_) out.push_back(m.get());
    return out;
}

}  // namespace cachekit::metrics
