#include "l2/resilience/resilient_backend.hpp"

#include <optional>
#include <type_traits>
#include <utility>

#include "l2/key_fault.hpp"
#include "util/error.hpp"

namespace cachekit::l2 {

using std::chrono::milliseconds;

ResilientBackend::ResilientBackend(std::unique_ptr<Backend> inner, ResilienceConfig config)
    : inner_(std::move(inner)),
      config_(std::move(config)),
      breaker_(config_.breaker),
      backpressure_(config_.max_concurrency, config_.backpressure_wait),
      monitor_(config_.label) {
    if (!inner_) fail(CACHEKIT_EINVAL, "no backend to wrap");
    if (config_.command_timeout.count() <= 0) fail(CACHEKIT_EINVAL, "command_timeout must be positive");
}

template <class Degraded>
auto ResilientBackend::degrade_or_throw(Op op, int code, const char *message, Degraded &&degraded)
    -> decltype(degraded()) {
    if (config_.fail_open && op == Op::Read) {
        degraded_reads_.fetch_add(1, std::memory_order_relaxed);
        return degraded();
    }
    if (config_.fail_open && op == Op::Write) {
        skipped_writes_.fetch_add(1, std::memory_order_relaxed);
        return degraded();
    }
    fail(code, message);
}

template <class Body, class Degraded>
auto ResilientBackend::run(Op op, Deadline deadline, Body &&body, Degraded &&degraded) -> decltype(body(deadline)) {
    CircuitBreaker::Ticket ticket;
    if (config_.breaker_enabled) {
        ticket = breaker_.allow();
        if (!ticket.admitted) {
            rejected_open_.fetch_add(1, std::memory_order_relaxed);
            return degrade_or_throw(op, CACHEKIT_ECIRCUIT_OPEN,
                                    "circuit breaker open: backend calls fail fast until it recovers", degraded);
        }
    } else {
        ticket.admitted = true;
    }
    if (!backpressure_.acquire()) {
        if (config_.breaker_enabled) breaker_.neutral(ticket);
        rejected_busy_.fetch_add(1, std::memory_order_relaxed);
        return degrade_or_throw(op, CACHEKIT_EBUSY, "backpressure: too many backend calls in flight", degraded);
    }
    Backpressure::Slot slot(&backpressure_);
    calls_.fetch_add(1, std::memory_order_relaxed);
    Deadline bounded = deadline;
    if (op != Op::Sweep) {
        const Deadline command = Deadline::after(config_.command_timeout);
        if (command.at < bounded.at) bounded = command;
    }
    auto t0 = SteadyClock::now();
    std::string message;
    int code = 0;
    bool key_fault = false;
    try {
        if constexpr (std::is_void_v<decltype(body(bounded))>) {
            body(bounded);
            latency_ns_.fetch_add(uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(SteadyClock::now() - t0).count()),
                                  std::memory_order_relaxed);
            latency_count_.fetch_add(1, std::memory_order_relaxed);
            if (config_.breaker_enabled) breaker_.success(ticket);
            monitor_.succeeded();
            return;
        } else {
            auto result = body(bounded);
            latency_ns_.fetch_add(uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(SteadyClock::now() - t0).count()),
                                  std::memory_order_relaxed);
            latency_count_.fetch_add(1, std::memory_order_relaxed);
            if (config_.breaker_enabled) breaker_.success(ticket);
            monitor_.succeeded();
            return result;
        }
    } catch (const KeyFault &) {
        // One key's trouble, not the backend's: never fed to the breaker.
        if (config_.breaker_enabled) breaker_.neutral(ticket);
        if (!config_.fail_open || op == Op::Admin) throw;
        key_fault = true;
    } catch (const Error &e) {
        if (e.code() != CACHEKIT_EBACKEND && e.code() != CACHEKIT_ETIMEOUT) {
            if (config_.breaker_enabled) breaker_.neutral(ticket);
            throw;
        }
        failures_.fetch_add(1, std::memory_order_relaxed);
        if (e.code() == CACHEKIT_ETIMEOUT) timeouts_.fetch_add(1, std::memory_order_relaxed);
        const bool opened = config_.breaker_enabled && breaker_.failure(ticket);
        code = e.code();
        message = e.what();
        // No lock is held here: the handler may call back into the library.
        monitor_.failed(message);
        if (opened) monitor_.breaker_opened(config_.breaker.failure_threshold, config_.breaker.recovery);
    } catch (...) {
        if (config_.breaker_enabled) breaker_.neutral(ticket);
        throw;
    }
    if (key_fault) return degrade_or_throw(op, CACHEKIT_OK, "", degraded);  // fail-open Read/Write: degrades
    return degrade_or_throw(op, code, message.c_str(), degraded);
}

