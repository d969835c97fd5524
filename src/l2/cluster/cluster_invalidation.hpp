// L1 coherence on a Redis Cluster: one node session (feed_session.hpp, its
// own connection with CLIENT TRACKING BCAST redirected to itself) per
// watched node, all served by one feed thread (feed_loop.hpp) per cache and
// following the topology: every
// primary, and with read_from_replicas every replica too (a replica's own
// tracking reports a write when the replica applies it, which the primary's
// message, sent earlier, cannot). The cache sees one feed: live only while
// every node's feed is subscribed, suspended (its L1 flushed) the moment
// any is lost or a new node appears.
// docs/redis.md, "L1 coherence" and "Redis Cluster".
#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "l2/cluster/cluster_topology.hpp"
#include "l2/invalidation_feed.hpp"
#include "l2/redis/redis_backend.hpp"

namespace cachekit::l2::cluster {

class ClusterFeed;

// The cluster backend's list of its running feeds; it tells them every new
// set of primaries. Shared with the feeds, so either may go first.
class ClusterFeeds {
public:
    // nullptr when node.l1_coherence is Off. `primaries`: the current map's
    // watched nodes (its primaries, plus its replicas when reads go there).
    std::unique_ptr<InvalidationFeed> watch(const std::shared_ptr<ClusterFeeds> &self, const RedisConfig &node,
                                            const WatchRequest &request, const std::vector<NodeAddress> &primaries);
    // The watched nodes changed (a refresh, a MOVED to a new node): `primaries`
    // is asked under the lock, so concurrent calls apply the newest last.
    // Never fails for want of a thread: when the feed's thread cannot be
    // started, the nodes stay not live (the L1 shut) and it is tried again
    // at the next call.
    void follow(const std::function<std::vector<NodeAddress>()> &primaries);
    // Held across fork() by the backend's fork hooks.
    std::mutex &mutex() { return mu_; }

private:
    friend class ClusterFeed;
    std::mutex mu_;
    std::vector<ClusterFeed *> feeds_;
};

}  // namespace cachekit::l2::cluster
