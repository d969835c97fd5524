// The Redis Cluster backend: keys routed by slot to the shard's primary
// (or, when asked, a replica), one connection pool per node (RedisNode, the
// single-node backend's pool), MOVED/ASK followed, TRYAGAIN/CLUSTERDOWN
// retried with backoff inside the call's deadline, the slot map refreshed
// in the background and after failures, and a circuit breaker and
// backpressure per node. See docs/redis.md "Redis Cluster".
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "l2/backend.hpp"
#include "l2/redis/redis_backend.hpp"
#include "l2/resilience/resilient_backend.hpp"

namespace cachekit::l2 {

struct ClusterConfig {
    struct Seed {
        std::string host;
        int port = 6379;
    };
    std::vector<Seed> seeds;
    // Every node's connection settings (host and port are set per node):
    // credentials, pool size, timeouts, reply limit.
    RedisConfig node;
    // Reads (get, exists, ttl, get_many) from the shard's replicas, round
    // robin (READONLY); writes, locks and clears always go to primaries.
    bool read_from_replicas = false;
    // The slot map is asked for again this often (and at once after a
    // redirect or a node failure, at most every refresh_min_gap).
    std::chrono::milliseconds refresh_interval{5000};
    std::chrono::milliseconds refresh_min_gap{100};
    // The breaker and backpressure of each node (fail_open: a batch's keys
    // on a failed node are misses / skipped writes instead of an error).
    ResilienceConfig node_resilience;
    // How log lines name the cluster (backend_label of its URL); each node's
    // lines name it under that. Empty: the nodes log nothing.
    std::string label;
};

// redis-cluster://[user:password@]host:port[,host:port...][?options], and
// rediss-cluster:// for nodes that speak TLS (node.tls).
// Options: read_from_replicas=yes|no, refresh_ms=N (100..3600000),
// l1_coherence=auto|tracking|pubsub|off (node.l1_coherence; off by default),
// and over TLS rediss://'s ssl_* parameters. `tls`: the caller's TLS options
// (cachekit_backend_options' tls_* fields), as parse_redis_url takes them:
// the URL's ssl_* win, tls.enabled makes redis-cluster:// a TLS one.
ClusterConfig parse_cluster_url(std::string_view url, const RedisTls &tls = {});

std::unique_ptr<Backend> open_redis_cluster(const ClusterConfig &config);

}  // namespace cachekit::l2
