// Counters of the L1 cache. Each shard keeps its own cells, updated under
// the shard mutex it already holds; hits count in their namespace's
// per-thread cells instead (NsRecord::hits). L1Cache::stats() sums them
// all, so totals are exact.
#pragma once

#include <cstdint>

namespace cachekit::l1 {

struct Stats {
    uint64_t hits = 0;
    uint64_t misses = 0;
    uint64_t inserts = 0;
    uint64_t evictions = 0;          // live entries removed for room (LRU)
    uint64_t expirations = 0;        // expired entries removed (read, eviction, sweep)
    uint64_t rejected_too_large = 0;  // puts larger than max_bytes / 8
    uint64_t invalidations = 0;      // entries removed by invalidation or clear
    uint64_t dropped_fills = 0;      // ticketed puts refused by a later invalidation
    uint64_t admitted = 0;               // TinyLFU: window candidates admitted over a main-region victim
    uint64_t rejected_by_admission = 0;  // TinyLFU: window candidates evicted by the contest (also in evictions)
    uint64_t entries = 0;
    uint64_t bytes = 0;       // counted bytes (entry_charge), never above max_bytes
    uint64_t peak_bytes = 0;  // the highest `bytes` ever reached
    uint64_t max_bytes = 0;
    uint64_t namespaces = 0;         // namespace records kept
    uint64_t sweep_max_hold_ns = 0;  // longest shard-lock hold of one sweep batch
    uint64_t retired_bytes = 0;  // removed entries not yet freed (awaiting readers), not in `bytes`
};

}  // namespace cachekit::l1
