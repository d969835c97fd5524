// Server-side L1 coherence: what a backend that can tell a cache about
// changes made by others (Redis: CLIENT TRACKING, pub/sub) offers, and what
// the cache gives it to call back. docs/redis.md, "L1 coherence".
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace cachekit::l2 {

// The backend URL's ?l1_coherence= (Auto: tracking on Redis >= 6, else
// pubsub; Off, the default, starts no feed).
enum class CoherenceMode { Auto, Tracking, Pubsub, Off };

// The mode a URL's l1_coherence=<text> names; false when none.
inline bool coherence_mode_named(std::string_view text, CoherenceMode *mode) {
    if (text == "auto") *mode = CoherenceMode::Auto;
    else if (text == "tracking") *mode = CoherenceMode::Tracking;
    else if (text == "pubsub") *mode = CoherenceMode::Pubsub;
    else if (text == "off") *mode = CoherenceMode::Off;
    else return false;
    return true;
}

// Called from the feed's own thread. Never throws.
class InvalidationHandler {
public:
    virtual ~InvalidationHandler() = default;
    // Storage keys (prefix included) that changed on the server.
    virtual void keys_changed(const std::vector<std::string_view> &keys) noexcept = 0;
    // The reference SDK's events (cachekit-py's channel): one cache key
    // (no storage prefix) changed; every key of namespace `ns` changed.
    virtual void cache_key_changed(std::string_view key) noexcept = 0;
    virtual void namespace_changed(std::string_view ns) noexcept = 0;
    // Everything may have changed (FLUSHALL, or messages may be missed from
    // now on: the feed lost its connection). The cache holds nothing and
    // fills nothing in L1 until live().
    virtual void suspend() noexcept = 0;
    // The feed is subscribed again: every change from now on is reported.
    virtual void live() noexcept = 0;
    // A connection attempt or session ended (the feed retries with backoff).
    virtual void session_ended() noexcept = 0;
};

struct WatchRequest {
    std::vector<std::string> prefixes;  // storage key prefixes; empty: every key
    InvalidationHandler *handler = nullptr;  // outlives the feed
};

// A running feed; destroying it stops its thread and closes its connection.
class InvalidationFeed {
public:
    virtual ~InvalidationFeed() = default;
    virtual const char *mode() const noexcept = 0;  // "tracking" or "pubsub" once decided, else "auto"
    // Announce that this process wrote or invalidated `cache_key` (no storage
    // prefix) on the reference SDK's channel, for its listeners' L1s.
    // Queued, sent by a thread of the feed; never throws; best effort (at
    // most once, as the SDK's own events).
    virtual void announce(std::string_view cache_key) noexcept = 0;
};

}  // namespace cachekit::l2
