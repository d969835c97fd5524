// Shared bits of the Redis backend tests. Include after every C++ standard
// header: the last thing it pulls in is cmocka.h, whose function-like fail()
// macro would break any standard header included after it.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "l2/redis/redis_backend.hpp"
#include "redis_server.hpp"
#include "util/buffer.hpp"
#include "util/error.hpp"

namespace rt {

using namespace std::chrono_literals;
using cachekit::l2::Deadline;

inline Deadline soon() { return Deadline::after(std::chrono::milliseconds(5000)); }

// The code of the cachekit::Error `f` throws (0 when it returns), with its message.
inline int error_of(const std::function<void()> &f, std::string *message = nullptr) {
    try {
        f();
    } catch (const cachekit::Error &e) {
        if (message) *message = e.what();
        return e.code();
    }
    return 0;
}

inline std::unique_ptr<cachekit::l2::Backend> open_url(const std::string &url,
                                                       std::chrono::milliseconds command_timeout = 5000ms,
                                                       unsigned pool_size = 4) {
    cachekit::l2::RedisConfig config = cachekit::l2::parse_redis_url(url);
    config.command_timeout = command_timeout;
    config.connect_timeout = 2000ms;
    config.pool_size = pool_size;
    return cachekit::l2::open_redis(config);
}

// Retry `f` until it returns true or `budget` passes.
inline bool eventually(const std::function<bool()> &f, std::chrono::milliseconds budget = 5000ms) {
    auto until = std::chrono::steady_clock::now() + budget;
    for (;;) {
        if (f()) return true;
        if (std::chrono::steady_clock::now() >= until) return false;
        std::this_thread::sleep_for(20ms);
    }
}

}  // namespace rt

#include <csetjmp>
#include <cstdarg>
#include <cstddef>

extern "C" {
#include <cmocka.h>
}
