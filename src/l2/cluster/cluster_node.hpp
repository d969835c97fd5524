// One node of a Redis Cluster as the cluster backend sees it: its pool
// (RedisNode), its own circuit breaker, backpressure and health monitor, the
// per-exchange ticket of them (NodeCall), and what an error reply asks of a client
// (MOVED, ASK, or retry later).
#pragma once

#include <hiredis/hiredis.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "l2/cluster/cluster_topology.hpp"
#include "l2/redis/redis_node.hpp"
#include "l2/resilience/backpressure.hpp"
#include "l2/resilience/circuit_breaker.hpp"
#include "l2/resilience/health_monitor.hpp"
#include "l2/resilience/resilient_backend.hpp"
#include "util/error.hpp"

namespace cachekit::l2::cluster {

struct Node {
    // `cluster_label` names the cluster in log lines (empty: this node stays silent).
    Node(const NodeAddress &a, const RedisConfig &config, const ResilienceConfig &r, const std::string &cluster_label)
        : address(a), canonical(canonical_name(a)), redis(config), breaker(r.breaker), backpressure(r.max_concurrency, r.backpressure_wait),
          breaker_enabled(r.breaker_enabled), breaker_config(r.breaker),
          monitor(cluster_label.empty() ? std::string() : cluster_label + ": node " + a.name()) {}
    NodeAddress address;    // as the map spells it (what the pool connects to)
    std::string canonical;  // canonical_name(address): the node's identity
    RedisNode redis;
    CircuitBreaker breaker;
    Backpressure backpressure;
    bool breaker_enabled;
    BreakerConfig breaker_config;
    // This node's health and its log lines: a cluster with one node down
    // logs that node's transitions, not the whole cluster's.
    HealthMonitor monitor;
};
using NodePtr = std::shared_ptr<Node>;

// A node's breaker ticket and backpressure slot for one exchange; the
// outcome is reported once (done/failed), neutral when neither ran. A node
// that refuses (breaker open, backpressure full) throws a KeyFault.
class NodeCall {
public:
    explicit NodeCall(Node &node);
    ~NodeCall();
    NodeCall(const NodeCall &) = delete;
    NodeCall &operator=(const NodeCall &) = delete;
    void done();
    void failed(std::string_view cause);

private:
    Node &node_;
    CircuitBreaker::Ticket ticket_;
    bool slot_ = false;
    bool reported_ = false;
};

// An I/O failure or a timeout: the node's fault (its breaker's failure).
inline bool is_node_failure(const Error &e) { return e.code() == CACHEKIT_EBACKEND || e.code() == CACHEKIT_ETIMEOUT; }

enum class Redirect { None, Moved, Ask, Retry };

// What an error reply asks the client to do: MOVED/ASK (with the slot and
// the node named), Retry (TRYAGAIN, CLUSTERDOWN, LOADING), or None.
Redirect redirect_of(const redisReply &reply, uint16_t *slot, NodeAddress *to);

}  // namespace cachekit::l2::cluster
