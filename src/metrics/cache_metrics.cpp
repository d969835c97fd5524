#include "metrics/cache_metrics.hpp"

#include <algorithm>
#include <cstring>
#include <new>

namespace cachekit::metrics {

namespace {

// Each counter of a series and where its value goes: one list for every
// sum, difference and read.
struct Field {
    StripedCounter NamespaceMetrics::*live;
    uint64_t SeriesCounts::*value;
};
constexpr Field kFields[] = {
    {&NamespaceMetrics::l1_hits, &SeriesCounts::l1_hits},
    {&NamespaceMetrics::l2_hits, &SeriesCounts::l2_hits},
    {&NamespaceMetrics::misses, &SeriesCounts::misses},
    {&NamespaceMetrics::stores, &SeriesCounts::stores},
    {&NamespaceMetrics::loads, &SeriesCounts::loads},
    {&NamespaceMetrics::load_errors, &SeriesCounts::load_errors},
    {&NamespaceMetrics::waits, &SeriesCounts::waits},
    {&NamespaceMetrics::stale_served, &SeriesCounts::stale_served},
    {&NamespaceMetrics::refreshes, &SeriesCounts::refreshes},
    {&NamespaceMetrics::dropped_fills, &SeriesCounts::dropped_fills},
    {&NamespaceMetrics::too_large, &SeriesCounts::too_large},
    {&NamespaceMetrics::invalidations, &SeriesCounts::invalidations},
    {&NamespaceMetrics::backend_errors, &SeriesCounts::backend_errors},
    {&NamespaceMetrics::timeouts, &SeriesCounts::timeouts},
    {&NamespaceMetrics::corrupt, &SeriesCounts::corrupt},
    {&NamespaceMetrics::tampered, &SeriesCounts::tampered},
    {&NamespaceMetrics::wrong_key, &SeriesCounts::wrong_key},
    {&NamespaceMetrics::downgrade, &SeriesCounts::downgrade},
    {&NamespaceMetrics::serializer_mismatch, &SeriesCounts::serializer_mismatch},
    {&NamespaceMetrics::registry_errors, &SeriesCounts::registry_errors},
};

// Namespaces are short: a byte loop beats a call into memcmp for them.
bool same_name(const std::string &a, std::string_view b) noexcept {
    if (a.size() != b.size()) return false;
    if (b.size() > 32) return std::memcmp(a.data(), b.data(), b.size()) == 0;
    for (size_t i = 0; i < b.size(); ++i)
        if (a[i] != b[i]) return false;
    return true;
}

}  // namespace

SeriesCounts &SeriesCounts::operator+=(const SeriesCounts &o) noexcept {
    for (const Field &f : kFields) this->*f.value += o.*f.value;
    l2_latency_ms += o.l2_latency_ms;
    stored_bytes += o.stored_bytes;
    return *this;
}

SeriesCounts &SeriesCounts::operator-=(const SeriesCounts &o) noexcept {
    for (const Field &f : kFields) this->*f.value -= o.*f.value;
    l2_latency_ms -= o.l2_latency_ms;
    stored_bytes -= o.stored_bytes;
    return *this;
}

bool SeriesCounts::all_zero() const noexcept {
    for (const Field &f : kFields)
        if (this->*f.value != 0) return false;
    return l2_latency_ms.count() == 0 && stored_bytes.count() == 0;
}

SeriesCounts NamespaceMetrics::read() const {
    SeriesCounts c;
    for (const Field &f : kFields) c.*f.value = (this->*f.live).total();
    c.l2_latency_ms = HistogramCounts<kLatencyBucketsMs.size()>::read(l2_latency_ms);
    c.stored_bytes = HistogramCounts<kSizeBucketsBytes.size()>::read(stored_bytes);
    return c;
}

CacheMetrics::CacheMetrics(size_t max_series)
    : max_series_(std::max(max_series, kHotSlots + 1)), by_ns_(std::make_unique<Map>()) {
    overflow_.ns_ = kOverflowSeries;
    fork_hooks::join(this, fork_hooks::Locks::Many);
}

CacheMetrics::~CacheMetrics() {
    fork_hooks::leave(this);
    for (auto &m : pool_)
        if (m->engine_) engine_->unpin(m->engine_);
}

void CacheMetrics::count_engine_hits(EngineHitSource &source) { engine_ = &source; }

NamespaceMetrics &CacheMetrics::of(std::string_view ns) {
    for (const auto &slot : hot_) {
        NamespaceMetrics *m = slot.load(std::memory_order_acquire);
        if (m == nullptr) break;  // slots fill in order
        if (same_name(m->ns_, ns)) return *m;
    }
    return find_or_create(ns);
}

NamespaceMetrics &CacheMetrics::find_or_create(std::string_view ns) {
    if (ns.size() > kMaxSeriesName || ns == kOverflowSeries) return overflow_;
    {
        std::shared_lock lock(mutex_);
        auto it = by_ns_->find(ns);
        if (it != by_ns_->end()) {
            // Written only when a new series came since: the LRU clock.
            NamespaceMetrics *m = it->second;
            uint64_t t = tick_.load(std::memory_order_relaxed);
            if (m->last_used_.load(std::memory_order_relaxed) != t) m->last_used_.store(t, std::memory_order_relaxed);
            return *m;
        }
    }
    // Pinned before our lock is taken: no lock is ever held inside another.
    const EngineHitsPin pin = engine_ != nullptr ? engine_->pin(ns) : EngineHitsPin{};
    std::unique_lock lock(mutex_);
    try {
        auto it = by_ns_->find(ns);
        if (it != by_ns_->end()) {
            if (pin) engine_->unpin(pin);
            return *it->second;
        }
        if (by_ns_->size() >= max_series_) fold_least_recent_locked();
        if (free_.empty()) {
            pool_.push_back(std::make_unique<NamespaceMetrics>());
            free_.push_back(pool_.back().get());
        }
        NamespaceMetrics *m = free_.back();
        by_ns_->emplace(std::string(ns), m);
        free_.pop_back();
        m->ns_ = ns;
        m->engine_ = pin;
        m->engine_base_ = pin ? pin.hits->total() : 0;
        m->last_used_.store(tick_.fetch_add(1, std::memory_order_relaxed) + 1, std::memory_order_relaxed);
        // Give it a hot slot if one is free (slots are claimed under the
        // lock, so they fill in order and a name never takes two).
        for (auto &slot : hot_) {
            if (slot.load(std::memory_order_relaxed) == nullptr) {
                m->hot_ = true;
                slot.store(m, std::memory_order_release);
                break;
            }
        }
        return *m;
    } catch (...) {
        if (pin) engine_->unpin(pin);
        throw;
    }
}

void CacheMetrics::fold_least_recent_locked() {
    std::vector<std::pair<uint64_t, NamespaceMetrics *>> candidates;
    candidates.reserve(by_ns_->size());
    for (const auto &[name, m] : *by_ns_)
        if (!m->hot_) candidates.emplace_back(m->last_used_.load(std::memory_order_relaxed), m);
    const size_t n = std::max<size_t>(1, candidates.size() / 4);
    if (candidates.size() > n)
        std::nth_element(candidates.begin(), candidates.begin() + ptrdiff_t(n), candidates.end());
    free_.reserve(free_.size() + n);  // fold_locked() must not throw half-way
    for (size_t i = 0; i < n && i < candidates.size(); ++i) fold_locked(*candidates[i].second);
}

void CacheMetrics::fold_locked(NamespaceMetrics &m) {
    SeriesCounts now = m.read();
    SeriesCounts delta = now;
    delta -= m.base_;
    folded_ += delta;
    m.base_ = now;  // what comes later counts for the next name (a late caller of this one's)
    if (m.engine_) {
        // Its hits so far and to come count in the overflow series from now
        // on (as the engine total's part no series claims).
        engine_->unpin(m.engine_);
        m.engine_ = {};
    }
    by_ns_->erase(m.ns_);
    m.ns_.clear();
    free_.push_back(&m);
}

std::vector<SeriesCounts> CacheMetrics::snapshot() const {
    std::vector<SeriesCounts> out;
    SeriesCounts other;
    uint64_t engine_claimed = 0;
    {
        std::shared_lock lock(mutex_);
        out.reserve(by_ns_->size() + 1);
        for (const auto &[name, m] : *by_ns_) {
            SeriesCounts c = m->read();
            c -= m->base_;
            c.ns = name;
            if (m->engine_) {
                uint64_t h = m->engine_.hits->total() - m->engine_base_;
                c.l1_hits += h;
                engine_claimed += h;
            }
            out.push_back(std::move(c));
        }
        other = overflow_.read();
        other += folded_;
        for (const NamespaceMetrics *f : free_) {  // late counts of folded series
            SeriesCounts c = f->read();
            c -= f->base_;
            other += c;
        }
    }
    // Read after the series' own parts: the engine total only grows, so the
    // rest is never negative.
    if (engine_ != nullptr) {
        uint64_t total = engine_->total_hits();
        if (total > engine_claimed) other.l1_hits += total - engine_claimed;
    }
    if (!other.all_zero()) {
        other.ns = kOverflowSeries;
        out.push_back(std::move(other));
    }
    std::sort(out.begin(), out.end(), [](const SeriesCounts &a, const SeriesCounts &b) { return a.ns < b.ns; });
    return out;
}

SeriesCounts CacheMetrics::totals(const char *ns) const {
    SeriesCounts sum;
    for (const SeriesCounts &c : snapshot())
        if (ns == nullptr || c.ns == ns) sum += c;
    return sum;
}

size_t CacheMetrics::series() const {
    std::shared_lock lock(mutex_);
    return by_ns_->size();
}

void CacheMetrics::after_fork_child() noexcept { new (&mutex_) std::shared_mutex; }

}  // namespace cachekit::metrics
