#include "l1/sweeper.hpp"

#include <new>
#include <vector>

namespace cachekit::l1 {

namespace {
// Handles of threads a fork left behind: they name no thread in the child,
// so they are neither joined nor destroyed (a joinable std::thread's
// destructor would terminate the process). Reachable, so no leak report.
void abandon(std::unique_ptr<std::thread> t) {
    static std::mutex mu;
    static auto *abandoned = new std::vector<std::thread *>;
    std::lock_guard lock(mu);
    abandoned->push_back(t.release());
}
}  // namespace

Sweeper::Sweeper(std::chrono::milliseconds interval, std::function<void()> work)
    : interval_(interval), work_(std::move(work)) {
    start();
}

void Sweeper::start() {
    thread_ = std::make_unique<std::thread>([this] { run(); });
    pid_.store(fork_hooks::pid(), std::memory_order_relaxed);
}

Sweeper::~Sweeper() {
    if (pid_.load(std::memory_order_relaxed) != fork_hooks::pid()) {
        abandon(std::move(thread_));  // a forked child that never restarted it
        return;
    }
    {
        std::lock_guard lock(mu_);
        stop_ = true;
    }
    cv_.notify_all();
    thread_->join();
}

void Sweeper::restart_in_child() {
    std::lock_guard lock(restart_mu_);
    if (pid_.load(std::memory_order_relaxed) == fork_hooks::pid()) return;  // another thread did
    abandon(std::move(thread_));
    start();
}

// The sweeper's thread holds mu_ only briefly (never during work_()), so
// taking it here waits a moment at most.
void Sweeper::fork_prepare() noexcept {
    restart_mu_.lock();
    mu_.lock();
}

void Sweeper::fork_parent() noexcept {
    mu_.unlock();
    restart_mu_.unlock();
}

void Sweeper::fork_child() noexcept {
    // Fresh, unlocked, and with no record of the parent's waiting thread.
    new (&mu_) std::mutex;
    new (&cv_) std::condition_variable;
    new (&restart_mu_) std::mutex;
}

void Sweeper::run() {
    std::unique_lock lock(mu_);
    for (;;) {
        if (cv_.wait_for(lock, interval_, [this] { return stop_; })) return;
        lock.unlock();
        try {
            work_();
        } catch (...) {
            // A sweep only frees memory; nothing it can throw is worth dying for.
        }
        lock.lock();
    }
}

}  // namespace cachekit::l1
