// A private 6-node Redis Cluster (3 primaries, 3 replicas) on loopback for
// tests and benchmarks: six RedisServer processes (tests/redis) started with
// --cluster-enabled yes on free ports, joined by `redis-cli --cluster
// create --cluster-replicas 1 --cluster-yes`. Every node dies with the test
// process (RedisServer's PDEATHSIG) and is stopped by the destructor.
#pragma once

#include <hiredis/hiredis.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "redis_server.hpp"

namespace cachekit::testing {

struct ClusterNodeInfo {
    std::string id;
    int port = 0;
    bool primary = false;
    bool failed = false;
    std::string primary_id;  // a replica's primary
};

class RedisCluster {
public:
    static constexpr int kNodes = 6;

    // redis-server or redis-cli missing: print why and exit(77).
    static void require_or_skip(const char *program);

    // node_timeout_ms: cluster-node-timeout (how soon a dead primary is failed over).
    // password: every node's requirepass and masterauth (AUTH in command(), -a for redis-cli).
    explicit RedisCluster(int node_timeout_ms = 1000, std::string password = "");
    ~RedisCluster();
    RedisCluster(const RedisCluster &) = delete;
    RedisCluster &operator=(const RedisCluster &) = delete;

    // redis-cluster://[:password@]127.0.0.1:p0,127.0.0.1:p1[?query]
    std::string url(const std::string &query = "") const;
    int port(int i) const { return nodes_[static_cast<size_t>(i)]->port(); }
    RedisServer &server_on(int port);

    // CLUSTER NODES as one node sees it.
    std::vector<ClusterNodeInfo> nodes(int asked_port) const;
    std::vector<int> primary_ports() const;
    std::string id_of(int port) const;
    // The port of the primary serving `slot` (CLUSTER SHARDS via a live node).
    int owner_of(unsigned slot) const;

    // Every running node says cluster_state:ok and agrees on the slot owners.
    bool wait_ok(std::chrono::milliseconds budget) const;

    // One command on one node (argv form); the reply, or null on I/O failure.
    std::unique_ptr<redisReply, void (*)(void *)> command(int port, const std::vector<std::string> &args) const;
    // redis-cli with these arguments; its exit status. Output goes to the log dir.
    int cli(const std::vector<std::string> &args) const;

    void kill(int port);
    void stop_all();
    void start_all();  // also resumes paused nodes

private:
    std::vector<std::unique_ptr<RedisServer>> nodes_;
    std::vector<int> cluster_ports_;
    std::string cli_;
    std::string password_;
};

}  // namespace cachekit::testing
