#include "l2/redis/redis_invalidation.hpp"

#include <atomic>

#include "l2/redis/feed_loop.hpp"
#include "l2/redis/feed_publisher.hpp"

namespace cachekit::l2 {
namespace {

// One server: the feed loop (feed_loop.hpp) with its one session, the same
// machinery a cluster feed runs with a session per node.
class RedisFeed final : public InvalidationFeed {
public:
    RedisFeed(const RedisConfig &config, const WatchRequest &request) : publisher_(config) {
        session_ = loop_.add(config, request);
    }

    const char *mode() const noexcept override {
        switch (session_.decided()) {
        case CoherenceMode::Tracking: return "tracking";
        case CoherenceMode::Pubsub: return "pubsub";
        default: return "auto";
        }
    }

    void announce(std::string_view cache_key) noexcept override { publisher_.announce(cache_key); }

private:
    feed::Publisher publisher_;
    feed::Loop loop_;  // after the publisher: stopped first
    feed::Loop::Handle session_;
};

}  // namespace

std::unique_ptr<InvalidationFeed> start_redis_feed(const RedisConfig &config, const WatchRequest &request) {
    if (config.l1_coherence == CoherenceMode::Off || request.handler == nullptr) return nullptr;
    return std::make_unique<RedisFeed>(config, request);
}

}  // namespace cachekit::l2