bool ResilientBackend::get(std::string_view key, cachekit_buf *out, Deadline deadline) {
    return run(
        Op::Read, deadline, [&](Deadline d) { return inner_->get(key, out, d); }, [] { return false; });
}

// One call (one breaker ticket, one round trip where the backend allows), not get + ttl.
bool ResilientBackend::get_with_ttl(std::string_view key, cachekit_buf *out, Ttl *remaining, Deadline deadline) {
    return run(
        Op::Read, deadline, [&](Deadline d) { return inner_->get_with_ttl(key, out, remaining, d); },
        [] { return false; });
}

void ResilientBackend::set(std::string_view key, std::string_view value, Ttl ttl, Deadline deadline) {
    run(
        Op::Write, deadline, [&](Deadline d) { inner_->set(key, value, ttl, d); }, [] {});
}

bool ResilientBackend::del(std::string_view key, Deadline deadline) {
    return run(
        Op::Write, deadline, [&](Deadline d) { return inner_->del(key, d); }, [] { return true; });
}

bool ResilientBackend::exists(std::string_view key, Deadline deadline) {
    return run(
        Op::Read, deadline, [&](Deadline d) { return inner_->exists(key, d); }, [] { return false; });
}

std::optional<Ttl> ResilientBackend::ttl(std::string_view key, Deadline deadline) {
    return run(
        Op::Read, deadline, [&](Deadline d) { return inner_->ttl(key, d); },
        [] { return std::optional<Ttl>(); });
}

// A write (it changes the entry); degraded: left as it was.
bool ResilientBackend::expire(std::string_view key, milliseconds ttl, Deadline deadline) {
    return run(
        Op::Write, deadline, [&](Deadline d) { return inner_->expire(key, ttl, d); }, [] { return false; });
}

std::optional<int64_t> ResilientBackend::incr(std::string_view key, int64_t delta, Deadline deadline) {
    return run(
        Op::Admin, deadline, [&](Deadline d) { return inner_->incr(key, delta, d); },
        [] { return std::optional<int64_t>(); });
}

bool ResilientBackend::add(std::string_view key, std::string_view value, Ttl ttl, Deadline deadline) {
    return run(
        Op::Write, deadline, [&](Deadline d) { return inner_->add(key, value, ttl, d); }, [] { return false; });
}

bool ResilientBackend::touch(std::string_view key, Ttl ttl, Deadline deadline) {
    return run(
        Op::Write, deadline, [&](Deadline d) { return inner_->touch(key, ttl, d); }, [] { return false; });
}

uint64_t ResilientBackend::delete_many(const std::vector<std::string_view> &keys, Deadline deadline) {
    return run(
        Op::Write, deadline, [&](Deadline d) { return inner_->delete_many(keys, d); }, [] { return uint64_t(0); });
}

void ResilientBackend::get_many(const std::vector<std::string_view> &keys, cachekit_buf *outs,
                                std::vector<bool> &found, Deadline deadline) {
    run(
        Op::Read, deadline, [&](Deadline d) { inner_->get_many(keys, outs, found, d); },
        [&] { found.assign(keys.size(), false); });
}

