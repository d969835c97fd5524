// The feed's publisher: PUBLISHes what InvalidationFeed::announce() queued
// on the reference SDK's channel, pipelined, on a connection of its own (the
// feed's sessions are subscribed), from a thread started by the first
// announce. One per feed: on a cluster any node will do (Redis Cluster
// delivers a PUBLISH to every node), retarget() names which.
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "l2/redis/redis_backend.hpp"

namespace cachekit::l2::redis_conn {
struct Link;
}

namespace cachekit::l2::feed {

class Publisher {
public:
    explicit Publisher(RedisConfig target);
    ~Publisher();
    Publisher(const Publisher &) = delete;
    Publisher &operator=(const Publisher &) = delete;

    // Queued; never throws; best effort (at most once, as the SDK's events).
    void announce(std::string_view cache_key) noexcept;
    // The node to publish to from the next batch on.
    void retarget(const RedisConfig &target);

private:
    void run() noexcept;

    const pid_t pid_;
    std::mutex mu_;
    std::condition_variable cv_;
    RedisConfig target_;     // under mu_
    uint64_t generation_ = 0;  // under mu_: bumped by retarget()
    bool stop_ = false;
    redis_conn::Link *live_ = nullptr;  // under mu_: the connection, shut down by the destructor to wake a read
    std::vector<std::string> queue_;
    static constexpr size_t kMaxQueued = 10000;
    std::unique_ptr<std::thread> thread_;  // started by the first announce()
};

}  // namespace cachekit::l2::feed
