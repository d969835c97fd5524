#include "l1/namespaces.hpp"

#include <mutex>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace cachekit::l1 {

size_t NamespaceTable::Hash::operator()(std::string_view s) const noexcept {
    return size_t(XXH3_64bits(s.data(), s.size()));
}

NamespaceTable::NamespaceTable() {
    auto rec = std::make_unique<NsRecord>(std::string_view(), 0);
    default_ = rec.get();
    map_.emplace(std::string(), std::move(rec));
}

NsRecord *NamespaceTable::acquire(std::string_view name) {
    if (name.empty()) return default_;
    {
        std::shared_lock lock(mu_);
        auto it = map_.find(name);
        if (it != map_.end()) return it->second.get();
    }
    std::unique_lock lock(mu_);
    auto it = map_.find(name);
    if (it != map_.end()) return it->second.get();
    auto rec = std::make_unique<NsRecord>(name, unknown_epoch_);
    NsRecord *raw = rec.get();
    map_.emplace(std::string(name), std::move(rec));
    return raw;
}

void NamespaceTable::invalidate(std::string_view name, uint64_t epoch) {
    std::unique_lock lock(mu_);
    auto it = map_.find(name);
    if (it == map_.end()) {
        if (epoch > unknown_epoch_) unknown_epoch_ = epoch;
        return;
    }
    std::atomic<uint64_t> &gen = it->second->gen;
    if (epoch > gen.load(std::memory_order_relaxed)) gen.store(epoch, std::memory_order_release);
}

uint64_t NamespaceTable::total_hits() const {
    std::shared_lock lock(mu_);
    uint64_t sum = 0;
    for (const auto &[name, rec] : map_) sum += rec->hits.total();
    return sum;
}

size_t NamespaceTable::size() const {
    std::shared_lock lock(mu_);
    return map_.size();
}

}  // namespace cachekit::l1
