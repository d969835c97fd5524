// The metrics of one cache, per namespace: recorded without a shared lock on
// the hot path (striped counters; the first namespaces found through a small
// table that is only ever written once per slot), read exactly.
#pragma once

#include <array>
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "metrics/histogram.hpp"
#include "metrics/striped_counter.hpp"

namespace cachekit::metrics {

struct NamespaceMetrics {
    explicit NamespaceMetrics(std::string name) : ns(std::move(name)) {}
    const std::string ns;
    StripedCounter l1_hits, l2_hits, misses, stores, loads, load_errors, waits;
    StripedCounter stale_served, refreshes, dropped_fills, too_large, invalidations;
    StripedCounter backend_errors, timeouts, corrupt, tampered, wrong_key, downgrade, serializer_mismatch;
    Histogram<kLatencyBucketsMs.size()> l2_latency_ms{kLatencyBucketsMs};
    Histogram<kSizeBucketsBytes.size()> stored_bytes{kSizeBucketsBytes};
    // Where the L1 engine already counts this namespace's hits (a plaintext
    // cache's: every engine hit is a cache hit, so they are not counted twice);
    // set when the record is created, before anyone else sees it.
    const StripedCounter *engine_l1_hits = nullptr;

    uint64_t l1_hits_total() const { return l1_hits.total() + (engine_l1_hits ? engine_l1_hits->total() : 0); }
};

class CacheMetrics {
public:
    // `on_create` sees each namespace's record once, as it is created.
    explicit CacheMetrics(std::function<void(NamespaceMetrics &)> on_create = {});
    NamespaceMetrics &of(std::string_view ns);
    // A stable snapshot of the namespaces (the objects live as long as this).
    std::vector<const NamespaceMetrics *> all() const;

private:
    NamespaceMetrics &find_or_create(std::string_view ns);

    // The first namespaces a cache meets (most caches have one or a few):
    // each slot is set once and never changes, so the lookup reads a line
    // nobody writes. Later namespaces go through the map.
    static constexpr size_t kHotSlots = 8;
    std::array<std::atomic<NamespaceMetrics *>, kHotSlots> hot_{};
    mutable std::shared_mutex mutex_;
    std::unordered_map<std::string, std::unique_ptr<NamespaceMetrics>> by_ns_;
    std::function<void(NamespaceMetrics &)> on_create_;
};

}  // namespace cachekit::metrics
