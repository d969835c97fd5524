// Stale-while-revalidate bookkeeping: exactly one caller claims the refresh
// of a stale key (no herd); the refresh lands only if its claim is still the
// key's current one (a newer write or an invalidation cancels it). Claims
// lapse after `lease` so a refresh that never reports back is retried. In a
// forked child, the claims taken in the parent have lapsed: whoever held them
// is not in this process (or, the forking thread, may still settle its own
// while nobody claimed the key again).
// A claim may carry what its holder needs when it reports back (a load
// claim: the log ticket it was taken at, its namespace). A cancelled claim
// is kept, marked, until it is settled or replaced, so its holder still
// learns what it held.
// Claims are purged so a key whose holder never reports back (a cancelled
// task that lost its claim, a loader that longjmp'd out, a forked-away
// process) does not keep an entry for the life of the process: a lapsed
// claim once its lease has passed again (a live holder slower than its
// lease still lands, as before, up to twice the lease), a lapsed cancelled
// one at once (it can land nothing). The sweep runs from claim()/take(), at most once per
// lease or per doubling of the table, and from held().
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <new>
#include <string>
#include <string_view>
#include <unordered_map>

#include <sys/types.h>

namespace cachekit::cache {

class RefreshClaims {
public:
    using Clock = std::chrono::steady_clock;

    // `tag` is or'ed into every id, so the claims of two sets never collide.
    explicit RefreshClaims(uint64_t tag = 0) : tag_(tag) {}

    // What a claim was taken with.
    struct Held {
        bool known = false;    // still in the set (current or cancelled)
        bool current = false;  // not cancelled, not replaced
        uint64_t ticket = 0;
        std::string ns;
    };

    // A claim id (> 0) when this caller should refresh, 0 when another holds it.
    uint64_t claim(std::string_view key, std::chrono::milliseconds lease);
    // A claim that replaces any other on `key`: for a single-flight leader,
    // the only live loader of its key in this process, so an older claim
    // can only be a load that never came back (a loader that longjmp'd out)
    // or one a timed-out waiter gave up on; the newer load is the one that lands.
    uint64_t take(std::string_view key, std::chrono::milliseconds lease, uint64_t ticket = 0,
                  std::string_view ns = {});
    // True if `claim` is still current; it is consumed either way. `held`
    // (when given and the claim is still known, current or cancelled) gets
    // what it was taken with.
    bool settle(std::string_view key, uint64_t claim, Held *held = nullptr);
    // What `claim` was taken with, if it is still known; not consumed.
    bool find(std::string_view key, uint64_t claim, Held *held);
    // A write or invalidation of `key` cancels any claim on it.
    void cancel(std::string_view key);
    void cancel_all();
    // How many claims are still held (current or cancelled), after a purge.
    size_t held();

    // fork(): called by the owning Cache's fork hooks (util/fork_hooks.hpp).
    void fork_prepare() noexcept { mutex_.lock(); }
    void fork_parent() noexcept { mutex_.unlock(); }
    void fork_child() noexcept { new (&mutex_) std::mutex; }

private:
    struct Claim {
        uint64_t id;
        Clock::time_point expires;
        pid_t pid;  // the process it was taken in
        bool cancelled = false;
        uint64_t ticket = 0;
        std::string ns;
        Clock::duration lease{};
    };
    static void report(const Claim &c, Held *held);
    // Drop the claims nobody can report back any more (see the top); under mutex_.
    void purge(Clock::time_point now);
    // Purge when due: a lease after the last purge, or the table doubled.
    void maybe_purge(Clock::time_point now, std::chrono::milliseconds lease);
    static constexpr size_t kMinPurgeSize = 64;
    Clock::time_point next_purge_{};
    size_t purge_at_size_ = kMinPurgeSize;
    std::mutex mutex_;
    std::unordered_map<std::string, Claim> claims_;
    const uint64_t tag_;
    uint64_t next_id_ = 1;
};

}  // namespace cachekit::cache
