#include "l1/namespaces.hpp"

#include <mutex>
#include <new>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace cachekit::l1 {

size_t NamespaceTable::Hash::operator()(std::string_view s) const noexcept {
    return size_t(XXH3_64bits(s.data(), s.size()));
}

NamespaceTable::NamespaceTable(size_t max_records)
    : max_records_(max_records < 2 ? 2 : max_records), overflowed_since_collect_(max_records_) {
    auto rec = std::make_unique<NsRecord>(std::string_view(), 0);
    default_ = rec.get();
    map_.emplace(std::string(), std::move(rec));
}

NsRecord *NamespaceTable::acquire(std::string_view name) {
    if (name.empty()) {
        default_->refs.fetch_add(1, std::memory_order_relaxed);
        return default_;
    }
    return find_or_create(name);
}

NsRecord *NamespaceTable::pin(std::string_view name) {
    NsRecord *rec = acquire(name);
    if (rec != &overflow_) return rec;
    rec->release();
    return nullptr;
}

NsRecord *NamespaceTable::find_or_create(std::string_view name) {
    // References are taken under the lock (shared is enough: collect() holds
    // it exclusively), so a record seen here is never dropped under us.
    {
        std::shared_lock lock(mu_);
        auto it = map_.find(name);
        if (it != map_.end()) {
            it->second->refs.fetch_add(1, std::memory_order_relaxed);
            return it->second.get();
        }
    }
    std::unique_lock lock(mu_);
    auto it = map_.find(name);
    NsRecord *rec;
    if (it != map_.end()) {
        rec = it->second.get();
    } else {
        // Full: collect, but only every max/4 overflowing names, so a table
        // full of live records costs O(1) per acquire, amortised.
        if (map_.size() >= max_records_ && ++overflowed_since_collect_ >= max_records_ / 4) {
            overflowed_since_collect_ = 0;
            collect_locked();
        }
        if (map_.size() >= max_records_) {
            rec = &overflow_;
        } else {
            auto fresh = std::make_unique<NsRecord>(name, unknown_epoch_);
            rec = fresh.get();
            map_.emplace(std::string(name), std::move(fresh));
        }
    }
    rec->refs.fetch_add(1, std::memory_order_relaxed);
    return rec;
}

void NamespaceTable::invalidate(std::string_view name, uint64_t epoch) {
    auto raise = [epoch](std::atomic<uint64_t> &gen) {
        if (epoch > gen.load(std::memory_order_relaxed)) gen.store(epoch, std::memory_order_release);
    };
    std::unique_lock lock(mu_);
    // The overflow record may hold entries of any name: this one's included.
    raise(overflow_.gen);
    auto it = map_.find(name);
    if (it == map_.end()) {
        if (epoch > unknown_epoch_) unknown_epoch_ = epoch;
        return;
    }
    raise(it->second->gen);
}

size_t NamespaceTable::collect() {
    std::unique_lock lock(mu_);
    return collect_locked();
}

size_t NamespaceTable::collect_locked() {
    size_t dropped = 0;
    for (auto it = map_.begin(); it != map_.end();) {
        NsRecord *rec = it->second.get();
        // refs 0: no entry of it is left, not even one a reader could still
        // see, and no pin; nobody can take a new reference without mu_.
        if (rec == default_ || rec->refs.load(std::memory_order_acquire) != 0) {
            ++it;
            continue;
        }
        dropped_hits_ += rec->hits.total();
        uint64_t gen = rec->gen.load(std::memory_order_acquire);
        if (gen > unknown_epoch_) unknown_epoch_ = gen;
        it = map_.erase(it);
        ++dropped;
    }
    return dropped;
}

uint64_t NamespaceTable::total_hits() const {
    std::shared_lock lock(mu_);
    uint64_t sum = dropped_hits_ + overflow_.hits.total();
    for (const auto &[name, rec] : map_) sum += rec->hits.total();
    return sum;
}

size_t NamespaceTable::size() const {
    std::shared_lock lock(mu_);
    return map_.size();
}

void NamespaceTable::fork_child() noexcept { new (&mu_) std::shared_mutex; }

}  // namespace cachekit::l1
