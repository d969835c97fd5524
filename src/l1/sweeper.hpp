// A background thread that calls a function every `interval` until it is
// destroyed. Destruction wakes it through a condition variable, so it stops
// promptly (it never sleeps through a shutdown).
//
// fork(): the thread does not exist in a child. The owner calls
// ensure_running() on its write paths (one compare of the cached pid) and
// the sweeper starts a new thread in the child; the parent's thread handle
// is abandoned, never joined. Its locks come fresh through the owner's
// fork handlers (fork_prepare / fork_parent / fork_child, called from the
// L1's fork_hooks participant).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include <sys/types.h>

#include "util/fork_hooks.hpp"

namespace cachekit::l1 {

class Sweeper {
public:
    Sweeper(std::chrono::milliseconds interval, std::function<void()> work);
    ~Sweeper();
    Sweeper(const Sweeper &) = delete;
    Sweeper &operator=(const Sweeper &) = delete;

    // Start the thread again if this is a forked child of the process that
    // started it. Throws std::system_error if no thread can be started.
    void ensure_running() {
        if (pid_.load(std::memory_order_relaxed) != fork_hooks::pid()) restart_in_child();
    }

    void fork_prepare() noexcept;
    void fork_parent() noexcept;
    void fork_child() noexcept;

private:
    void run();
    void start();
    void restart_in_child();

    std::chrono::milliseconds interval_;
    std::function<void()> work_;
    std::mutex restart_mu_;  // one restart at a time
    std::mutex mu_;
    std::condition_variable cv_;
    bool stop_ = false;
    std::atomic<pid_t> pid_{0};  // the process the thread runs in
    std::unique_ptr<std::thread> thread_;
};

}  // namespace cachekit::l1
