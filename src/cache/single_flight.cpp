#include "cache/single_flight.hpp"

#include <algorithm>
#include <functional>
#include <iterator>
#include <new>

#include "util/error.hpp"

namespace cachekit::cache {
namespace {
// The flights this thread leads (a loader may start other loads), each with
// where its leader's call entered the library. Stacks grow down on every
// target we build for: a frame at a lower address is deeper.
struct Led {
    std::shared_ptr<SingleFlight::Flight> flight;
    SingleFlight::EntryMark entry;
};
thread_local std::vector<Led> led_by_this_thread;
// Set before the thread first touches led_by_this_thread: the fork child
// handler reads that list only then (a first touch registers its destructor,
// which allocates).
thread_local bool has_led = false;
thread_local SingleFlight::EntryMark current_entry;
thread_local std::uint64_t canary_counter;

std::uint64_t canary_word(std::uint64_t seed, size_t i) { return seed ^ (0x9e3779b97f4a7c15ULL * (i + 1)); }

// The canary lies in stack memory that newer frames may reuse (and that ASan
// poisons as their red zones): read it as raw memory.
__attribute__((no_sanitize("address"))) bool canary_intact(const SingleFlight::Canary &c, std::uint64_t seed) {
    for (size_t i = 0; i < std::size(c.words); ++i)
        if (c.words[i] != canary_word(seed, i)) return false;
    return true;
}

// A live leader's entry frame lies above every frame its loader reaches, and
// its canary is intact. A call entering at or above that frame, or finding
// the canary overwritten, proves the leader's frames were jumped over.
bool leader_gone(const SingleFlight::EntryMark &led, const SingleFlight::EntryMark &now) {
    if (led.frame <= now.frame) return true;
    return led.canary != nullptr && !canary_intact(*led.canary, led.seed);
}

constexpr const char *kLeaderVanished =
    "the loader of this key left without returning (a longjmp or foreign unwinding out of the callback); "
    "the load was abandoned";
}  // namespace

SingleFlight::SingleFlight() { fork_hooks::join(this, fork_hooks::Locks::Many); }

SingleFlight::~SingleFlight() { fork_hooks::leave(this); }

void SingleFlight::before_fork() noexcept {
    for (Shard &s : shards_) s.mutex.lock();
}

void SingleFlight::after_fork_parent() noexcept {
    for (Shard &s : shards_) s.mutex.unlock();
}

// Only the forking thread exists here. The flights it leads stay live: they
// move to this process, with a fresh mutex and condition variable (a parent
// thread may have been waiting on them; its wait record would block the
// finish's broadcast). Every other flight keeps the parent's pid, so join()
// treats it as gone and its key's next caller leads. Those flights are not
// freed, nor erased here (that would free map nodes in a fork handler): the
// vanished threads' references keep them alive, and they must never be
// destroyed, since destroying a condition variable that records a waiter
// waits for it forever (glibc). The map entries are replaced by join(); each
// leaks one Flight, only as many as there were loads in flight at the fork.
void SingleFlight::after_fork_child() noexcept {
    for (Shard &s : shards_) new (&s.mutex) std::mutex;  // taken in before_fork (not at all under TSan)
    if (!has_led) return;
    const pid_t me = fork_hooks::pid();
    for (const Led &l : led_by_this_thread) {
        Flight &f = *l.flight;
        if (f.owner_ != this) continue;
        f.leader_pid_ = me;
        new (&f.mutex_) std::mutex;
        new (&f.done_cv_) std::condition_variable;
    }
}

SingleFlight::Shard &SingleFlight::shard_for(std::string_view key) {
    return shards_[std::hash<std::string_view>{}(key) % kShards];
}

SingleFlight::EntryScope::EntryScope(std::uintptr_t frame, Canary &canary) : saved_(current_entry) {
    const std::uint64_t seed = 0x5ca1ab1e0ddba11ULL * ++canary_counter;
    for (size_t i = 0; i < std::size(canary.words); ++i) canary.words[i] = canary_word(seed, i);
    current_entry = EntryMark{frame, &canary, seed};
}

SingleFlight::EntryScope::~EntryScope() { current_entry = saved_; }

void SingleFlight::finish_dead_flights(const EntryMark &now) {
    std::vector<std::shared_ptr<Flight>> dead;
    for (const Led &l : led_by_this_thread)
        if (l.flight->owner_ == this && leader_gone(l.entry, now)) dead.push_back(l.flight);
    for (const auto &f : dead) finish(f, {CACHEKIT_EUSER, {}, kLeaderVanished});
}

void SingleFlight::forget(const std::shared_ptr<Flight> &flight) {
    Shard &shard = shard_for(flight->key());
    std::lock_guard lock(shard.mutex);
    auto it = shard.flights.find(flight->key());
    if (it != shard.flights.end() && it->second == flight) shard.flights.erase(it);
}

__attribute__((noinline)) SingleFlight::Join SingleFlight::join(std::string_view key,
                                                                std::chrono::milliseconds timeout) {
    EntryMark entry = current_entry;
    const auto own_frame = reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
    // No mark (a C++ caller), or a mark left behind by a call that was jumped
    // out of (it lies at or below this frame): this join's frame stands in.
    if (entry.frame <= own_frame) entry = EntryMark{own_frame, nullptr, 0};
    if (!led_by_this_thread.empty()) finish_dead_flights(entry);
    Shard &shard = shard_for(key);
    std::shared_ptr<Flight> flight;
    {
        std::lock_guard lock(shard.mutex);
        auto it = shard.flights.find(std::string(key));
        // A flight led in the process this one was forked from has no leader
        // here (after_fork_child): this caller takes the key over.
        if (it == shard.flights.end() || it->second->leader_pid_ != fork_hooks::pid()) {
            flight = std::make_shared<Flight>(std::string(key), this);
            if (it == shard.flights.end())
                shard.flights.emplace(flight->key(), flight);
            else
                it->second = flight;  // the old one stays with its vanished owners
            has_led = true;
            led_by_this_thread.push_back({flight, entry});
            return Join{flight, true, {}};
        }
        flight = it->second;
    }
    for (const Led &l : led_by_this_thread)
        if (l.flight == flight)
            fail(CACHEKIT_EDEADLOCK, "a loader asked for its own key: the value it is computing cannot be waited for");
    std::unique_lock lock(flight->mutex_);
    if (!flight->done_cv_.wait_for(lock, timeout, [&] { return flight->done_; })) {
        lock.unlock();
        forget(flight);  // a leader that stalls (or vanished on another thread) no longer blocks later callers
        fail(CACHEKIT_ETIMEOUT, "waited " + std::to_string(timeout.count()) + " ms for another caller's load of this key");
    }
    return Join{flight, false, flight->outcome_};
}

void SingleFlight::finish(const std::shared_ptr<Flight> &flight, Outcome outcome) {
    auto &led = led_by_this_thread;
    led.erase(std::remove_if(led.begin(), led.end(), [&](const Led &l) { return l.flight == flight; }), led.end());
    forget(flight);
    {
        std::lock_guard lock(flight->mutex_);
        flight->outcome_ = std::move(outcome);
        flight->done_ = true;
    }
    flight->done_cv_.notify_all();
}

size_t SingleFlight::in_flight() const {
    const pid_t me = fork_hooks::pid();
    size_t n = 0;
    for (const Shard &s : shards_) {
        std::lock_guard lock(s.mutex);
        for (const auto &entry : s.flights) n += entry.second->leader_pid_ == me;
    }
    return n;
}

}  // namespace cachekit::cache
