// One shard of the L1 cache: a mutex, an intrusive chained hash index,
// intrusive doubly linked LRU lists (one per Segment), an indexed min-heap of deadlines (the
// expiry queue), counters, and the retire list of unlinked entries waiting
// for their readers to finish (see epoch.hpp).
//
// Writers hold `mu` for every member function except find_unlocked(), which
// lock-free readers call inside an EpochGuard. The index is published with
// seq_cst atomics so those readers see either an entry's old or new links,
// never a torn one; unlinked entries keep their hnext so a reader standing on
// one can walk on.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include "l1/entry.hpp"

namespace cachekit::l1 {

// Hits are counted per namespace instead (NsRecord::hits).
struct ShardCounters {
    uint64_t misses = 0;
    uint64_t inserts = 0;
    uint64_t evictions = 0;
    uint64_t expirations = 0;
    uint64_t rejected_too_large = 0;
    uint64_t invalidations = 0;
    uint64_t dropped_fills = 0;
    uint64_t admitted = 0;  // TinyLFU: window candidates that beat the main region's victim
    uint64_t rejected_by_admission = 0;  // ... and those that did not (evicted instead)
};

// An intrusive LRU list (through Entry::prev / next) and the charges it holds.
struct LruList {
    Entry *head = nullptr;  // most recently used
    Entry *tail = nullptr;  // least recently used
    uint64_t bytes = 0;

    void push_front(Entry *e) noexcept;
    void remove(Entry *e) noexcept;
    void move_to_front(Entry *e) noexcept;
};

// The bucket array and its mask in one block, so a reader always gets a
// matching pair.
struct BucketTable {
    size_t mask;  // bucket count - 1 (a power of two)
    std::atomic<Entry *> *slots() noexcept { return reinterpret_cast<std::atomic<Entry *> *>(this + 1); }
    std::atomic<Entry *> &slot(uint32_t hash) noexcept { return slots()[hash & mask]; }

    static BucketTable *create(size_t buckets);  // throws std::bad_alloc
    static void destroy(BucketTable *t) noexcept;
};

struct alignas(64) Shard {
    static constexpr size_t kTombSlots = 64;
    static constexpr unsigned kMaxUnlockedSteps = 64;  // chain links a lock-free lookup walks

    Shard();
    ~Shard();
    Shard(const Shard &) = delete;
    Shard &operator=(const Shard &) = delete;

    // Read by every lock-free lookup; written only by a rehash.
    std::atomic<BucketTable *> table;
    // Read by lock-free hits to decide on promotion; written under mu.
    alignas(64) std::atomic<uint32_t> lru_seq{0};  // bumped by every move to the LRU head
    std::atomic<uint32_t> count{0};                // entries linked
    // Writers' state, all under mu.
    alignas(64) std::mutex mu;
    ShardCounters counters;
    LruList lists[kSegments];  // indexed by Segment
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
    // Unlinked entries (oldest first, chained by next) and replaced bucket
    // tables, each with its epoch stamp, until no reader can hold them.
    Entry *retired_head = nullptr;
    Entry *retired_tail = nullptr;
    uint64_t retired_bytes = 0;  // their entry_charge() total
    struct RetiredTable {
        uint64_t epoch;
        BucketTable *table;
    };
    std::vector<RetiredTable> retired_tables;

    // Locked lookup.
    Entry *find(uint32_t hash, std::string_view key) const noexcept;
    // Lock-free lookup, inside an EpochGuard. A null answer may be a false
    // miss (a long chain, or a rehash moving entries under the walk): the
    // caller asks again under the lock before calling it a miss.
    Entry *find_unlocked(uint32_t hash, std::string_view key) const noexcept;
    // Make room so that link() cannot fail. May throw std::bad_alloc.
    void prepare_insert();
    // Insert at the head of list `seg` (and into the heap when it has a deadline).
    void link(Entry *e, uint64_t now, Segment seg = kWindow) noexcept;
    // Remove from the index, the LRU list and the heap; e stays readable.
    void unlink(Entry *e) noexcept;
    // Queue an unlinked entry for freeing once `epoch` is two steps behind.
    void retire(Entry *e, uint64_t epoch) noexcept;
    // Detach the retired entries older than `reclaim_below` (chained by next)
    // and free the bucket tables retired that long ago.
    Entry *take_reclaimable(uint64_t reclaim_below) noexcept;
    // Move to the head of its own list, or of list `seg`.
    void promote(Entry *e, uint64_t now) noexcept;
    void move_to(Entry *e, Segment seg, uint64_t now) noexcept;
    LruList &list(Segment seg) noexcept { return lists[seg]; }
    Entry *heap_top() const noexcept { return heap.empty() ? nullptr : heap.front().entry; }
    size_t entries() const noexcept { return count.load(std::memory_order_relaxed); }
    size_t bucket_count() const noexcept { return table.load(std::memory_order_relaxed)->mask + 1; }
    // Unlink everything: returns the entries as a list chained by next.
    Entry *detach_all() noexcept;
    // Everything retired, whatever its epoch: for the owner's destructor.
    Entry *take_all_retired() noexcept;

private:
    void grow();
    void set_count(size_t n) noexcept { count.store(uint32_t(n), std::memory_order_relaxed); }
    void stamp_promotion(Entry *e, uint64_t now) noexcept;
    void heap_place(size_t i, HeapNode n) noexcept {
        heap[i] = n;
        n.entry->heap_index = uint32_t(i);
    }
    void heap_up(size_t i) noexcept;
    void heap_down(size_t i) noexcept;
    void heap_remove(Entry *e) noexcept;
};

}  // namespace cachekit::l1
