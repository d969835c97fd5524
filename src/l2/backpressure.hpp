// Backpressure: at most `max_in_flight` calls at once (0 = unbounded). A call
// over the bound waits up to `wait` for a slot, else it is rejected.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace cachekit::l2 {

class Backpressure {
public:
    Backpressure(uint32_t max_in_flight, std::chrono::milliseconds wait) : max_(max_in_flight), wait_(wait) {}

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
    const uint32_t max_;
    const std::chrono::milliseconds wait_;
    mutable std::mutex mu_;
    std::condition_variable cv_;
    uint32_t in_flight_ = 0;
};

}  // namespace cachekit::l2
