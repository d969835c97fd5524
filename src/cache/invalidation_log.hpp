// Remembers writes and invalidations so a fill that started before one never
// lands after it: a fill (an L1 copy of an L2 read, a loader's store) takes
// a ticket (the current epoch) before it reads or computes, and may store
// only if no write or invalidation of its key (kept per hashed slot with the
// last writer's full hash, so only two other keys of one slot written
// within the fill's window make a false positive, which drops one fill),
// its namespace or the whole cache happened since. Writers and invalidators record themselves on both sides of their
// L2 call (see Cache), so the ticket of a fill whose L2 read could have seen
// the old state is always older than the last record. Callers serialise the
// check-and-store against the key's records themselves (the cache's stripe
// mutexes); this class only keeps the epochs.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <new>
#include <string>
#include <string_view>
#include <unordered_map>

namespace cachekit::cache {

class InvalidationLog {
public:
    using Ticket = uint64_t;

    Ticket ticket() const noexcept { return epoch_.load(std::memory_order_acquire); }

    // The per-key records and checks below: call with the key's stripe
    // mutex held (the cache's stripe of key_hash; one log slot always maps
    // to one such stripe).

    // A value was written to the key (L1 and/or L2).
    void key_written(uint64_t key_hash) noexcept { record(key_hash, bump()); }
    // The key was invalidated (a write of "nothing" that also tells a
    // store which began earlier to take its L2 copy back).
    void key_invalidated(uint64_t key_hash) noexcept {
        const uint64_t e = bump();
        record(key_hash, e);
        removed_[slot(key_hash)].store(e, std::memory_order_release);
    }
    // The key was written or invalidated since `t` (its own records only).
    bool key_changed_since(Ticket t, uint64_t key_hash) const noexcept {
        const Slot &s = slots_[slot(key_hash)];
        // The last writer of the slot is known exactly; of the ones before
        // it only the latest epoch is kept (conservative for every other key).
        return s.last_hash == key_hash ? s.last_epoch > t : s.before_last > t;
    }
    // Anything written or invalidated that a fill with ticket `t` must not overwrite.
    bool changed_since(Ticket t, uint64_t key_hash, std::string_view ns) const {
        return key_changed_since(t, key_hash) || removed_by_group_since(t, ns);
    }
    // Only invalidations (of the key's slot, its namespace or everything) since `t`.
    bool invalidated_since(Ticket t, uint64_t key_hash, std::string_view ns) const {
        return removed_[slot(key_hash)].load(std::memory_order_acquire) > t || removed_by_group_since(t, ns);
    }

    // Only the namespace and whole-cache invalidations since `t` (no mutex needed).
    bool group_invalidated_since(Ticket t, std::string_view ns) const { return removed_by_group_since(t, ns); }

    void namespace_invalidated(std::string_view ns) {
        const uint64_t e = bump();
        std::lock_guard lock(ns_mutex_);
        namespaces_[std::string(ns)] = e;
    }
    void all_invalidated() noexcept { all_.store(bump(), std::memory_order_release); }

    static constexpr size_t kStripes = 4096;

    // fork(): called by the owning Cache's fork hooks (util/fork_hooks.hpp).
    void fork_prepare() noexcept { ns_mutex_.lock(); }
    void fork_parent() noexcept { ns_mutex_.unlock(); }
    void fork_child() noexcept { new (&ns_mutex_) std::mutex; }

private:
    // Guarded by the cache's stripe mutex of the keys that map to it.
    struct Slot {
        uint64_t last_hash = 0;
        uint64_t last_epoch = 0;
        uint64_t before_last = 0;  // the latest epoch of any other key's record
    };
    static size_t slot(uint64_t key_hash) noexcept { return key_hash % kStripes; }
    uint64_t bump() noexcept { return epoch_.fetch_add(1, std::memory_order_acq_rel) + 1; }
    void record(uint64_t key_hash, uint64_t e) noexcept {
        Slot &s = slots_[slot(key_hash)];
        if (s.last_hash != key_hash) {
            s.before_last = s.last_epoch;
            s.last_hash = key_hash;
        }
        s.last_epoch = e;
    }
    bool removed_by_group_since(Ticket t, std::string_view ns) const {
        if (all_.load(std::memory_order_acquire) > t) return true;
        std::lock_guard lock(ns_mutex_);
        if (namespaces_.empty()) return false;
        auto it = namespaces_.find(std::string(ns));
        return it != namespaces_.end() && it->second > t;
    }

    std::atomic<uint64_t> epoch_{1};
    std::atomic<uint64_t> all_{0};
    std::array<Slot, kStripes> slots_{};
    std::array<std::atomic<uint64_t>, kStripes> removed_{};
    mutable std::mutex ns_mutex_;
    std::unordered_map<std::string, uint64_t> namespaces_;
};

}  // namespace cachekit::cache
