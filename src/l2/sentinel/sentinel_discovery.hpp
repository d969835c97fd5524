// Asking sentinels where a master's primary is (SENTINEL
// get-master-addr-by-name), and checking that the address they give says
// ROLE master before anyone writes to it. One RedisNode per sentinel: its
// pool bounds every connect and round trip, guards the reply's size and
// shape, speaks TLS when the data connections do, and drops inherited
// connections after fork().
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "l2/backend.hpp"
#include "l2/redis/redis_node.hpp"
#include "l2/sentinel/redis_sentinel_backend.hpp"

namespace cachekit::l2 {

struct PrimaryAddress {
    std::string host;
    int port = 0;
    bool operator==(const PrimaryAddress &) const = default;
    std::string text() const;  // "127.0.0.1:6379", "[::1]:6379"
};

class SentinelDiscovery {
public:
    explicit SentinelDiscovery(const SentinelConfig &config);
    ~SentinelDiscovery();
    SentinelDiscovery(const SentinelDiscovery &) = delete;
    SentinelDiscovery &operator=(const SentinelDiscovery &) = delete;

    // The primary the first sentinel to answer names, asked in turn from the
    // last one that answered. An address other than `known` must say ROLE
    // master, else the next sentinel is asked (a stale or hostile sentinel
    // must not make us write to a replica). CACHEKIT_EBACKEND naming every
    // sentinel's failure when none gives one; CACHEKIT_ETIMEOUT when the
    // deadline passed first. Thread-safe.
    PrimaryAddress find(Deadline deadline, const PrimaryAddress *known);

    // Ask sentinel `index` (of config.sentinels) first from now on: the one
    // that announced a switch knows the new primary before the others.
    void prefer(size_t index) { first_.store(index % sentinels_.size(), std::memory_order_relaxed); }

    // The primary's replicas that reads may use (read_from_replicas): the
    // first sentinel to answer SENTINEL replicas <name> lists them, those
    // flagged down or disconnected are left out, and each must answer ROLE
    // as a connected replica of
    // `primary` (same host text and port), unless it is in `trusted` (already
    // checked for this primary). At most kMaxReplicas. Throws as find()
    // when no sentinel answers.
    static constexpr size_t kMaxReplicas = 16;
    std::vector<PrimaryAddress> replicas(const PrimaryAddress &primary, const std::vector<PrimaryAddress> &trusted,
                                         Deadline deadline);

    // True when `where` answers ROLE with "master" (throws on I/O failure).
    bool is_master(const PrimaryAddress &where, Deadline deadline) const;

private:
    std::vector<PrimaryAddress> ask_replicas(RedisNode &sentinel, Deadline deadline) const;
    bool is_replica_of(const PrimaryAddress &where, const PrimaryAddress &primary, Deadline deadline) const;
    redis_replies::Reply role_of(const PrimaryAddress &where, Deadline deadline) const;

    // nullopt-like empty host: the sentinel does not know the master.
    PrimaryAddress ask(RedisNode &sentinel, Deadline deadline) const;

    std::string master_;
    RedisConfig data_;
    std::vector<std::unique_ptr<RedisNode>> sentinels_;
    std::atomic<size_t> first_{0};  // the last sentinel that answered
};

}  // namespace cachekit::l2
