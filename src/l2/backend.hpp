// The one small interface every L2 backend implements (Redis, file, memory).
// Calls throw cachekit::Error: CACHEKIT_EBACKEND for a backend failure,
// CACHEKIT_ETIMEOUT when the deadline passes, CACHEKIT_EINVAL for bad input.
// The resilience wrapper (breaker, backpressure, degradation) is layered on
// top (resilient_backend.hpp), so backends stay plain.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cachekit/cachekit.h"
#include "l2/invalidation_feed.hpp"
#include "util/error.hpp"

namespace cachekit::l2 {

using SteadyClock = std::chrono::steady_clock;

// When a call must be finished by.
struct Deadline {
    SteadyClock::time_point at;

    static Deadline after(std::chrono::milliseconds budget) { return {SteadyClock::now() + budget}; }
    bool passed() const { return SteadyClock::now() >= at; }
    std::chrono::milliseconds remaining() const {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(at - SteadyClock::now());
        return left.count() > 0 ? left : std::chrono::milliseconds(0);
    }
};

// A time to live: nullopt means no expiry.
using Ttl = std::optional<std::chrono::milliseconds>;

// How long a key registry lives after its last write: the reference SDK's 7 days.
constexpr std::chrono::seconds kRegistryTtl{604800};

struct KeyValue {
    std::string_view key;
    std::string_view value;
};

// Which keys clear() removes: those starting with `prefix` whose remainder
// matches `glob` and that `accept` takes. `glob` is a Redis SCAN MATCH
// pattern for the remainder (special characters escaped by whoever builds
// it; "*": any), only a narrowing for the server: `accept` (given the whole
// key, prefix included; null: every key under the prefix) decides.
// The file backend stores hashed names: it takes only an empty prefix with
// no `accept` (everything), or one with hashed_names_clear_all set (a
// cache's clear: its directory is its own), and then clears the whole
// directory; anything else is CACHEKIT_EINVAL.
struct KeySelection {
    std::string prefix;
    std::string glob = "*";
    std::function<bool(std::string_view key)> accept;
    bool hashed_names_clear_all = false;

    KeySelection() = default;
    // Every key under a prefix ("": every key).
    KeySelection(std::string p) : prefix(std::move(p)) {}  // NOLINT: implicit on purpose
    KeySelection(std::string_view p) : prefix(p) {}        // NOLINT
    KeySelection(const char *p) : prefix(p) {}             // NOLINT
    KeySelection(std::string p, std::string g, std::function<bool(std::string_view)> a)
        : prefix(std::move(p)), glob(std::move(g)), accept(std::move(a)) {}

    bool takes(std::string_view key) const {
        return key.substr(0, prefix.size()) == prefix && (!accept || accept(key));
    }
};

// `text` with the SCAN MATCH specials (* ? [ ] \) escaped.
inline std::string glob_escape(std::string_view text) {
    std::string out;
    out.reserve(text.size() + 8);
    for (char c : text) {
        if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') out.push_back('\\');
        out.push_back(c);
    }
    return out;
}

// What a user can see of a backend's failures (the health state a
// resilience/health_monitor.hpp has observed): here, with the interface, as
// a backend of several servers reports it for its parts (down_part).
struct HealthSnapshot {
    bool down = false;
    uint64_t consecutive_failures = 0;
    double since = 0;          // wall-clock seconds when the state began; 0: never changed
    double last_error_at = 0;  // 0: no failure seen
    std::string last_error;
};

struct Health {
    bool ok = false;
    double latency_ms = 0;
    std::string detail;
    // Not ok, but only some parts failed (a cluster with a node down): the
    // parts report their own failures (down_part), the whole is reachable.
    bool partial = false;
};

class Backend {
public:
    virtual ~Backend() = default;

    virtual const char *kind() const noexcept = 0;

    // Copy the value into `out`; false when the key does not exist.
    virtual bool get(std::string_view key, cachekit_buf *out, Deadline deadline) = 0;
    virtual void set(std::string_view key, std::string_view value, Ttl ttl, Deadline deadline) = 0;
    // True when the key existed.
    virtual bool del(std::string_view key, Deadline deadline) = 0;
    virtual bool exists(std::string_view key, Deadline deadline) = 0;
    // Remaining TTL: nullopt = key missing; Ttl{nullopt} = no expiry.
    virtual std::optional<Ttl> ttl(std::string_view key, Deadline deadline) = 0;

    // found[i] says whether outs[i] holds keys[i]'s value. One round trip where the backend allows.
    virtual void get_many(const std::vector<std::string_view> &keys, cachekit_buf *outs, std::vector<bool> &found,
                          Deadline deadline) = 0;
    virtual void set_many(const std::vector<KeyValue> &entries, Ttl ttl, Deadline deadline) = 0;

    // Delete the keys `which` selects (see KeySelection); returns the count.
    // Redis SCANs in batches and checks each key before its UNLINK, without
    // holding anything but the one connection it uses.
    virtual uint64_t clear(const KeySelection &which, Deadline deadline) = 0;

