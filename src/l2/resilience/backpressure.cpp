#include "l2/resilience/backpressure.hpp"

#include <new>

namespace cachekit::l2 {

bool Backpressure::acquire() {
    std::unique_lock<std::mutex> lk(mu_);
    if (max_ != 0 && !cv_.wait_for(lk, wait_, [&] { return in_flight_ < max_; })) return false;
    ++in_flight_;
    return true;
}

void Backpressure::release() {
    {
        std::lock_guard<std::mutex> g(mu_);
        --in_flight_;
    }
    cv_.notify_one();
}

void Backpressure::after_fork_child() noexcept {
    in_flight_ = 0;  // the slots were held by the parent's threads
    new (&cv_) std::condition_variable();  // forget their waits (the old one is abandoned, not destroyed)
    mu_.unlock();
}

uint32_t Backpressure::in_flight() const {
    std::lock_guard<std::mutex> g(mu_);
    return in_flight_;
}

}  // namespace cachekit::l2