void ResilientBackend::set_many(const std::vector<KeyValue> &entries, Ttl ttl, Deadline deadline) {
    run(
        Op::Write, deadline, [&](Deadline d) { inner_->set_many(entries, ttl, d); }, [] {});
}

uint64_t ResilientBackend::clear(const KeySelection &which, Deadline deadline) {
    return run(
        Op::Sweep, deadline, [&](Deadline d) { return inner_->clear(which, d); }, [] { return uint64_t(0); });
}

bool ResilientBackend::set_registered(std::string_view key, std::string_view value, Ttl ttl,
                                      std::string_view registry, std::string_view member, Deadline deadline) {
    return run(
        Op::Write, deadline, [&](Deadline d) { return inner_->set_registered(key, value, ttl, registry, member, d); },
        [] { return false; });
}

std::vector<std::string> ResilientBackend::drain_registry(std::string_view registry, std::string_view key_prefix,
                                                          Deadline deadline) {
    return run(
        Op::Sweep, deadline, [&](Deadline d) { return inner_->drain_registry(registry, key_prefix, d); },
        [] { return std::vector<std::string>(); });
}

std::optional<std::string> ResilientBackend::lock(std::string_view name, milliseconds hold, Deadline deadline) {
    return run(
        Op::Admin, deadline, [&](Deadline d) { return inner_->lock(name, hold, d); },
        [] { return std::optional<std::string>(); });
}

bool ResilientBackend::unlock(std::string_view name, std::string_view token, Deadline deadline) {
    return run(
        Op::Admin, deadline, [&](Deadline d) { return inner_->unlock(name, token, d); }, [] { return false; });
}

Health ResilientBackend::health(Deadline deadline) {
    calls_.fetch_add(1, std::memory_order_relaxed);
    Deadline bounded = Deadline::after(config_.command_timeout);
    if (deadline.at < bounded.at) bounded = deadline;
    Health h = inner_->health(bounded);
    if (h.ok) {
        latency_ns_.fetch_add(uint64_t(h.latency_ms * 1e6), std::memory_order_relaxed);
        latency_count_.fetch_add(1, std::memory_order_relaxed);
        monitor_.succeeded();
    } else {
        failures_.fetch_add(1, std::memory_order_relaxed);
        // A part down (a cluster's node) logs itself; the whole answered.
        if (h.partial)
            monitor_.succeeded();
        else
            monitor_.failed(h.detail);
    }
    return h;
}

HealthSnapshot ResilientBackend::health_snapshot() const {
    HealthSnapshot s = monitor_.snapshot();
    if (!s.down)
        if (std::optional<HealthSnapshot> part = inner_->down_part()) s = std::move(*part);
    return s;
}

CircuitBreaker::State ResilientBackend::breaker_state() const {
    return config_.breaker_enabled ? breaker_.state() : CircuitBreaker::State::Closed;
}

ResilienceStats ResilientBackend::stats() const {
    ResilienceStats s;
    s.breaker_state = int(breaker_state());
    s.calls = calls_.load(std::memory_order_relaxed);
    s.failures = failures_.load(std::memory_order_relaxed);
    s.timeouts = timeouts_.load(std::memory_order_relaxed);
    s.rejected_open = rejected_open_.load(std::memory_order_relaxed);
    s.rejected_busy = rejected_busy_.load(std::memory_order_relaxed);
    s.degraded_reads = degraded_reads_.load(std::memory_order_relaxed);
    s.skipped_writes = skipped_writes_.load(std::memory_order_relaxed);
    s.breaker_opened = config_.breaker_enabled ? breaker_.times_opened() : 0;
    s.latency_ms_sum = double(latency_ns_.load(std::memory_order_relaxed)) / 1e6;
    s.latency_count = latency_count_.load(std::memory_order_relaxed);
    return s;
}

}  // namespace cachekit::l2
