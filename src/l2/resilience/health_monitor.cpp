#include "l2/resilience/health_monitor.hpp"

#include <cstdio>
#include <utility>

namespace cachekit::l2 {

namespace {

// The Redis backend starts its messages with its own name ("redis
// 127.0.0.1:6390 db 0: connect failed: ..."); the label names it already.
std::string_view without_backend_name(std::string_view cause) {
    if (cause.substr(0, 6) != "redis ") return cause;
    const size_t colon = cause.find(": ");
    return colon == std::string_view::npos ? cause : cause.substr(colon + 2);
}

}  // namespace

HealthMonitor::HealthMonitor(std::string label) : label_(std::move(label)) { fork_hooks::join(this); }

void HealthMonitor::failed(std::string_view cause) noexcept {
    bool was_down;
    std::string line;
    try {
        const std::string_view shown = without_backend_name(cause);
        const double now = log::unix_now();
        {
            std::lock_guard lock(mu_);
            was_down = down_.exchange(true, std::memory_order_relaxed);
            ++consecutive_failures_;
            last_error_.assign(shown);
            last_error_at_ = now;
            if (!was_down) since_ = now;
        }
        if (was_down || label_.empty() || !log::enabled()) return;
        line = label_ + ": " + std::string(shown);
    } catch (...) {  // no memory for the text: the state is what matters
        return;
    }
    gate_.report(log::Event::BackendDown, std::move(line));
}

void HealthMonitor::breaker_opened(uint32_t threshold, std::chrono::milliseconds recovery) noexcept {
    if (label_.empty() || !log::enabled()) return;
    try {
        std::string last;
        {
            std::lock_guard lock(mu_);
            last = last_error_;
        }
        std::string line = label_ + ": circuit breaker open after " + std::to_string(threshold) +
                           " consecutive failures; calls fail fast for " + std::to_string(recovery.count()) +
                           " ms (last error: " + last + ")";
        gate_.report(log::Event::BreakerOpen, std::move(line));
    } catch (...) {
    }
}

void HealthMonitor::recovered() noexcept {
    uint64_t failures;
    double down_for;
    {
        std::lock_guard lock(mu_);
        if (!down_.exchange(false, std::memory_order_relaxed)) return;  // another thread saw it first
        failures = consecutive_failures_;
        consecutive_failures_ = 0;
        const double now = log::unix_now();
        down_for = now - since_;
        since_ = now;
    }
    if (label_.empty() || !log::enabled()) return;
    try {
        char secs[32];
        std::snprintf(secs, sizeof secs, "%.1f", down_for < 0 ? 0.0 : down_for);
        gate_.report(log::Event::BackendRecovered, label_ + ": answering again after " + std::to_string(failures) +
                                                       " failed calls over " + secs + " s");
    } catch (...) {
    }
}

HealthSnapshot HealthMonitor::snapshot() const {
    std::lock_guard lock(mu_);
    HealthSnapshot s;
    s.down = down_.load(std::memory_order_relaxed);
    s.consecutive_failures = consecutive_failures_;
    s.since = since_;
    s.last_error_at = last_error_at_;
    s.last_error = last_error_;
    return s;
}

}  // namespace cachekit::l2
