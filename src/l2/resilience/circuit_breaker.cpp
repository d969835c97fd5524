#include "l2/resilience/circuit_breaker.hpp"

#include <utility>

#include "util/error.hpp"

namespace cachekit::l2 {

CircuitBreaker::CircuitBreaker(BreakerConfig config) : config_(std::move(config)) {
    if (config_.failure_threshold == 0 || config_.half_open_calls == 0 || config_.success_threshold == 0)
        fail(CACHEKIT_EINVAL, "breaker thresholds must be positive");
    if (config_.recovery.count() < 0) fail(CACHEKIT_EINVAL, "breaker recovery time is negative");
    fork_hooks::join(this);
}

void CircuitBreaker::open_locked(SteadyClock::time_point at) {
    state_ = State::Open;
    ++generation_;
    opened_at_ = at;
    consecutive_failures_ = 0;
    trials_in_flight_ = 0;
    trial_successes_ = 0;
    ++times_opened_;
}

void CircuitBreaker::maybe_half_open_locked(SteadyClock::time_point at) {
    if (state_ == State::Open && at - opened_at_ >= config_.recovery) {
        state_ = State::HalfOpen;
        ++generation_;
        trials_in_flight_ = 0;
        trial_successes_ = 0;
    }
}

CircuitBreaker::Ticket CircuitBreaker::allow() {
    std::lock_guard<std::mutex> g(mu_);
    maybe_half_open_locked(now());
    Ticket t;
    t.generation = generation_;
    switch (state_) {
    case State::Closed:
        t.admitted = true;
        break;
    case State::Open:
        break;
    case State::HalfOpen:
        if (trials_in_flight_ < config_.half_open_calls) {
            ++trials_in_flight_;
            t.admitted = true;
            t.trial = true;
        }
        break;
    }
    return t;
}

void CircuitBreaker::success(const Ticket &t) {
    if (!t.admitted) return;
    std::lock_guard<std::mutex> g(mu_);
    if (t.generation != generation_) return;
    if (state_ == State::Closed) {
        consecutive_failures_ = 0;
    } else if (state_ == State::HalfOpen && t.trial) {
        --trials_in_flight_;
        if (++trial_successes_ >= config_.success_threshold) {
            state_ = State::Closed;
            ++generation_;
            consecutive_failures_ = 0;
            trials_in_flight_ = 0;
            trial_successes_ = 0;
        }
    }
}

bool CircuitBreaker::failure(const Ticket &t) {
    if (!t.admitted) return false;
    std::lock_guard<std::mutex> g(mu_);
    if (t.generation != generation_) return false;
    if (state_ == State::Closed) {
        if (++consecutive_failures_ < config_.failure_threshold) return false;
    } else if (state_ != State::HalfOpen || !t.trial) {
        return false;
    }
    open_locked(now());
    return true;
}

void CircuitBreaker::neutral(const Ticket &t) {
    if (!t.admitted || !t.trial) return;
    std::lock_guard<std::mutex> g(mu_);
    if (t.generation == generation_ && state_ == State::HalfOpen && trials_in_flight_ > 0) --trials_in_flight_;
}

CircuitBreaker::State CircuitBreaker::state() const {
    std::lock_guard<std::mutex> g(mu_);
    if (state_ == State::Open && now() - opened_at_ >= config_.recovery) return State::HalfOpen;
    return state_;
}

uint64_t CircuitBreaker::times_opened() const {
    std::lock_guard<std::mutex> g(mu_);
    return times_opened_;
}

}  // namespace cachekit::l2
