#include "metrics/cache_metrics.hpp"

#include <cstring>

namespace cachekit::metrics {

CacheMetrics::CacheMetrics(std::function<void(NamespaceMetrics &)> on_create) : on_create_(std::move(on_create)) {}

namespace {
// Namespaces are short: a byte loop beats a call into memcmp for them.
bool same_name(const std::string &a, std::string_view b) noexcept {
    if (a.size() != b.size()) return false;
    if (b.size() > 32) return std::memcmp(a.data(), b.data(), b.size()) == 0;
    for (size_t i = 0; i < b.size(); ++i)
        if (a[i] != b[i]) return false;
    return true;
}
}  // namespace

NamespaceMetrics &CacheMetrics::of(std::string_view ns) {
    for (const auto &slot : hot_) {
        NamespaceMetrics *m = slot.load(std::memory_order_acquire);
        if (m == nullptr) break;  // slots fill in order
        if (same_name(m->ns, ns)) return *m;
    }
    return find_or_create(ns);
}

NamespaceMetrics &CacheMetrics::find_or_create(std::string_view ns) {
    {
        std::shared_lock lock(mutex_);
        auto it = by_ns_.find(std::string(ns));
        if (it != by_ns_.end()) return *it->second;
    }
    std::unique_lock lock(mutex_);
    auto &owned = by_ns_[std::string(ns)];
    if (owned) return *owned;
    owned = std::make_unique<NamespaceMetrics>(std::string(ns));
    if (on_create_) on_create_(*owned);
    // Give it a hot slot if one is free (slots are claimed under the lock,
    // so they fill in order and a name never takes two).
    for (auto &slot : hot_) {
        if (slot.load(std::memory_order_relaxed) == nullptr) {
            slot.store(owned.get(), std::memory_order_release);
            break;
        }
    }
    return *owned;
}

std::vector<const NamespaceMetrics *> CacheMetrics::all() const {
    std::shared_lock lock(mutex_);
    std::vector<const NamespaceMetrics *> out;
    out.reserve(by_ns_.size());
    for (const auto &[name, m] : by_ns_) out.push_back(m.get());
    return out;
}

}  // namespace cachekit::metrics
