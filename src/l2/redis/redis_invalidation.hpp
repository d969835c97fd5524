// The Redis invalidation feed (L1 coherence on one Redis server): a thread
// with a connection of its own that is both the tracking client and the
// subscriber (CLIENT TRACKING on REDIRECT <its own id> BCAST PREFIX ...,
// then SUBSCRIBE __redis__:invalidate and cachekit-py's channel), so the
// tracking state and the subscription live and die together.
// docs/redis.md, "L1 coherence".
#pragma once

#include <memory>

#include "l2/invalidation_feed.hpp"
#include "l2/redis/redis_backend.hpp"

namespace cachekit::l2 {

// The reference SDK's (cachekit-py 0.22+) invalidation channel.
inline constexpr const char *kSdkInvalidationChannel = "cachekit:py:invalidate:v1";
// The feed connection's CLIENT SETNAME (tests find it in CLIENT LIST).
inline constexpr const char *kFeedClientName = "cachekit-invalidation";

// nullptr when config.l1_coherence is Off. Does not wait for the connection.
std::unique_ptr<InvalidationFeed> start_redis_feed(const RedisConfig &config, const WatchRequest &request);

}  // namespace cachekit::l2
