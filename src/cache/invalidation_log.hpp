// Remembers invalidations so a fill that started before one never lands
// after it: a fill takes a ticket (the current epoch) before computing, and
// may store only if no invalidation of its key (a hashed stripe: a false
// positive only drops one fill), its namespace or the whole cache happened
// since. Callers serialise check-and-store against invalidation themselves.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace cachekit::cache {

class InvalidationLog {
public:
    using Ticket = uint64_t;

    Ticket ticket() const noexcept { return epoch_.load(std::memory_order_acquire); }

    void key_invalidated(uint64_t key_hash) noexcept {
        stripes_[key_hash % kStripes].store(bump(), std::memory_order_release);
    }
    void namespace_invalidated(std::string_view ns) {
        std::lock_guard lock(ns_mutex_);
        namespaces_[std::string(ns)] = bump();
    }
    void all_invalidated() noexcept { all_.store(bump(), std::memory_order_release); }

    bool invalidated_since(Ticket t, uint64_t key_hash, std::string_view ns) const {
        if (all_.load(std::memory_order_acquire) > t) return true;
        if (stripes_[key_hash % kStripes].load(std::memory_order_acquire) > t) return true;
        std::lock_guard lock(ns_mutex_);
        auto it = namespaces_.find(std::string(ns));
        return it != namespaces_.end() && it->second > t;
    }

private:
    static constexpr size_t kStripes = 4096;
    uint64_t bump() noexcept { return epoch_.fetch_add(1, std::memory_order_acq_rel) + 1; }

    std::atomic<uint64_t> epoch_{1};
    std::atomic<uint64_t> all_{0};
    std::array<std::atomic<uint64_t>, kStripes> stripes_{};
    mutable std::mutex ns_mutex_;
    std::unordered_map<std::string, uint64_t> namespaces_;
};

}  // namespace cachekit::cache
