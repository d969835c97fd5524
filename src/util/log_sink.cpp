#include "util/log_sink.hpp"

#include <chrono>
#include <new>

namespace cachekit::log {

namespace {

struct Registration {
    cachekit_log_handler fn;
    void *user_data;
};

std::atomic<const Registration *> g_handler{nullptr};

uint64_t monotonic_ns() noexcept {
    return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                        std::chrono::steady_clock::now().time_since_epoch())
                        .count());
}

}  // namespace

const char *event_name(Event e) noexcept {
    switch (e) {
    case Event::BackendDown: return "backend_down";
    case Event::BreakerOpen: return "breaker_open";
    case Event::BackendRecovered: return "backend_recovered";
    case Event::CoherenceSuspended: return "coherence_suspended";
    case Event::CoherenceResumed: return "coherence_resumed";
    }
    return "unknown";
}

int event_level(Event e) noexcept {
    return e == Event::BackendRecovered || e == Event::CoherenceResumed ? CACHEKIT_LOG_INFO : CACHEKIT_LOG_WARNING;
}

void set_handler(cachekit_log_handler fn, void *user_data) noexcept {
    const Registration *next = nullptr;
    if (fn != nullptr) {
        next = new (std::nothrow) Registration{fn, user_data};
        if (next == nullptr) return;  // out of memory: the old handler stays
    }
    g_handler.store(next, std::memory_order_release);  // the old one is leaked on purpose (see the header)
}

bool enabled() noexcept { return g_handler.load(std::memory_order_acquire) != nullptr; }

void emit(Event e, const std::string &message) noexcept {
    const Registration *r = g_handler.load(std::memory_order_acquire);
    if (r != nullptr) r->fn(event_level(e), event_name(e), message.c_str(), r->user_data);
}

void EventGate::report(Event e, std::string message) noexcept {
    if (!enabled()) return;
    Slot &slot = slots_[unsigned(e)];
    const uint64_t now = monotonic_ns() | 1;  // never 0, the "never emitted" mark
    uint64_t last = slot.last_ns.load(std::memory_order_relaxed);
    if ((last != 0 && now - last < kIntervalNs) ||
        !slot.last_ns.compare_exchange_strong(last, now, std::memory_order_relaxed)) {
        slot.suppressed.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    try {
        if (uint64_t more = slot.suppressed.exchange(0, std::memory_order_relaxed); more != 0)
            message += " (" + std::to_string(more) + " more like this not logged in the last minute)";
    } catch (...) {  // the line without its count
    }
    emit(e, message);
}

double unix_now() noexcept {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace cachekit::log
