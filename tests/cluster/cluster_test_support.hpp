// What the live cluster suites that drive the backend directly share: the
// call deadline, a bounded wait, raw reads on one node, and open options
// whose breaker opens after 3 failures and lets a trial through after 300 ms
// (a node killed and back is seen within a case).
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <thread>

#include "cluster_harness.hpp"
#include "l2/open_backend.hpp"

namespace cachekit::testing {

inline l2::Deadline soon() { return l2::Deadline::after(std::chrono::milliseconds(5000)); }

inline bool eventually(const std::function<bool()> &f, std::chrono::milliseconds budget) {
    const auto until = std::chrono::steady_clock::now() + budget;
    for (;;) {
        if (f()) return true;
        if (std::chrono::steady_clock::now() >= until) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
}

// GET on one node, raw: the value, or "<none>".
inline std::string get_on(const RedisCluster &cluster, int port, const std::string &key) {
    auto r = cluster.command(port, {"GET", key});
    return r && r->type == REDIS_REPLY_STRING ? std::string(r->str, r->len) : std::string("<none>");
}

inline l2::OpenOptions live_options(bool fail_open, unsigned pool_size, std::chrono::milliseconds connect,
                                    std::chrono::milliseconds command) {
    l2::OpenOptions o;
    o.pool_size = pool_size;
    o.connect_timeout = connect;
    o.resilience.command_timeout = command;
    o.resilience.fail_open = fail_open;
    o.resilience.breaker.failure_threshold = 3;
    o.resilience.breaker.recovery = std::chrono::milliseconds(300);
    o.resilience.breaker.half_open_calls = 1;
    o.resilience.breaker.success_threshold = 1;
    return o;
}

}  // namespace cachekit::testing
