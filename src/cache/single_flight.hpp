// In-process single-flight: concurrent loads of one key run the loader once,
// on the first caller's thread; the others wait (bounded) for the same bytes
// or the same error. A loader that asks for its own key gets
// CACHEKIT_EDEADLOCK instead of waiting for itself.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace cachekit::cache {

class SingleFlight {
public:
    struct Outcome {
        int status = 0;        // CACHEKIT_OK or the loader's error
        std::string value;     // the payload when OK
        std::string message;   // the error message otherwise
    };

    class Flight;

    // Either this caller leads (is_leader, must call finish) or it waited and
    // `outcome` holds the leader's result.
    struct Join {
        std::shared_ptr<Flight> flight;
        bool is_leader = false;
        Outcome outcome;
    };

    // Join the flight for `key`; waits up to `timeout` when another thread
    // leads it. Throws Error(ETIMEOUT) on timeout, Error(EDEADLOCK) when this
    // thread already leads the flight.
    Join join(std::string_view key, std::chrono::milliseconds timeout);

    // The leader publishes its outcome and releases the waiters.
    void finish(const std::shared_ptr<Flight> &flight, Outcome outcome);

    size_t in_flight() const;

private:
    static constexpr size_t kShards = 16;
    struct Shard {
        mutable std::mutex mutex;
        std::unordered_map<std::string, std::shared_ptr<Flight>> flights;
    };
    Shard &shard_for(std::string_view key);
    Shard shards_[kShards];
};

class SingleFlight::Flight {
public:
    explicit Flight(std::string key) : key_(std::move(key)) {}
    const std::string &key() const { return key_; }

private:
    friend class SingleFlight;
    std::string key_;
    std::mutex mutex_;
    std::condition_variable done_cv_;
    bool done_ = false;
    Outcome outcome_;
};

}  // namespace cachekit::cache
