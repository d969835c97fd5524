// What a user can see of a backend's failures: the health state one
// ResilientBackend (or one Redis Cluster node) has observed (ok / down, the last error and when) and the
// log events of its transitions (util/log_sink.hpp): backend_down on the
// first failure after a success (or the first ever), breaker_open when its
// breaker opens, backend_recovered on the first success after a failure.
// Each kind goes through a per-backend EventGate, so a flapping backend logs
// at most one line per kind a minute.
//
// The healthy path costs one relaxed atomic load; transitions take a mutex,
// released before any log line is emitted. Fork-safe (a fork hook).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

#include "l2/backend.hpp"  // HealthSnapshot
#include "util/fork_hooks.hpp"
#include "util/log_sink.hpp"

namespace cachekit::l2 {

class HealthMonitor final : private fork_hooks::Participant {
public:
    // An empty label stays silent (a backend opened without a URL to name it).
    explicit HealthMonitor(std::string label);
    ~HealthMonitor() { fork_hooks::leave(this); }
    HealthMonitor(const HealthMonitor &) = delete;
    HealthMonitor &operator=(const HealthMonitor &) = delete;

    void succeeded() noexcept {
        if (down_.load(std::memory_order_relaxed)) recovered();
    }
    void failed(std::string_view cause) noexcept;
    void breaker_opened(uint32_t threshold, std::chrono::milliseconds recovery) noexcept;

    HealthSnapshot snapshot() const;
    bool down() const noexcept { return down_.load(std::memory_order_relaxed); }
    const std::string &label() const noexcept { return label_; }

private:
    void before_fork() noexcept override { mu_.lock(); }
    void after_fork_parent() noexcept override { mu_.unlock(); }
    void after_fork_child() noexcept override { mu_.unlock(); }
    void recovered() noexcept;

    const std::string label_;
    std::atomic<bool> down_{false};
    mutable std::mutex mu_;
    uint64_t consecutive_failures_ = 0;
    double since_ = 0;
    double last_error_at_ = 0;
    std::string last_error_;
    log::EventGate gate_;
};

}  // namespace cachekit::l2
