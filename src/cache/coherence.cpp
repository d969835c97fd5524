#include "cache/coherence.hpp"

#include "l1/clock.hpp"
#include "util/fork_hooks.hpp"

namespace cachekit::cache {

std::unique_ptr<Coherence> Coherence::start(l2::Backend &backend, l1::L1Cache &l1, std::string key_prefix,
                                            CoherenceActions actions, std::string label) {
    std::unique_ptr<Coherence> c(
        new Coherence(backend, l1, std::move(key_prefix), std::move(actions), std::move(label)));
    c->start_feed();
    if (!c->feed_) return nullptr;
    // A cache starts with its L1 open when Redis is there: wait (bounded)
    // for the first attempt, which ends at once when nothing listens.
    std::unique_lock lock(c->first_mu_);
    c->first_cv_.wait_for(lock, std::chrono::seconds(2), [&] { return c->first_done_; });
    return c;
}

Coherence::Coherence(l2::Backend &backend, l1::L1Cache &l1, std::string key_prefix, CoherenceActions actions,
                     std::string label)
    : backend_(backend),
      l1_(l1),
      prefix_(std::move(key_prefix)),
      actions_(std::move(actions)),
      label_(std::move(label)),
      pid_(fork_hooks::pid()) {}

Coherence::~Coherence() {
    // In a forked child that never restarted it, the feed's threads are the
    // parent's (not here to join) and its mutex may be held forever: leave it.
    if (!same_process()) (void)feed_.release();
    feed_.reset();
}

void Coherence::start_feed() {
    l2::WatchRequest request;
    // No prefix: every key of the server is watched (a key_prefix narrows it).
    if (!prefix_.empty()) request.prefixes.push_back(prefix_);
    request.handler = this;
    feed_ = backend_.watch(request);
}

bool Coherence::same_process() const noexcept { return pid_.load(std::memory_order_relaxed) == fork_hooks::pid(); }

void Coherence::restart_in_child() {
    std::lock_guard lock(restart_mu_);
    if (same_process()) return;
    // The parent's feed thread does not exist here: abandon it unjoined
    // (its socket copy stays open, unused) and start this process's own.
    (void)feed_.release();
    suspended_.store(true, std::memory_order_release);
    flush_l1();
    pid_.store(fork_hooks::pid(), std::memory_order_relaxed);
    start_feed();
}

void Coherence::writing(uint64_t key_hash) noexcept {
    Stamp &s = stamps_[key_hash % stamps_.size()];
    s.at_ns.store(l1::MonotonicClock::read(), std::memory_order_relaxed);
    s.key_hash.store(key_hash, std::memory_order_release);
}

void Coherence::flush_l1() noexcept {
    try {
        l1_.clear();
    } catch (...) {  // clear allocates nothing the feed could not lose
    }
    flushes_.fetch_add(1, std::memory_order_relaxed);
}

void Coherence::drop(std::string_view l1_key) noexcept {
    try {
        const uint64_t h = l1::L1Cache::hash_key(l1_key);
        Stamp &s = stamps_[h % stamps_.size()];
        if (s.key_hash.load(std::memory_order_acquire) == h) {
            if (uint64_t at = s.at_ns.exchange(0, std::memory_order_relaxed); at != 0) {
                const uint64_t now = l1::MonotonicClock::read();
                lag_ms_.observe(now > at ? double(now - at) / 1e6 : 0.0);
            }
        }
        actions_.forget_key(l1_key);
        keys_dropped_.fetch_add(1, std::memory_order_relaxed);
    } catch (...) {
        flush_l1();  // could not drop the one key: drop them all
    }
}

void Coherence::keys_changed(const std::vector<std::string_view> &keys) noexcept {
    messages_.fetch_add(1, std::memory_order_relaxed);
    for (std::string_view k : keys)
        if (k.substr(0, prefix_.size()) == prefix_) drop(k.substr(prefix_.size()));
}

void Coherence::cache_key_changed(std::string_view key) noexcept {
    messages_.fetch_add(1, std::memory_order_relaxed);
    sdk_events_.fetch_add(1, std::memory_order_relaxed);
    drop(key);
}

void Coherence::namespace_changed(std::string_view ns) noexcept {
    messages_.fetch_add(1, std::memory_order_relaxed);
    sdk_events_.fetch_add(1, std::memory_order_relaxed);
    try {
        actions_.forget_namespace(ns);
    } catch (...) {
        flush_l1();
    }
}

// Shut first, then flush: a fill that checked before the flag went up
// either landed before the clear (and is cleared) or holds a ticket older
// than the clear (and is refused by the L1).
void Coherence::suspend() noexcept {
    const bool was_open = !suspended_.exchange(true, std::memory_order_acq_rel);
    flush_l1();
    if (was_open && !label_.empty() && log::enabled()) {
        try {
            gate_.report(log::Event::CoherenceSuspended,
                         label_ + ": L1 coherence feed lost; L1 flushed and bypassed until it is subscribed again");
        } catch (...) {
        }
    }
}

// Open first, then flush: whatever a fill read before the feed was
// subscribed again carries a ticket older than this clear.
void Coherence::live() noexcept {
    const bool was_shut = suspended_.exchange(false, std::memory_order_acq_rel);
    flush_l1();
    if (was_shut && was_live_.exchange(true, std::memory_order_relaxed) && !label_.empty() && log::enabled()) {
        try {
            gate_.report(log::Event::CoherenceResumed, label_ + ": L1 coherence feed subscribed again; L1 back in use");
        } catch (...) {
        }
    }
    session_ended();  // (for start(): the first attempt is over)
}

void Coherence::session_ended() noexcept {
    {
        std::lock_guard lock(first_mu_);
        if (first_done_) return;
        first_done_ = true;
    }
    first_cv_.notify_all();
}

const char *Coherence::mode() const noexcept { return feed_ ? feed_->mode() : "off"; }

std::string Coherence::metrics_text() const {
    const std::string mode_label = std::string("{mode=\"") + mode() + "\"}";
    std::string out;
    auto counter = [&](const char *name, const char *help, uint64_t v) {
        out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " counter\n";
        out += std::string(name) + mode_label + " " + std::to_string(v) + "\n";
    };
    counter("cachekit_l1_coherence_messages_total",
            "Invalidation messages received (server tracking and the reference SDK's channel).", messages());
    counter("cachekit_l1_coherence_sdk_events_total", "Events received on the reference SDK's invalidation channel.",
            sdk_events_.load(std::memory_order_relaxed));
    counter("cachekit_l1_coherence_keys_dropped_total", "Keys dropped from L1 by invalidation messages.", keys_dropped());
    counter("cachekit_l1_coherence_flushes_total",
            "Whole-L1 flushes: invalidation connection lost or (re)subscribed, FLUSHALL.", flushes());
    out += "# HELP cachekit_l1_coherence_live 1 while the invalidation connection is subscribed (L1 open).\n"
           "# TYPE cachekit_l1_coherence_live gauge\n";
    out += "cachekit_l1_coherence_live" + mode_label + " " + (l1_open() ? "1" : "0") + "\n";
    out += "# HELP cachekit_l1_coherence_lag_ms Time from sending this cache's L2 write to handling its invalidation message, ms.\n"
           "# TYPE cachekit_l1_coherence_lag_ms histogram\n";
    uint64_t cumulative = 0;
    for (size_t i = 0; i <= kLagBucketsMs.size(); ++i) {
        cumulative += lag_ms_.count_at(i);
        std::string le = i < kLagBucketsMs.size() ? std::to_string(kLagBucketsMs[i]) : "+Inf";
        le.erase(le.find_last_not_of('0') + 1);
        if (!le.empty() && le.back() == '.') le.pop_back();
        out += "cachekit_l1_coherence_lag_ms_bucket{le=\"" + le + "\"} " + std::to_string(cumulative) + "\n";
    }
    out += "cachekit_l1_coherence_lag_ms_sum " + std::to_string(lag_ms_.sum()) + "\n";
    out += "cachekit_l1_coherence_lag_ms_count " + std::to_string(cumulative) + "\n";
    return out;
}

}  // namespace cachekit::cache