    // A lock held for `hold`: the owner's token, or nullopt when someone else holds it.
    virtual std::optional<std::string> lock(std::string_view name, std::chrono::milliseconds hold, Deadline deadline) = 0;
    // True when `token` still owned the lock and it is now released.
    virtual bool unlock(std::string_view name, std::string_view token, Deadline deadline) = 0;

    virtual Health health(Deadline deadline) = 0;

    // The key registry (docs/redis.md "Key registry"): a server-side set that
    // lists the keys written for one function, so that any process can delete
    // them all. Only a backend that keeps one (Redis) overrides these.
    virtual bool keeps_registry() const noexcept { return false; }
    // set, plus `member` added to the set `registry` whose lifetime is then
    // renewed to kRegistryTtl, in the same round trip where the backend
    // allows. The value's write fails as set's does; the registry's alone
    // never throws: false when it failed (or the backend keeps none).
    virtual bool set_registered(std::string_view key, std::string_view value, Ttl ttl, std::string_view registry,
                                std::string_view member, Deadline deadline) {
        (void)registry;
        (void)member;
        set(key, value, ttl, deadline);
        return false;
    }
    // Delete the key `key_prefix` + member of every member of `registry`,
    // each member leaving the set only after its key's UNLINK, in batches,
    // until the set is empty (it then no longer exists). Returns the members
    // drained. A backend without a registry drains nothing.
    virtual std::vector<std::string> drain_registry(std::string_view registry, std::string_view key_prefix,
                                                    Deadline deadline) {
        (void)registry;
        (void)key_prefix;
        (void)deadline;
        return {};
    }

    // Give an existing entry `ttl` to live from now, leaving its value alone
    // (the reference SDK's refresh_ttl: Redis PEXPIRE, the file backend's
    // expiry header rewritten in place). True when the key existed. A backend
    // that cannot leaves the entry as it is and says false.
    virtual bool expire(std::string_view key, std::chrono::milliseconds ttl, Deadline deadline) {
        (void)key;
        (void)ttl;
        (void)deadline;
        return false;
    }

    // Add `delta` to the integer stored as decimal digits under `key`,
    // atomically, keeping its TTL: the new value, or nullopt when the key does
    // not exist. A value that is not such an integer is CACHEKIT_EUNSUPPORTED,
    // a result past 64 bits CACHEKIT_ETOOBIG (the value left alone).
    virtual std::optional<int64_t> incr(std::string_view key, int64_t delta, Deadline deadline) {
        (void)key;
        (void)delta;
        (void)deadline;
        fail_unimplemented("incr");
    }

    // set, only when the key does not exist: true when stored.
    virtual bool add(std::string_view key, std::string_view value, Ttl ttl, Deadline deadline) {
        (void)key;
        (void)value;
        (void)ttl;
        (void)deadline;
        fail_unimplemented("add");
    }

    // Give an existing entry `ttl` from now (nullopt: no expiry), its value
    // left alone. True when the key existed.
    virtual bool touch(std::string_view key, Ttl ttl, Deadline deadline) {
        if (ttl) return expire(key, *ttl, deadline);
        fail_unimplemented("touch");
    }

    // Delete every key of `keys`, one round trip where the backend allows:
    // how many existed.
    virtual uint64_t delete_many(const std::vector<std::string_view> &keys, Deadline deadline) {
        uint64_t n = 0;
        for (std::string_view key : keys) n += del(key, deadline) ? 1 : 0;
        return n;
    }

    // get plus the entry's remaining TTL (nullopt inside = no expiry). The
    // default asks twice; a backend that can answer in one round trip overrides it.
    virtual bool get_with_ttl(std::string_view key, cachekit_buf *out, Ttl *remaining, Deadline deadline) {
        if (!get(key, out, deadline)) return false;
        std::optional<Ttl> t = ttl(key, deadline);
        // Gone between the two calls: give the value no L1 lifetime at all.
        *remaining = t ? *t : Ttl{std::chrono::milliseconds(0)};
        return true;
    }

    // Start reporting changes to the request's keys made by anyone (L1
    // coherence); nullptr when the backend cannot or its URL says off.
    virtual std::unique_ptr<InvalidationFeed> watch(const WatchRequest &) { return nullptr; }

    // The backend's own Prometheus series (HELP/TYPE lines included),
    // appended to the cache's metrics text; empty when it keeps none.
    virtual std::string metrics_text() const { return {}; }

    // A backend of several servers (a cluster) that log their own health:
    // the health of its parts that are down, merged into one snapshot (down,
    // the last error naming the part); nullopt when none is down.
    virtual std::optional<HealthSnapshot> down_part() const { return std::nullopt; }

protected:
    // A backend that lacks an operation (a test double): CACHEKIT_EINTERNAL, never a crash.
    [[noreturn]] void fail_unimplemented(const char *op) const {
        throw Error(CACHEKIT_EINTERNAL, std::string(kind()) + " backend: " + op + " is not implemented");
    }
};

}  // namespace cachekit::l2
