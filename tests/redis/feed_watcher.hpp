// The cache's side of an invalidation feed, for tests that watch a backend
// directly (Backend::watch): the gate's state and what was reported.
#pragma once

#include <atomic>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "l2/invalidation_feed.hpp"

namespace cachekit::testing {

struct FeedWatcher final : cachekit::l2::InvalidationHandler {
    std::atomic<bool> is_live{false};
    std::mutex mu;
    std::set<std::string> keys;        // storage keys (tracking)
    std::set<std::string> cache_keys;  // the reference SDK's channel
    void keys_changed(const std::vector<std::string_view> &changed) noexcept override {
        std::lock_guard<std::mutex> lock(mu);
        for (std::string_view k : changed) keys.emplace(k);
    }
    void cache_key_changed(std::string_view key) noexcept override {
        std::lock_guard<std::mutex> lock(mu);
        cache_keys.emplace(key);
    }
    void namespace_changed(std::string_view) noexcept override {}
    void suspend() noexcept override { is_live = false; }
    void live() noexcept override { is_live = true; }
    void session_ended() noexcept override {}
    bool saw(const std::string &key) {
        std::lock_guard<std::mutex> lock(mu);
        return keys.count(key) != 0;
    }
    bool heard(const std::string &cache_key) {
        std::lock_guard<std::mutex> lock(mu);
        return cache_keys.count(cache_key) != 0;
    }
};

}  // namespace cachekit::testing
