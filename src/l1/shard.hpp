// One shard of the L1 cache: a mutex, an intrusive chained hash index, an
// intrusive doubly linked LRU list, an indexed min-heap of deadlines (the
// expiry queue) and counters. Every member function requires `mu` held by the
// caller (L1Cache does the locking); none of them allocates except
// prepare_insert().
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include "l1/entry.hpp"

namespace cachekit::l1 {

struct ShardCounters {
    uint64_t hits = 0;
    uint64_t misses = 0;
    uint64_t inserts = 0;
    uint64_t evictions = 0;
    uint64_t expirations = 0;
    uint64_t rejected_too_large = 0;
    uint64_t invalidations = 0;
    uint64_t dropped_fills = 0;
};

struct alignas(64) Shard {
    static constexpr size_t kTombSlots = 64;

    Shard();
    ~Shard();
    Shard(const Shard &) = delete;
    Shard &operator=(const Shard &) = delete;

    // The hot read path touches mu, the counters and the bucket array first:
    // keep them together.
    std::mutex mu;
    ShardCounters counters;
    std::unique_ptr<Entry *[]> buckets;
    size_t mask = 0;   // bucket count - 1 (a power of two)
    size_t count = 0;  // entries linked
    Entry *head = nullptr;  // most recently used
    Entry *tail = nullptr;  // least recently used
    // Expiry queue: a 4-ary min-heap of (deadline, entry) nodes, so sifting
    // compares deadlines without touching the entries; ties in any order.
    struct HeapNode {
        uint64_t deadline;
        Entry *entry;
    };
    std::vector<HeapNode> heap;
    uint64_t rehashes = 0;
    // Epoch of the latest invalidate(key) for keys hashing to each slot: a
    // fill ticket older than its slot's epoch is refused (rarely a false
    // refusal for a colliding key, never a false acceptance).
    uint64_t tomb[kTombSlots] = {};
    // Sweeper state: the namespace-invalidation count the last full pass saw.
    uint64_t ns_seen = 0;

    Entry *find(uint64_t hash, std::string_view key) const noexcept;
    // Make room so that link() cannot fail. May throw std::bad_alloc.
    void prepare_insert();
    // Insert at the LRU head (and into the heap when it has a deadline).
    void link(Entry *e, uint64_t now) noexcept;
    void unlink(Entry *e) noexcept;
    void promote(Entry *e, uint64_t now) noexcept;
    Entry *heap_top() const noexcept { return heap.empty() ? nullptr : heap.front().entry; }
    size_t bucket_count() const noexcept { return mask + 1; }
    // Detach everything: returns the entries as a list chained by hnext.
    Entry *detach_all() noexcept;

private:
    void grow();
    void heap_place(size_t i, HeapNode n) noexcept {
        heap[i] = n;
        n.entry->heap_index = uint32_t(i);
    }
    void heap_up(size_t i) noexcept;
    void heap_down(size_t i) noexcept;
    void heap_remove(Entry *e) noexcept;
};

}  // namespace cachekit::l1
