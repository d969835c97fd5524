// Namespaces: a record per namespace name, holding the generation (the
// global invalidation epoch of its last invalidation). Entries remember the
// generation they were inserted under; an entry whose namespace has moved on
// is dead.
//
// Bounded: at most max_records named records; the
// entries of further namespaces share one overflow record, whose generation
// every namespace invalidation moves, so invalidating any namespace also
// ends them (a few extra misses, never a stale hit). A record is counted
// (refs): each entry holds a reference until it is freed (not merely
// unlinked: lock-free readers may still look at it), and so does each pin.
// collect() drops records nothing refers to; a record created later for the
// same name starts at the highest generation any dropped record had, so a
// fill ticket taken before an invalidation is still refused.
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

// The name of the shared overflow record (and so of its entries' namespace
// in EntryInfo and debug_entries()).
inline constexpr std::string_view kOverflowNamespace = "__other__";
inline constexpr size_t kDefaultMaxNamespaces = 4096;

struct NsRecord {
    explicit NsRecord(std::string_view n, uint64_t g) : name(n), gen(g) {}
    const std::string name;
    std::atomic<uint64_t> gen;
    std::atomic<uint64_t> refs{0};  // entries not yet freed, plus pins
    // Every hit on this record's entries (lock-free or locked): the L1's hit
    // total is their sum (plus the hits of dropped records), and a cache
    // reports its per-namespace L1 hits from here (through a pin).
    metrics::StripedCounter hits;

    void release() noexcept { refs.fetch_sub(1, std::memory_order_acq_rel); }
};

class NamespaceTable {
public:
    explicit NamespaceTable(size_t max_records = kDefaultMaxNamespaces);

    // A reference to the record entries of `name` go under: its own, or the
    // overflow record when the table is full. Release with NsRecord::release.
    NsRecord *acquire(std::string_view name);
    // A reference to `name`'s own record (to read its hits), or nullptr
    // when it has none and the table is full.
    NsRecord *pin(std::string_view name);

    // Move `name` (and the overflow record) to generation `epoch`. An unknown
    // name gets no record; records created later start at the latest such
    // epoch, so a fill ticket issued before this call is still refused.
    void invalidate(std::string_view name, uint64_t epoch);

    // Drop the records nothing refers to; returns how many.
    size_t collect();

    size_t size() const;           // records kept, the overflow record aside
    uint64_t total_hits() const;   // every hit, dropped records' included

    // fork(): called by the owning L1Cache's fork hooks (util/fork_hooks.hpp).
    void fork_prepare() noexcept { mu_.lock(); }
    void fork_parent() noexcept { mu_.unlock(); }
    void fork_child() noexcept;

private:
    struct Hash {
        using is_transparent = void;
        size_t operator()(std::string_view s) const noexcept;
    };
    NsRecord *find_or_create(std::string_view name);
    size_t collect_locked();

    mutable std::shared_mutex mu_;
    std::unordered_map<std::string, std::unique_ptr<NsRecord>, Hash, std::equal_to<>> map_;
    const size_t max_records_;
    uint64_t unknown_epoch_ = 0;        // guarded by mu_
    uint64_t dropped_hits_ = 0;         // guarded by mu_
    size_t overflowed_since_collect_;   // guarded by mu_
    NsRecord *default_ = nullptr;  // the empty namespace: never dropped, found without the lock
    NsRecord overflow_{kOverflowNamespace, 0};
};

}  // namespace cachekit::l1
