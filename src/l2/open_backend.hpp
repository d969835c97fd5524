// Open a backend by URL and wrap it in the resilience layer:
//   redis://, rediss://, unix:// -> parse_redis_url + open_redis
//   redis-cluster://h:p,...   -> parse_cluster_url + open_redis_cluster (breaker and
//                                backpressure per node; the outer layer gets no
//                                second concurrency bound)
//   redis[s]-sentinel://h,.../master -> parse_sentinel_url + open_redis_sentinel
//                                (one Redis server at a time: the outer layer
//                                bounds and breaks it as for redis://)
//   file:///absolute/dir      -> open_file (a relative path is EINVAL)
//   memory://                 -> open_memory
// Any other scheme is CACHEKIT_EINVAL.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "l2/redis/redis_backend.hpp"
#include "l2/resilience/resilient_backend.hpp"

namespace cachekit::l2 {

struct OpenOptions {
    unsigned pool_size = 10;
    std::chrono::milliseconds connect_timeout{500};
    uint64_t redis_max_reply_bytes = 0;  // 0 = kRedisDefaultMaxReplyBytes
    RedisTls redis_tls;  // the caller's TLS options: redis:// and rediss:// only (the URL's ssl_* win)
    uint64_t file_max_bytes = 1ULL << 30;
    uint64_t file_max_entries = 10000;
    uint64_t file_max_value_bytes = 100ULL << 20;
    std::chrono::milliseconds file_lock_timeout{50};  // one entry's lock wait (FileConfig::lock_timeout)
    ResilienceConfig resilience;  // command_timeout is also the Redis command timeout
};

// The URL to use: `url` when given, else $CACHEKIT_REDIS_URL, else $REDIS_URL
// (an empty variable counts as unset); none -> CACHEKIT_EINVAL.
std::string resolve_url(const char *url);

// The backend for a URL, without the resilience layer.
std::unique_ptr<Backend> open_backend_raw(std::string_view url, const OpenOptions &options);

// The Redis reply limit for a cache storing values up to max_value_bytes:
// room for the envelope, worst-case LZ4 growth, the AEAD tag and nonce, and
// the RESP framing.
uint64_t reply_limit_for_values(uint64_t max_value_bytes);

// open_backend_raw wrapped in a ResilientBackend.
std::unique_ptr<ResilientBackend> open_backend(std::string_view url, const OpenOptions &options);

}  // namespace cachekit::l2
