// A background thread that calls a function every `interval` until it is
// destroyed. Destruction wakes it through a condition variable, so it stops
// promptly (it never sleeps through a shutdown).
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace cachekit::l1 {

class Sweeper {
public:
    Sweeper(std::chrono::milliseconds interval, std::function<void()> work);
    ~Sweeper();
    Sweeper(const Sweeper &) = delete;
    Sweeper &operator=(const Sweeper &) = delete;

private:
    void run();

    std::chrono::milliseconds interval_;
    std::function<void()> work_;
    std::mutex mu_;
    std::condition_variable cv_;
    bool stop_ = false;
    std::thread thread_;
};

}  // namespace cachekit::l1
