// In-process single-flight: concurrent loads of one key run the loader once,
// on the first caller's thread; the others wait (bounded) for the same bytes
// or the same error. A loader that asks for its own key gets
// CACHEKIT_EDEADLOCK instead of waiting for itself.
//
// A flight is never left wedged, however its leader leaves:
//  - returning or throwing: the caller finishes the flight (Cache::get_or_load);
//  - a longjmp out of the loader (no destructor runs): each flight records
//    where its leader's call entered the library (an EntryMark: a frame and
//    canary words stored in it). When that thread joins again at or above
//    (shallower than) that frame, or deeper but with the canary overwritten,
//    the old leader's frames are gone: its flights are finished with
//    CACHEKIT_EUSER and the key starts afresh;
//  - a waiter that times out abandons the flight (it no longer blocks later
//    callers; a late finish by a live leader is still harmless);
//  - fork(): a child has only the forking thread. Flights the parent's other
//    threads led are forgotten there (each flight records the process of its
//    leader; the atfork child handler moves the forking thread's own flights
//    to the child), so the child's first caller of such a key leads a load
//    of its own at once instead of waiting out the timeout.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include <sys/types.h>

#include "util/fork_hooks.hpp"

namespace cachekit::cache {

class SingleFlight final : private fork_hooks::Participant {
public:
    struct Outcome {
        int status = 0;        // CACHEKIT_OK or the loader's error
        std::string value;     // the payload when OK
        std::string message;   // the error message otherwise
    };

    class Flight;

    // Words a C API entry keeps in its frame while it runs. A leader is
    // taken for live only while every word is intact: frames that reuse the
    // memory after a longjmp overwrite some of them.
    struct Canary {
        volatile std::uint64_t words[8];
    };
    // Where the current call entered the library: the entry function's frame
    // and its canary. Set by the C API's loader shim (EntryScope); a join
    // without one uses its own frame.
    struct EntryMark {
        std::uintptr_t frame = 0;
        const Canary *canary = nullptr;
        std::uint64_t seed = 0;
    };
    class EntryScope {
    public:
        // Fills `canary` (a local of the entry function whose frame is
        // `frame`) and makes it the thread's current entry.
        EntryScope(std::uintptr_t frame, Canary &canary);
        ~EntryScope();
        EntryScope(const EntryScope &) = delete;
        EntryScope &operator=(const EntryScope &) = delete;

    private:
        EntryMark saved_;
    };

    // Either this caller leads (is_leader, must call finish) or it waited and
    // `outcome` holds the leader's result.
    struct Join {
        std::shared_ptr<Flight> flight;
        bool is_leader = false;
        Outcome outcome;
    };

    // Join the flight for `key`; waits up to `timeout` when another thread
    // leads it. Throws Error(ETIMEOUT) on timeout (the flight is then
    // abandoned: later callers start a new one), Error(EDEADLOCK) when this
    // thread leads the flight from a frame that is still live.
    Join join(std::string_view key, std::chrono::milliseconds timeout);

    // The leader publishes its outcome and releases the waiters.
    void finish(const std::shared_ptr<Flight> &flight, Outcome outcome);

    size_t in_flight() const;

    SingleFlight();
    ~SingleFlight();
    SingleFlight(const SingleFlight &) = delete;
    SingleFlight &operator=(const SingleFlight &) = delete;

private:
    void before_fork() noexcept override;
    void after_fork_parent() noexcept override;
    void after_fork_child() noexcept override;

    static constexpr size_t kShards = 16;
    struct Shard {
        mutable std::mutex mutex;
        std::unordered_map<std::string, std::shared_ptr<Flight>> flights;
    };
    Shard &shard_for(std::string_view key);
    // Finish (CACHEKIT_EUSER) the flights this thread led from calls whose
    // frames are gone, as seen from the call entered at `now`.
    void finish_dead_flights(const EntryMark &now);
    // Drop `flight` from its shard if it is still the key's current flight.
    void forget(const std::shared_ptr<Flight> &flight);
    Shard shards_[kShards];
};

class SingleFlight::Flight {
public:
    Flight(std::string key, SingleFlight *owner)
        : key_(std::move(key)), owner_(owner), leader_pid_(fork_hooks::pid()) {}
    const std::string &key() const { return key_; }

private:
    friend class SingleFlight;
    std::string key_;
    SingleFlight *owner_;
    // The process whose thread leads the flight (under the shard's mutex);
    // any other value in a forked child: the leader does not exist here.
    pid_t leader_pid_;
    std::mutex mutex_;
    std::condition_variable done_cv_;
    bool done_ = false;
    Outcome outcome_;
};

}  // namespace cachekit::cache
