// L1 coherence of one cache: the handler of its backend's invalidation feed
// (l2/invalidation_feed.hpp). It drops from the L1 the keys that others
// change, flushes the L1 when the feed may miss a message, and keeps the L1
// shut (no fills) while the feed is down. docs/redis.md, "L1 coherence".
#pragma once

#include <sys/types.h>

#include <array>
#include <condition_variable>
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "l1/l1_cache.hpp"
#include "l2/backend.hpp"
#include "metrics/histogram.hpp"
#include "util/log_sink.hpp"

namespace cachekit::cache {

// What the cache does for a change reported by the feed.
struct CoherenceActions {
    std::function<void(std::string_view key)> forget_key;       // the L1 copy and the fills racing it
    std::function<void(std::string_view ns)> forget_namespace;  // a namespace's L1 copies
};

inline constexpr std::array<double, 11> kLagBucketsMs{0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 50, 250, 1000};

class Coherence final : public l2::InvalidationHandler {
public:
    // nullptr when the backend offers no feed (not Redis, or l1_coherence=off).
    // `label` names the backend in the coherence_suspended / _resumed log lines.
    static std::unique_ptr<Coherence> start(l2::Backend &backend, l1::L1Cache &l1, std::string key_prefix,
                                            CoherenceActions actions, std::string label = {});
    ~Coherence() override;

    // False while the feed is down: no L1 fill may land (the L1 was flushed).
    bool l1_open() const noexcept { return !suspended_.load(std::memory_order_acquire); }
    // False in a forked child until restart_in_child() ran (its L1 came
    // from the parent and has no feed).
    bool same_process() const noexcept;
    void restart_in_child();
    // The cache is sending a write of `key_hash` to L2: its own message
    // measures the propagation lag.
    void writing(uint64_t key_hash) noexcept;
    // The cache wrote or invalidated `key`: told to the reference SDK's listeners.
    void announce(std::string_view key) noexcept {
        if (feed_ && same_process()) feed_->announce(key);  // never the parent's feed in a child
    }
    // The Prometheus text of the counters below.
    std::string metrics_text() const;
    const char *mode() const noexcept;

    uint64_t messages() const noexcept { return messages_.load(std::memory_order_relaxed); }
    uint64_t keys_dropped() const noexcept { return keys_dropped_.load(std::memory_order_relaxed); }
    uint64_t flushes() const noexcept { return flushes_.load(std::memory_order_relaxed); }

    // InvalidationHandler (the feed's thread).
    void keys_changed(const std::vector<std::string_view> &keys) noexcept override;
    void cache_key_changed(std::string_view key) noexcept override;
    void namespace_changed(std::string_view ns) noexcept override;
    void suspend() noexcept override;
    void live() noexcept override;
    void session_ended() noexcept override;

private:
    Coherence(l2::Backend &backend, l1::L1Cache &l1, std::string key_prefix, CoherenceActions actions,
              std::string label);
    void start_feed();
    void flush_l1() noexcept;
    void drop(std::string_view l1_key) noexcept;

    l2::Backend &backend_;
    l1::L1Cache &l1_;
    const std::string prefix_;
    const CoherenceActions actions_;
    std::atomic<bool> suspended_{true};  // until the feed is first live
    std::atomic<bool> was_live_{false};  // a suspension before the first live is not news
    const std::string label_;
    log::EventGate gate_;
    std::atomic<pid_t> pid_;
    std::mutex restart_mu_;
    // The first connection attempt's end (live or failed), which start() awaits.
    std::mutex first_mu_;
    std::condition_variable first_cv_;
    bool first_done_ = false;
    std::atomic<uint64_t> messages_{0}, keys_dropped_{0}, flushes_{0}, sdk_events_{0};
    metrics::Histogram<kLagBucketsMs.size()> lag_ms_{kLagBucketsMs};
    // When the cache last wrote a key (by hash slot): the lag of its own message.
    struct Stamp {
        std::atomic<uint64_t> key_hash{0};
        std::atomic<uint64_t> at_ns{0};
    };
    std::array<Stamp, 1024> stamps_{};
    std::unique_ptr<l2::InvalidationFeed> feed_;  // last: stopped first
};

}  // namespace cachekit::cache
