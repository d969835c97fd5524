// The metrics of one cache, per namespace: recorded without a shared lock on
// the hot path (striped counters; the first namespaces found through a small
// table that is only ever written once per slot), read exactly.
//
// Bounded: at most max_series namespaces have series of their own (default
// 1,024; names longer than kMaxSeriesName bytes never do). When a new one
// would pass the limit, the least recently used quarter of the series
// (the first kHotSlots namespaces aside) is folded into the overflow series
// "__other__": their counts are added to it, never lost, and their objects
// are reused for new namespaces. Objects are never freed before the cache
// (a caller may hold one across a slow call), so a caller still holding a
// folded series counts into whichever namespace reuses it: totals stay
// exact, the attribution of that one call may not. A namespace named
// "__other__" is counted in the overflow series.
#pragma once

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "metrics/engine_hits.hpp"
#include "metrics/histogram.hpp"
#include "metrics/striped_counter.hpp"
#include "util/fork_hooks.hpp"

namespace cachekit::metrics {

inline constexpr size_t kDefaultMaxSeries = 1024;
inline constexpr size_t kMaxSeriesName = 256;           // longer names count in the overflow series
inline constexpr std::string_view kOverflowSeries = "__other__";

// One series' values at one moment.
struct SeriesCounts {
    std::string ns;
    uint64_t l1_hits = 0, l2_hits = 0, misses = 0, stores = 0, loads = 0, load_errors = 0, waits = 0;
    uint64_t stale_served = 0, refreshes = 0, dropped_fills = 0, too_large = 0, invalidations = 0;
    uint64_t backend_errors = 0, timeouts = 0, corrupt = 0, tampered = 0, wrong_key = 0, downgrade = 0,
             serializer_mismatch = 0, registry_errors = 0;
    HistogramCounts<kLatencyBucketsMs.size()> l2_latency_ms;
    HistogramCounts<kSizeBucketsBytes.size()> stored_bytes;

    // The numbers (not the name).
    SeriesCounts &operator+=(const SeriesCounts &o) noexcept;
    SeriesCounts &operator-=(const SeriesCounts &o) noexcept;
    bool all_zero() const noexcept;
};

class NamespaceMetrics {
public:
    StripedCounter l1_hits, l2_hits, misses, stores, loads, load_errors, waits;
    StripedCounter stale_served, refreshes, dropped_fills, too_large, invalidations;
    StripedCounter backend_errors, timeouts, corrupt, tampered, wrong_key, downgrade, serializer_mismatch;
    StripedCounter registry_errors;  // key registry writes that failed (the value's write did not)
    Histogram<kLatencyBucketsMs.size()> l2_latency_ms{kLatencyBucketsMs};
    Histogram<kSizeBucketsBytes.size()> stored_bytes{kSizeBucketsBytes};

private:
    friend class CacheMetrics;
    SeriesCounts read() const;  // the object's totals since it was made (engine hits aside)

    // All guarded by the CacheMetrics mutex, except last_used_ (relaxed).
    std::string ns_;  // never changes for a hot slot's series
    SeriesCounts base_;  // read() when it was last folded: the current name's counts are read() - base_
    EngineHitsPin engine_;      // the engine's counter of this namespace's hits, pinned
    uint64_t engine_base_ = 0;  // its hits when pinned
    std::atomic<uint64_t> last_used_{0};
    bool hot_ = false;
};

struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>()(s); }
};

class CacheMetrics final : fork_hooks::Participant {
public:
    explicit CacheMetrics(size_t max_series = kDefaultMaxSeries);
    ~CacheMetrics();
    CacheMetrics(const CacheMetrics &) = delete;
    CacheMetrics &operator=(const CacheMetrics &) = delete;

    // A plaintext cache's L1 engine counts that cache's L1 hits itself, per
    // namespace: report them from `source` (each series pins its namespace's
    // counter and reads it at snapshot time). Call before the first of();
    // `source` must outlive this.
    void count_engine_hits(EngineHitSource &source);

    // The series to count a call on namespace `ns` in. The reference stays
    // valid as long as the cache.
    NamespaceMetrics &of(std::string_view ns);

    // Every series with its values (the overflow series when it has any),
    // sorted by name.
    std::vector<SeriesCounts> snapshot() const;
    // The sum of the series (ns nullptr), or the series of `ns` (zeros when
    // it has none; a folded namespace's counts are in "__other__").
    SeriesCounts totals(const char *ns) const;
    size_t series() const;  // namespaces with a series of their own

private:
    using Map = std::unordered_map<std::string, NamespaceMetrics *, NameHash, std::equal_to<>>;
    NamespaceMetrics &find_or_create(std::string_view ns);
    void fold_locked(NamespaceMetrics &m);
    void fold_least_recent_locked();
    void before_fork() noexcept override { mutex_.lock(); }
    void after_fork_parent() noexcept override { mutex_.unlock(); }
    void after_fork_child() noexcept override;

    // The first namespaces a cache meets (most caches have one or a few):
    // each slot is set once and never changes (never folded), so the lookup
    // reads a line nobody writes. Later namespaces go through the map.
    static constexpr size_t kHotSlots = 8;
    std::array<std::atomic<NamespaceMetrics *>, kHotSlots> hot_{};
    const size_t max_series_;
    mutable std::shared_mutex mutex_;
    std::unique_ptr<Map> by_ns_;                           // the named series
    std::vector<std::unique_ptr<NamespaceMetrics>> pool_;  // every object, named or free
    std::vector<NamespaceMetrics *> free_;                 // folded, awaiting a name
    NamespaceMetrics overflow_;
    SeriesCounts folded_;  // what folded series had counted
    std::atomic<uint64_t> tick_{1};  // moves on with each new series: the LRU clock
    EngineHitSource *engine_ = nullptr;
};

}  // namespace cachekit::metrics
