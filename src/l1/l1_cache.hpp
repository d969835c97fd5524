// L1: a sharded in-process byte cache with a byte budget, LRU eviction with
// deferred promotion, TTL expiry (expiry heap + lazy expiry + background
// sweep) and key / namespace / whole-cache invalidation guarded by fill
// tickets. See docs/l1.md for the design. All member functions are
// thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cachekit/cachekit.h"
#include "l1/admission.hpp"
#include "l1/clock.hpp"
#include "l1/entry.hpp"
#include "l1/epoch.hpp"
#include "util/fork_hooks.hpp"
#include "l1/namespaces.hpp"
#include "l1/shard.hpp"
#include "l1/stats.hpp"
#include "l1/sweeper.hpp"
#include "metrics/striped_counter.hpp"

namespace cachekit::l1 {

inline constexpr uint64_t kDefaultMaxBytes = uint64_t(100) << 20;  // 100 MiB
inline constexpr uint64_t kMinMaxBytes = uint64_t(1) << 20;        // 1 MiB
inline constexpr size_t kMaxKeySize = 65536;
inline constexpr size_t kMaxNamespaceSize = 65536;
inline constexpr unsigned kDefaultShards = 64;
inline constexpr unsigned kMaxShards = 1024;

// What decides which entries stay when the budget is full (see admission.hpp).
enum class AdmissionPolicy {
    Lru,      // evict the least recently used entry of the shard (the default)
    TinyLfu,  // W-TinyLFU: window LRU, segmented main region, frequency contest
};

struct Options {
    uint64_t max_bytes = kDefaultMaxBytes;  // >= 1 MiB
    unsigned shards = 0;                    // 0: 64; else rounded up to a power of two, <= 1024
    uint64_t sweep_interval_ms = 30000;     // 0: no background sweeper
    uint64_t promote_interval_ns = 1000000;  // a hit moves an entry to the LRU head at most this often
    size_t sweep_batch = 256;               // entries examined per shard-lock hold by sweep()
    // The clock for deadlines and promotion. Not owned. nullptr: the coarse
    // monotonic clock (one kernel tick of resolution, ~3 ns a read), or
    // CLOCK_MONOTONIC (~25 ns a read) when precise_clock is set.
    const Clock *clock = nullptr;
    bool precise_clock = false;
    // Namespace records kept (>= 2); the entries of further namespaces share
    // one overflow record (see namespaces.hpp).
    size_t max_namespaces = kDefaultMaxNamespaces;
    AdmissionPolicy admission = AdmissionPolicy::Lru;
};

// A C API value (CACHEKIT_L1_ADMISSION_*) as a policy; `what` names the
// option in the CACHEKIT_EINVAL message for any other value.
AdmissionPolicy admission_policy(int c_value, const char *what);

// A fill ticket: the invalidation epoch when a fill began (see begin_fill).
using FillTicket = uint64_t;
inline constexpr FillTicket kNoTicket = UINT64_MAX;

enum class PutResult {
    Stored,
    TooLarge,     // entry_charge > max_bytes / 8: not admitted, older copy removed
    Invalidated,  // the ticket predates an invalidation of this key, its namespace or all
};

// What a hit knows about the entry, for stale-while-revalidate and the like.
struct EntryInfo {
    uint64_t inserted_at_ns = 0;  // clock time of the put
    uint64_t deadline_ns = 0;     // kNever when it does not expire
    std::string ns;               // the namespace (kOverflowNamespace for an overflow record's entry)
    size_t value_size = 0;
};

// One entry as seen by debug_entries(), for tests.
struct DebugEntry {
    std::string key;
    std::string value_head;  // the first 64 bytes at most
    size_t value_size;
    std::string ns;
    uint64_t deadline_ns;
    unsigned shard;
    Segment segment;  // kWindow for every entry under LRU
};

class L1Cache final : fork_hooks::Participant {
public:
    // Throws Error(CACHEKIT_EINVAL) for bad options.
    explicit L1Cache(const Options &options = Options());
    ~L1Cache();
    L1Cache(const L1Cache &) = delete;
    L1Cache &operator=(const L1Cache &) = delete;

    // Copy the value under `key` into `out` (when not null) and fill `info`
    // (when not null). Returns false on a miss (absent, expired or
    // invalidated). Throws std::bad_alloc if `out` cannot grow.
    bool get(std::string_view key, cachekit_buf *out, EntryInfo *info = nullptr);

    // Store `value` under `key` in namespace `ns`, expiring `ttl_ns` from now
    // (0: never). With a ticket from begin_fill(), the put is dropped if the
    // key, the namespace or the whole cache was invalidated since.
    PutResult put(std::string_view ns, std::string_view key, std::string_view value,
                  uint64_t ttl_ns, FillTicket ticket = kNoTicket);
    // The same with an absolute deadline on the cache's clock (kNever: none).
    PutResult put_until(std::string_view ns, std::string_view key, std::string_view value,
                        uint64_t deadline_ns, FillTicket ticket = kNoTicket);

    // Take a ticket before computing a value to put later.
    FillTicket begin_fill() const noexcept { return epoch_.load(std::memory_order_acquire); }

    bool invalidate(std::string_view key);            // true if an entry was removed
    void invalidate_namespace(std::string_view ns);  // O(1); memory reclaimed lazily
    void clear();

    // Remove expired entries (and, after a namespace invalidation, entries of
    // invalidated namespaces) in batches of at most sweep_batch entries per
    // shard-lock hold. The background sweeper calls this. Returns the count.
    size_t sweep();

