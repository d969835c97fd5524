// The process-wide log handler (cachekit_set_log_handler) and the gate that
// keeps one source's events from flooding it.
//
// emit() reads the handler with one atomic load and calls it on the calling
// thread; callers hold no library lock then (the handler may call back into
// the library). A registration is never freed (a thread may still be
// reading the previous one), so set_handler leaks one small block per call:
// bindings register once. Nothing here takes a lock, so fork() needs no hook.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>

#include "cachekit/cachekit.h"

namespace cachekit::log {

enum class Event : unsigned { BackendDown, BreakerOpen, BackendRecovered, CoherenceSuspended, CoherenceResumed };
inline constexpr unsigned kEventKinds = 5;

// The stable name the handler gets ("backend_down", ...).
const char *event_name(Event e) noexcept;
// CACHEKIT_LOG_WARNING for trouble, CACHEKIT_LOG_INFO for a return to health.
int event_level(Event e) noexcept;

void set_handler(cachekit_log_handler fn, void *user_data) noexcept;
bool enabled() noexcept;
void emit(Event e, const std::string &message) noexcept;

// At most one line per event kind per kInterval for one source (a backend, a
// coherence feed). A suppressed event is counted and the count is told in
// the next line of that kind. Lock-free: safe from any thread, across fork.
class EventGate {
public:
    static constexpr uint64_t kIntervalNs = 60ULL * 1000 * 1000 * 1000;
    void report(Event e, std::string message) noexcept;

private:
    struct Slot {
        std::atomic<uint64_t> last_ns{0};  // 0: never emitted
        std::atomic<uint64_t> suppressed{0};
    };
    std::array<Slot, kEventKinds> slots_{};
};

// Wall-clock seconds since the epoch, for cachekit_health's timestamps.
double unix_now() noexcept;

}  // namespace cachekit::log
