#include "l2/open_backend.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "l2/file/file_backend.hpp"
#include "l2/memory_backend.hpp"
#include "l2/redis/redis_backend.hpp"
#include "l2/cluster/redis_cluster_backend.hpp"
#include "l2/sentinel/redis_sentinel_backend.hpp"
#include "l2/backend_label.hpp"
#include "l2/url_text.hpp"
#include "util/error.hpp"

namespace cachekit::l2 {

namespace {

constexpr const char *kSchemes =
    "redis://, rediss://, redis-cluster://, rediss-cluster://, redis-sentinel://, rediss-sentinel://, unix://, "
    "file:///absolute/dir or memory://";

bool has_scheme(std::string_view url, std::string_view scheme) { return starts_with_nocase(url, scheme); }

// The directory of a file:// URL: file:///abs/dir (an empty host), with %XX
// escapes decoded. file://host/..., a relative path, a query or fragment, or
// an escaped NUL are CACHEKIT_EINVAL.
std::string file_url_path(std::string_view url) {
    std::string_view rest = url.substr(7);  // after "file://"
    if (rest.empty() || rest.front() != '/')
        fail(CACHEKIT_EINVAL, "file URL needs an absolute path (file:///absolute/dir), got " + std::string(url));
    if (rest.find_first_of("?#") != std::string_view::npos)
        fail(CACHEKIT_EINVAL, "file URL takes no query or fragment: " + std::string(url));
    std::optional<std::string> path = percent_decode(rest, true);
    if (!path) fail(CACHEKIT_EINVAL, "bad percent escape in file URL " + std::string(url));
    return *path;
}

}  // namespace

std::string resolve_url(const char *url) {
    if (url != nullptr) return url;
    for (const char *name : {"CACHEKIT_REDIS_URL", "REDIS_URL"}) {
        const char *v = std::getenv(name);
        if (v != nullptr && *v != '\0') return v;
    }
    fail(CACHEKIT_EINVAL, "no backend URL: pass one or set CACHEKIT_REDIS_URL");
}

std::unique_ptr<Backend> open_backend_raw(std::string_view url, const OpenOptions &o) {
    if (has_scheme(url, "redis-cluster://") || has_scheme(url, "rediss-cluster://")) {
        ClusterConfig cc = parse_cluster_url(url, o.redis_tls);
        cc.node.pool_size = o.pool_size;
        cc.node.connect_timeout = o.connect_timeout;
        cc.node.command_timeout = o.resilience.command_timeout;
        cc.node.max_reply_bytes = o.redis_max_reply_bytes;
        cc.node_resilience = o.resilience;  // the breaker and backpressure work per node
        cc.label = backend_label(url);      // and so do the health and its log lines
#ifdef CACHEKIT_HAVE_HIREDIS
        return open_redis_cluster(cc);
#else
        fail(CACHEKIT_EINVAL, "this libcachekit was built without hiredis (-Dredis=disabled): no Redis Cluster backend");
#endif
    }
    if (has_scheme(url, "redis-sentinel://") || has_scheme(url, "rediss-sentinel://")) {
        SentinelConfig sc = parse_sentinel_url(url, o.redis_tls);
        sc.data.pool_size = o.pool_size;  // the data connections; the sentinels get one each
        sc.data.connect_timeout = o.connect_timeout;
        sc.data.command_timeout = o.resilience.command_timeout;
        sc.data.max_reply_bytes = o.redis_max_reply_bytes;
#ifdef CACHEKIT_HAVE_HIREDIS
        return open_redis_sentinel(sc);
#else
        fail(CACHEKIT_EINVAL, "this libcachekit was built without hiredis (-Dredis=disabled): no Redis Sentinel backend");
#endif
    }
    if (has_scheme(url, "redis://") || has_scheme(url, "rediss://") || has_scheme(url, "unix://")) {
        RedisConfig rc = parse_redis_url(url, o.redis_tls);  // refuses them on unix:// and plain redis://
        rc.pool_size = o.pool_size;
        rc.connect_timeout = o.connect_timeout;
        rc.command_timeout = o.resilience.command_timeout;
        rc.max_reply_bytes = o.redis_max_reply_bytes;
#ifdef CACHEKIT_HAVE_HIREDIS
        return open_redis(rc);
#else
        fail(CACHEKIT_EINVAL, "this libcachekit was built without hiredis (-Dredis=disabled): no Redis backend");
#endif
    }
    // Past here no backend speaks TLS: options asking for it are a mistake, not a no-op.
    if (o.redis_tls.any_set())
        fail(CACHEKIT_EINVAL, "TLS options (tls_*) apply to Redis URLs only (redis[s]://, redis[s]-cluster://, redis[s]-sentinel://), not to " +
                                  std::string(url.substr(0, std::min<size_t>(url.find(':'), 16))) + ":");
    if (has_scheme(url, "file://")) {
        FileConfig fc;
        fc.directory = file_url_path(url);
        fc.max_bytes = o.file_max_bytes;
        fc.max_entries = o.file_max_entries;
        fc.max_value_bytes = o.file_max_value_bytes;
        fc.lock_timeout = o.file_lock_timeout;
        return open_file(fc);
    }
    if (has_scheme(url, "memory://")) {
        if (url.size() != 9) fail(CACHEKIT_EINVAL, "memory:// takes nothing after the scheme: " + std::string(url));
        return open_memory();
    }
    std::string shown(url.substr(0, 64));
    fail(CACHEKIT_EINVAL, "unsupported backend URL \"" + shown + "\": use " + kSchemes);
}

uint64_t reply_limit_for_values(uint64_t max_value_bytes) {
    const uint64_t slack = max_value_bytes / 64 + (64 << 10);
    return max_value_bytes > UINT64_MAX - slack ? UINT64_MAX : max_value_bytes + slack;
}

std::unique_ptr<ResilientBackend> open_backend(std::string_view url, const OpenOptions &options) {
    ResilienceConfig outer = options.resilience;
    // A cluster bounds calls per node (its own backpressure): no second bound over all of them.
    if (has_scheme(url, "redis-cluster://") || has_scheme(url, "rediss-cluster://")) outer.max_concurrency = 0;
    outer.label = backend_label(url);
    return std::make_unique<ResilientBackend>(open_backend_raw(url, options), outer);
}

}  // namespace cachekit::l2
