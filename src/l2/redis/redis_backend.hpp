// The Redis backend's configuration, URL parsing and opening (RESP2; its
// connections, TLS included, are connection.hpp's).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "l2/backend.hpp"
#include "l2/invalidation_feed.hpp"

namespace cachekit::l2 {

// Redis's largest string (512 MiB) plus room for the framing of a reply.
constexpr uint64_t kRedisDefaultMaxReplyBytes = (512ULL << 20) + (1ULL << 20);

// rediss:// (redis-py's parameter names). Off unless enabled.
struct RedisTls {
    enum class CertReqs { Required, Optional, None };
    bool enabled = false;
    CertReqs cert_reqs = CertReqs::Required;
    std::string ca_certs;  // PEM bundle; with ca_path empty too: the system's default paths
    std::string ca_path;   // c_rehash'ed directory
    std::string certfile;  // client certificate chain (mutual TLS)
    std::string keyfile;   // its key; empty: in certfile
    int check_hostname = -1;  // -1: true when cert_reqs is Required
    bool checks_hostname() const {
        return check_hostname < 0 ? cert_reqs == CertReqs::Required : check_hostname != 0;
    }
    // Anything differs from the defaults (a caller asked for TLS or set one
    // of its options).
    bool any_set() const {
        return enabled || cert_reqs != CertReqs::Required || check_hostname >= 0 || !ca_certs.empty() ||
               !ca_path.empty() || !certfile.empty() || !keyfile.empty();
    }
};

struct RedisConfig {
    // Where: a TCP host/port or a unix socket path.
    std::string host = "127.0.0.1";
    int port = 6379;
    std::string unix_path;  // non-empty: connect over this unix socket
    std::string username;   // AUTH username password (Redis 6 ACL) when both set
    std::string password;   // AUTH password when set
    int db = 0;             // SELECT when non-zero
    unsigned pool_size = 10;
    // A connect (with AUTH and SELECT) ends by min(connect_timeout, the
    // call's deadline); each round trip by min(command_timeout, deadline).
    std::chrono::milliseconds connect_timeout{500};
    std::chrono::milliseconds command_timeout{250};
    // The largest reply read (bytes, framing included): a bigger bulk string
    // is refused with CACHEKIT_ETOOBIG from its length header, before it is
    // read. 0 = kRedisDefaultMaxReplyBytes.
    uint64_t max_reply_bytes = 0;
    // After a failed connect (or AUTH/SELECT), further connects wait this
    // long, doubling per failure up to reconnect_backoff_max; calls in the
    // window fail fast with CACHEKIT_EBACKEND. A successful connect resets it.
    std::chrono::milliseconds reconnect_backoff_min{50};
    std::chrono::milliseconds reconnect_backoff_max{2000};
    // L1 coherence for caches on this backend (URL ?l1_coherence=): Auto is
    // tracking on Redis >= 6, else the reference SDK's channel alone. Off by
    // default (docs/redis.md says why).
    CoherenceMode l1_coherence = CoherenceMode::Off;
    RedisTls tls;
};

// Parse redis[s]://[user:password@]host[:port][/db][?l1_coherence=M&ssl_*=] or
// unix:///path[?db=N&l1_coherence=M]
// (percent-decoding user and password). Anything malformed throws
// CACHEKIT_EINVAL with a clear message. `tls` holds the caller's TLS options
// (cachekit_backend_options' tls_* fields): the URL's ssl_* parameters are
// applied over them (the URL wins, as in redis-py's from_url), tls.enabled
// makes a redis:// URL a TLS one, and any of them set on a unix:// URL or on
// a redis:// URL without TLS is CACHEKIT_EINVAL.
RedisConfig parse_redis_url(std::string_view url, const RedisTls &tls = {});
// parse_redis_url of a URL that another scheme's parser (cluster, sentinel)
// made from its pieces: a problem is "invalid <kind> URL: ...", named as
// the URL the user wrote.
RedisConfig parse_redis_url_part(const std::string &url, const char *kind, const RedisTls &tls = {});

std::unique_ptr<Backend> open_redis(const RedisConfig &config);

}  // namespace cachekit::l2
