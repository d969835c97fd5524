// Backpressure: at most `max_in_flight` calls at once (0 = unbounded). A call
// over the bound waits up to `wait` for a slot, else it is rejected.
// Fork-safe: a forked child starts with no calls in flight (the parent's
// threads that held slots do not exist there) and a usable mutex.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

#include "util/fork_hooks.hpp"

namespace cachekit::l2 {

class Backpressure final : private fork_hooks::Participant {
public:
    Backpressure(uint32_t max_in_flight, std::chrono::milliseconds wait) : max_(max_in_flight), wait_(wait) {
        fork_hooks::join(this);
    }
    ~Backpressure() { fork_hooks::leave(this); }
    Backpressure(const Backpressure &) = delete;
    Backpressure &operator=(const Backpressure &) = delete;

    // True with a slot taken (give it back with release()); false when none
    // freed up in time.
    bool acquire();
    void release();
    uint32_t in_flight() const;

    // RAII slot.
    class Slot {
    public:
        explicit Slot(Backpressure *bp) : bp_(bp) {}
        Slot(const Slot &) = delete;
        Slot &operator=(const Slot &) = delete;
        ~Slot() {
            if (bp_) bp_->release();
        }

    private:
        Backpressure *bp_;
    };

private:
    void before_fork() noexcept override { mu_.lock(); }
    void after_fork_parent() noexcept override { mu_.unlock(); }
    void after_fork_child() noexcept override;

    const uint32_t max_;
    const std::chrono::milliseconds wait_;
    mutable std::mutex mu_;
    std::condition_variable cv_;
    uint32_t in_flight_ = 0;
};

}  // namespace cachekit::l2
