// Namespaces: one record per distinct namespace name, holding the generation
// (the global invalidation epoch of its last invalidation). Entries remember
// the generation they were inserted under; an entry whose namespace has moved
// on is dead. Records live as long as the cache (one per distinct name).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "metrics/striped_counter.hpp"

namespace cachekit::l1 {

struct NsRecord {
    explicit NsRecord(std::string_view n, uint64_t g) : name(n), gen(g) {}
    const std::string name;
    std::atomic<uint64_t> gen;
    // Every hit on this namespace's entries (lock-free or locked): the L1's
    // hit total is their sum, and a cache reports its per-namespace L1 hits
    // from here without counting them a second time.
    metrics::StripedCounter hits;
};

class NamespaceTable {
public:
    NamespaceTable();

    // The record for `name`, created when missing. Thread-safe.
    NsRecord *acquire(std::string_view name);

    // Move `name` to generation `epoch`. An unknown name is not created; a
    // record created later starts at the latest such epoch, so a fill ticket
    // issued before this call is still refused for it.
    void invalidate(std::string_view name, uint64_t epoch);

    size_t size() const;

    // The sum of every record's hits.
    uint64_t total_hits() const;

private:
    struct Hash {
        using is_transparent = void;
        size_t operator()(std::string_view s) const noexcept;
    };
    mutable std::shared_mutex mu_;
    std::unordered_map<std::string, std::unique_ptr<NsRecord>, Hash, std::equal_to<>> map_;
    uint64_t unknown_epoch_ = 0;  // guarded by mu_
    NsRecord *default_ = nullptr;  // the empty namespace, never looked up under the lock
};

}  // namespace cachekit::l1
