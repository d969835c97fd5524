#include "cache/single_flight.hpp"

#include <algorithm>
#include <functional>

#include "util/error.hpp"

namespace cachekit::cache {
namespace {
// The flights this thread leads right now (a loader may start other loads).
thread_local std::vector<const SingleFlight::Flight *> led_by_this_thread;
}  // namespace

SingleFlight::Shard &SingleFlight::shard_for(std::string_view key) {
    return shards_[std::hash<std::string_view>{}(key) % kShards];
}

SingleFlight::Join SingleFlight::join(std::string_view key, std::chrono::milliseconds timeout) {
    Shard &shard = shard_for(key);
    std::shared_ptr<Flight> flight;
    {
        std::lock_guard lock(shard.mutex);
        auto it = shard.flights.find(std::string(key));
        if (it == shard.flights.end()) {
            flight = std::make_shared<Flight>(std::string(key));
            shard.flights.emplace(flight->key(), flight);
            led_by_this_thread.push_back(flight.get());
            return Join{flight, true, {}};
        }
        flight = it->second;
    }
    if (std::find(led_by_this_thread.begin(), led_by_this_thread.end(), flight.get()) != led_by_this_thread.end())
        fail(CACHEKIT_EDEADLOCK, "a loader asked for its own key: the value it is computing cannot be waited for");
    std::unique_lock lock(flight->mutex_);
    if (!flight->done_cv_.wait_for(lock, timeout, [&] { return flight->done_; }))
        fail(CACHEKIT_ETIMEOUT, "waited " + std::to_string(timeout.count()) + " ms for another caller's load of this key");
    return Join{flight, false, flight->outcome_};
}

void SingleFlight::finish(const std::shared_ptr<Flight> &flight, Outcome outcome) {
    auto &led = led_by_this_thread;
    led.erase(std::remove(led.begin(), led.end(), flight.get()), led.end());
    Shard &shard = shard_for(flight->key());
    {
        std::lock_guard lock(shard.mutex);
        auto it = shard.flights.find(flight->key());
        if (it != shard.flights.end() && it->second == flight) shard.flights.erase(it);
    }
    {
        std::lock_guard lock(flight->mutex_);
        flight->outcome_ = std::move(outcome);
        flight->done_ = true;
    }
    flight->done_cv_.notify_all();
}

size_t SingleFlight::in_flight() const {
    size_t n = 0;
    for (const Shard &s : shards_) {
        std::lock_guard lock(s.mutex);
        n += s.flights.size();
    }
    return n;
}

}  // namespace cachekit::cache
