// Clocks for the L1 cache. Time is a uint64_t count of nanoseconds on a
// monotonic clock; kNever is "no deadline". The cache takes a Clock * so
// tests can inject a ManualClock they advance by hand.
#pragma once

#include <atomic>
#include <cstdint>
#include <ctime>

namespace cachekit::l1 {

inline constexpr uint64_t kNever = UINT64_MAX;

class Clock {
public:
    virtual ~Clock() = default;
    virtual uint64_t now_ns() const noexcept = 0;
};

// CLOCK_MONOTONIC (what std::chrono::steady_clock reads on Linux), through the
// vDSO: about 15-20 ns per call.
class MonotonicClock final : public Clock {
public:
    uint64_t now_ns() const noexcept override { return read(); }
    static uint64_t read() noexcept {
        timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
    }
};

// CLOCK_MONOTONIC_COARSE: the time of the last kernel tick, about 3 ns per
// call but only as fine as one tick (4 ms at HZ=250, 1 ms at HZ=1000).
class CoarseMonotonicClock final : public Clock {
public:
    uint64_t now_ns() const noexcept override { return read(); }
    static uint64_t read() noexcept {
        timespec ts;
        clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
        return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
    }
};

// A clock that only moves when told to. Thread-safe.
class ManualClock final : public Clock {
public:
    explicit ManualClock(uint64_t start_ns = 1000000000u) : now_(start_ns) {}
    uint64_t now_ns() const noexcept override { return now_.load(std::memory_order_acquire); }
    void advance(uint64_t ns) noexcept { now_.fetch_add(ns, std::memory_order_acq_rel); }
    void set(uint64_t ns) noexcept { now_.store(ns, std::memory_order_release); }

private:
    std::atomic<uint64_t> now_;
};

// a + b, saturating at kNever.
inline uint64_t add_saturating(uint64_t a, uint64_t b) noexcept {
    return b > kNever - a ? kNever : a + b;
}

}  // namespace cachekit::l1
