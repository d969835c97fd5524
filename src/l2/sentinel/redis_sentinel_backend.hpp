// Redis behind Sentinel: the sentinels are asked where the primary of a
// named master is, a single-node Redis backend (open_redis) is connected to
// it, and it is asked again after a connection failure, a timeout or a
// READONLY reply, and as soon as a sentinel announces +switch-master,
// swapping to the new primary when it moved. A primary is only taken when
// it says ROLE master. L1 coherence feeds watch the current primary and
// follow it. See docs/redis.md "Redis Sentinel".
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "l2/backend.hpp"
#include "l2/redis/redis_backend.hpp"

namespace cachekit::l2 {

constexpr int kSentinelDefaultPort = 26379;
constexpr size_t kSentinelMaxHosts = 64;

struct SentinelConfig {
    struct Host {
        std::string host;
        int port = kSentinelDefaultPort;
    };
    std::vector<Host> sentinels;  // asked in turn, the last one that answered first
    std::string master_name;
    // The data connections (credentials, db, TLS, pool, timeouts, reply
    // limit); host and port are the discovered primary's.
    RedisConfig data;
    // AUTH for the sentinels themselves (?sentinel_username=, ?sentinel_password=);
    // they share the data connections' TLS settings and timeouts.
    std::string sentinel_username;
    std::string sentinel_password;
    // Reads (get, get_many, exists, ttl) go to the primary's replicas, round
    // robin (?read_from_replicas=yes); the replica list is read at each
    // discovery.
    bool read_from_replicas = false;
    // At most one discovery per gap (and one at a time).
    std::chrono::milliseconds rediscover_min_gap{200};
};

// redis-sentinel://[user:password@]host[:port][,host[:port]...]/master[/db][?params]
// and rediss-sentinel://... (TLS to sentinels and data nodes, the ssl_*
// parameters of rediss://). Port 26379 by default. Params: sentinel_username,
// sentinel_password, read_from_replicas, l1_coherence (as redis://'s), the ssl_* ones. Anything
// malformed is CACHEKIT_EINVAL with a message that never shows a password.
// `tls`: the caller's TLS options, as parse_redis_url takes them (the URL's
// ssl_* win; tls.enabled makes redis-sentinel:// a TLS one).
SentinelConfig parse_sentinel_url(std::string_view url, const RedisTls &tls = {});

std::unique_ptr<Backend> open_redis_sentinel(const SentinelConfig &config);

}  // namespace cachekit::l2
