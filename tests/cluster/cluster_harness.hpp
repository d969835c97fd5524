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
    // tls_dir: make_tls_certs()'s files (tls_certs.hpp): every node also
    // listens on a TLS port with its "server" certificate and asks clients
    // for one from "ca"; the bus and replication speak TLS only, and CLUSTER
    // SLOTS asked over TLS names the TLS ports. The plain ports stay for the
    // harness (command(), redis-cli).
    explicit RedisCluster(int node_timeout_ms = 1000, std::string password = "", std::string tls_dir = "");
    ~RedisCluster();
    RedisCluster(const RedisCluster &) = delete;
    RedisCluster &operator=(const RedisCluster &) = delete;

    // redis-cluster://[:password@]127.0.0.1:p0,127.0.0.1:p1[?query]
    std::string url(const std::string &query = "") const;
    // rediss-cluster://127.0.0.1:t0,127.0.0.1:t1?ssl_ca_certs=..&ssl_certfile=..&ssl_keyfile=..[&query]
    // (the "client" certificate; needs tls_dir).
    std::string tls_url(const std::string &query = "") const;
    int port(int i) const { return nodes_[static_cast<size_t>(i)]->port(); }
    int tls_port_of(int port) const;
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
    std::vector<int> tls_ports_;  // by node, with tls_dir
    std::string tls_dir_;
    std::string cli_;
    std::string password_;
};

}  // namespace cachekit::testing