    Stats stats() const;
    // The record of namespace `ns`, kept while pinned, to read its hits
    // (rec->hits: a hit counts under the namespace its entry was put in);
    // nullptr when `ns` has no record of its own and the table is full.
    // Give it back with unpin_namespace() before the cache goes.
    const NsRecord *pin_namespace(std::string_view ns) { return namespaces_.pin(ns); }
    static void unpin_namespace(const NsRecord *rec) noexcept { const_cast<NsRecord *>(rec)->release(); }
    // Every hit so far (stats().hits without the shard locks).
    uint64_t total_hits() const { return namespaces_.total_hits(); }
    uint64_t now() const noexcept {
        if (clock_ != nullptr) return clock_->now_ns();
        return precise_ ? MonotonicClock::read() : CoarseMonotonicClock::read();
    }
    uint64_t max_bytes() const noexcept { return max_bytes_; }
    size_t max_entry_bytes() const noexcept { return size_t(max_bytes_ / 8); }
    unsigned shard_count() const noexcept { return unsigned(shards_.size()); }
    unsigned shard_of(std::string_view key) const noexcept { return shard_index(hash_key(key)); }
    static uint64_t hash_key(std::string_view key) noexcept;

    AdmissionPolicy admission() const noexcept {
        return admission_ ? AdmissionPolicy::TinyLfu : AdmissionPolicy::Lru;
    }
    // TinyLFU's frequency estimate of `key` (0 under LRU), for tests.
    unsigned frequency_estimate(std::string_view key) const noexcept {
        return admission_ ? admission_->estimate(uint32_t(hash_key(key))) : 0;
    }

    // White-box view for tests: every entry, shard by shard, each shard list
    // by list (window, probation, protected) from the most to the least
    // recently used. Takes the shard locks one by one.
    std::vector<DebugEntry> debug_entries() const;

private:
    void before_fork() noexcept override;
    void after_fork_parent() noexcept override;
    void after_fork_child() noexcept override;
    // A forked child has no sweeper thread: start one (write paths only).
    void ensure_sweeper() const {
        if (sweeper_) sweeper_->ensure_running();
    }
    void reclaim_all();
    enum class Reason { Replaced, Evicted, Expired, Invalidated };

    unsigned shard_index(uint64_t h) const noexcept { return unsigned((h >> 40) & shard_mask_); }
    static size_t tomb_slot(uint64_t h) noexcept { return size_t(h >> 50) & (Shard::kTombSlots - 1); }
    bool is_stale(const Entry *e) const noexcept {
        return e->ns_gen != e->ns->gen.load(std::memory_order_acquire);
    }
    // Shard-locked helpers. Removed entries are retired (freed once no
    // lock-free reader can hold them) and their bytes released at once.
    void remove_locked(Shard &s, Entry *e, Reason why) noexcept;
    void retire_locked(Shard &s, Entry *e) noexcept;
    Entry *take_reclaimable_locked(Shard &s) noexcept;
    // `incoming`: the charge about to join the window (TinyLFU's contest).
    bool evict_one_locked(Shard &s, uint64_t now, uint64_t incoming = 0) noexcept;
    bool promotion_due(const Shard &s, const Entry *e, uint64_t now) const noexcept;
    static bool left_recent_quarter(const Shard &s, const Entry *e) noexcept;
    bool interval_passed(const Entry *e, uint64_t now) const noexcept;
    static void copy_out(const Entry *e, cachekit_buf *out, EntryInfo *info);
    [[gnu::noinline]] static void fill_info(const Entry *e, EntryInfo *info);
    // Unlocked: after a write that left `retired_bytes` awaiting readers.
    void after_write(Shard &s, uint64_t retired_bytes);
    void reclaim(Shard &s);
    static uint64_t reclaim_below() noexcept;
    bool evict_elsewhere(const Shard *own, uint64_t now);
    bool try_reserve(uint64_t bytes) noexcept;
    void note_peak(uint64_t bytes) noexcept;
    void note_hold(uint64_t ns) noexcept;
    static void free_chain(Entry *chain) noexcept;  // a list chained by next
    static void free_unlinked(Entry *e) noexcept;    // one entry never published
    uint64_t next_epoch() noexcept { return epoch_.fetch_add(1, std::memory_order_acq_rel) + 1; }

    const Clock *clock_;
    bool precise_;
    uint64_t max_bytes_;
    uint64_t promote_interval_;
    size_t sweep_batch_;
    uint64_t shard_mask_;
    uint64_t retire_slack_;  // retired bytes a shard may hold before freeing eagerly
    std::unique_ptr<Admission> admission_;  // null under LRU
    std::vector<std::unique_ptr<Shard>> shards_;
    NamespaceTable namespaces_;  // also counts the hits, per namespace and per thread

    alignas(64) std::atomic<uint64_t> bytes_{0};
    std::atomic<uint64_t> peak_bytes_{0};
    alignas(64) std::atomic<uint64_t> epoch_{1};         // invalidation epoch; tickets read it
    std::atomic<uint64_t> all_epoch_{0};                 // epoch of the last clear()
    std::atomic<uint64_t> ns_invalidations_{0};          // namespace invalidations so far
    std::atomic<unsigned> victim_cursor_{0};
    std::atomic<uint64_t> sweep_max_hold_{0};

    std::unique_ptr<Sweeper> sweeper_;  // last: stopped before anything else goes
};

}  // namespace cachekit::l1
