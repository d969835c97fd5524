#include "l1/sweeper.hpp"

namespace cachekit::l1 {

Sweeper::Sweeper(std::chrono::milliseconds interval, std::function<void()> work)
    : interval_(interval), work_(std::move(work)) {
    thread_ = std::thread([this] { run(); });
}

Sweeper::~Sweeper() {
    {
        std::lock_guard lock(mu_);
        stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
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
