// The resilience layer over any Backend: circuit breaker, backpressure,
// per-call deadline, counters and the degradation policy.
//
// Per call (health excepted): the breaker is asked first (open -> fail fast
// with CACHEKIT_ECIRCUIT_OPEN, counted rejected_open); then a backpressure
// slot (none within backpressure_wait -> CACHEKIT_EBUSY, counted
// rejected_busy, not a breaker failure); then the backend runs with the
// deadline min(caller's, now + command_timeout) - except clear, a SCAN of
// many round trips, which gets the caller's deadline (each round trip is
// still bounded by command_timeout in the backend; clear_deadline() is a
// default for callers without one). CACHEKIT_EBACKEND and
// CACHEKIT_ETIMEOUT are failures (counted, fed to the breaker: a timeout
// exactly like an error); any other
// outcome of the backend (a value, a miss, CACHEKIT_EINVAL, CACHEKIT_ETOOBIG,
// ...) is not. A KeyFault (l2/key_fault.hpp: one key's trouble, whatever
// its code) is never a failure either. With fail_open, a failed or rejected read (get, exists, ttl,
// get_many) is a miss (degraded_reads) and a failed or rejected write (set,
// set_many, del, add, touch, delete_many) is skipped (skipped_writes; del
// reports "deleted", add "not stored", touch "no such key", delete_many 0),
// and so is a read or write with a KeyFault; clear, lock, unlock, incr and other errors
// that are not failures always propagate. Health
// bypasses the breaker and backpressure and is never degraded. Counters are
// atomics: exact under concurrency. Failures and recoveries of the calls
// that reach the backend (health included) feed a HealthMonitor: the
// backend_down / breaker_open / backend_recovered log events.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "l2/backend.hpp"
#include "l2/resilience/backpressure.hpp"
#include "l2/resilience/circuit_breaker.hpp"
#include "l2/resilience/health_monitor.hpp"

namespace cachekit::l2 {

struct ResilienceConfig {
    BreakerConfig breaker;
    bool breaker_enabled = true;
    bool fail_open = true;
    uint32_t max_concurrency = 0;  // 0 = no backpressure bound
    std::chrono::milliseconds backpressure_wait{100};
    std::chrono::milliseconds command_timeout{250};
    // How log lines and cachekit_health name the backend (backend_label of its
    // URL); empty = no log lines. (A cluster's nodes are named under
    // ClusterConfig::label, not through this.)
    std::string label;
};

struct ResilienceStats {
    int breaker_state = CACHEKIT_BREAKER_CLOSED;
    uint64_t calls = 0;
    uint64_t failures = 0;
    uint64_t timeouts = 0;
    uint64_t rejected_open = 0;
    uint64_t rejected_busy = 0;
    uint64_t degraded_reads = 0;
    uint64_t skipped_writes = 0;
    uint64_t breaker_opened = 0;
    double latency_ms_sum = 0;
    uint64_t latency_count = 0;
};

class ResilientBackend final : public Backend {
public:
    ResilientBackend(std::unique_ptr<Backend> inner, ResilienceConfig config);

    const char *kind() const noexcept override { return inner_->kind(); }

    bool get(std::string_view key, cachekit_buf *out, Deadline deadline) override;
    bool get_with_ttl(std::string_view key, cachekit_buf *out, Ttl *remaining, Deadline deadline) override;
    void set(std::string_view key, std::string_view value, Ttl ttl, Deadline deadline) override;
    bool del(std::string_view key, Deadline deadline) override;
    bool exists(std::string_view key, Deadline deadline) override;
    std::optional<Ttl> ttl(std::string_view key, Deadline deadline) override;
    bool expire(std::string_view key, std::chrono::milliseconds ttl, Deadline deadline) override;
    // Never degraded (a made-up count would be wrong): an Admin call.
    std::optional<int64_t> incr(std::string_view key, int64_t delta, Deadline deadline) override;
    // Writes; degraded: not stored / not touched / none deleted.
    bool add(std::string_view key, std::string_view value, Ttl ttl, Deadline deadline) override;
    bool touch(std::string_view key, Ttl ttl, Deadline deadline) override;
    uint64_t delete_many(const std::vector<std::string_view> &keys, Deadline deadline) override;
    void get_many(const std::vector<std::string_view> &keys, cachekit_buf *outs, std::vector<bool> &found,
                  Deadline deadline) override;
    void set_many(const std::vector<KeyValue> &entries, Ttl ttl, Deadline deadline) override;
    uint64_t clear(const KeySelection &which, Deadline deadline) override;
    std::optional<std::string> lock(std::string_view name, std::chrono::milliseconds hold,
                                    Deadline deadline) override;
    bool unlock(std::string_view name, std::string_view token, Deadline deadline) override;
    Health health(Deadline deadline) override;
    bool keeps_registry() const noexcept override { return inner_->keeps_registry(); }
    // One write call (the value's SET decides its outcome; a failed registry write is not a failure).
    bool set_registered(std::string_view key, std::string_view value, Ttl ttl, std::string_view registry,
                        std::string_view member, Deadline deadline) override;
    // A sweep, like clear: the caller's deadline, each round trip bounded by command_timeout.
    std::vector<std::string> drain_registry(std::string_view registry, std::string_view key_prefix,
                                            Deadline deadline) override;
    // Not a call: the feed keeps its own connection, outside breaker and backpressure.
    std::unique_ptr<InvalidationFeed> watch(const WatchRequest &request) override { return inner_->watch(request); }
    std::string metrics_text() const override { return inner_->metrics_text(); }

    // A deadline of command_timeout from now (for callers without their own).
    Deadline default_deadline() const { return Deadline::after(config_.command_timeout); }
    // The whole of a clear: a minute (each of its round trips ends within command_timeout).
    static Deadline clear_deadline() { return Deadline::after(std::chrono::seconds(60)); }

    ResilienceStats stats() const;
    // What the calls so far have seen: down since when, the last error. A
    // cluster that answers is down while one of its nodes is (that node's).
    HealthSnapshot health_snapshot() const;
    const std::string &label() const noexcept { return monitor_.label(); }
    CircuitBreaker::State breaker_state() const;
    Backend &inner() { return *inner_; }
    const ResilienceConfig &config() const { return config_; }

private:
    enum class Op { Read, Write, Admin, Sweep };  // Sweep: clear, bounded by the caller's deadline only
    template <class Body, class Degraded>
    auto run(Op op, Deadline deadline, Body &&body, Degraded &&degraded) -> decltype(body(deadline));
    template <class Degraded>
    auto degrade_or_throw(Op op, int code, const char *message, Degraded &&degraded) -> decltype(degraded());

    std::unique_ptr<Backend> inner_;
    ResilienceConfig config_;
    CircuitBreaker breaker_;
    Backpressure backpressure_;
    HealthMonitor monitor_;

    std::atomic<uint64_t> calls_{0}, failures_{0}, timeouts_{0}, rejected_open_{0}, rejected_busy_{0},
        degraded_reads_{0}, skipped_writes_{0}, latency_ns_{0}, latency_count_{0};
};

}  // namespace cachekit::l2
