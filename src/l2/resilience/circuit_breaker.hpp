// A circuit breaker: closed -> open after `failure_threshold` consecutive
// failures; open rejects calls until `recovery` has passed, then half-open
// admits at most `half_open_calls` trial calls at a time; `success_threshold`
// trial successes close it, any trial failure opens it again.
//
// A call asks allow() for a Ticket and reports exactly one outcome for it:
// success(), failure() or neutral() (the call was not a verdict on the
// backend: invalid input, a miss, a backpressure rejection). Outcomes of
// tickets issued in an earlier state (e.g. a slow call admitted while closed
// that finishes after the breaker opened) are ignored. Thread-safe and
// fork-safe: a forked child keeps the state but not the parent's trial calls.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>

#include "l2/backend.hpp"
#include "util/fork_hooks.hpp"

namespace cachekit::l2 {

struct BreakerConfig {
    uint32_t failure_threshold = 5;
    std::chrono::milliseconds recovery{30000};
    uint32_t half_open_calls = 3;
    uint32_t success_threshold = 3;
    // Injectable clock for tests; empty = SteadyClock::now.
    std::function<SteadyClock::time_point()> clock;
};

class CircuitBreaker final : private fork_hooks::Participant {
public:
    enum class State { Closed = CACHEKIT_BREAKER_CLOSED, Open = CACHEKIT_BREAKER_OPEN, HalfOpen = CACHEKIT_BREAKER_HALF_OPEN };

    struct Ticket {
        bool admitted = false;
        bool trial = false;         // a half-open trial call
        uint64_t generation = 0;    // the state period it was issued in
    };

    explicit CircuitBreaker(BreakerConfig config);
    ~CircuitBreaker() { fork_hooks::leave(this); }
    CircuitBreaker(const CircuitBreaker &) = delete;
    CircuitBreaker &operator=(const CircuitBreaker &) = delete;

    Ticket allow();
    void success(const Ticket &t);
    // True when this failure opened the breaker (for the breaker_open log line).
    bool failure(const Ticket &t);
    void neutral(const Ticket &t);

    // The state now (an open breaker whose recovery time has passed reports
    // HalfOpen: the next call is a trial).
    State state() const;
    uint64_t times_opened() const;

private:
    void before_fork() noexcept override { mu_.lock(); }
    void after_fork_parent() noexcept override { mu_.unlock(); }
    void after_fork_child() noexcept override {
        trials_in_flight_ = 0;  // run by the parent's threads: they never report here
        mu_.unlock();
    }
    SteadyClock::time_point now() const { return config_.clock ? config_.clock() : SteadyClock::now(); }
    void open_locked(SteadyClock::time_point at);
    void maybe_half_open_locked(SteadyClock::time_point at);

    BreakerConfig config_;
    mutable std::mutex mu_;
    State state_ = State::Closed;
    uint64_t generation_ = 0;
    uint32_t consecutive_failures_ = 0;
    uint32_t trials_in_flight_ = 0;
    uint32_t trial_successes_ = 0;
    SteadyClock::time_point opened_at_{};
    uint64_t times_opened_ = 0;
};

}  // namespace cachekit::l2
