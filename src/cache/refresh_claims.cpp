#include "cache/refresh_claims.hpp"

#include <algorithm>
#include <iterator>

#include "util/fork_hooks.hpp"

namespace cachekit::cache {

void RefreshClaims::purge(Clock::time_point now) {
    for (auto it = claims_.begin(); it != claims_.end();) {
        const Claim &c = it->second;
        // A claim of the parent's in a forked child lapses as any other: the
        // forking thread may still settle its own.
        const bool lapsed = c.expires <= now;
        const bool gone = lapsed && (c.cancelled || now - c.expires >= c.lease);
        it = gone ? claims_.erase(it) : std::next(it);
    }
}

void RefreshClaims::maybe_purge(Clock::time_point now, std::chrono::milliseconds lease) {
    if (claims_.empty() || (now < next_purge_ && claims_.size() < purge_at_size_)) return;
    purge(now);
    next_purge_ = now + lease;
    purge_at_size_ = std::max(kMinPurgeSize, 2 * claims_.size());
}

uint64_t RefreshClaims::claim(std::string_view key, std::chrono::milliseconds lease) {
    std::lock_guard lock(mutex_);
    const auto now = Clock::now();
    const pid_t me = fork_hooks::pid();
    maybe_purge(now, lease);
    auto [it, inserted] = claims_.try_emplace(std::string(key), Claim{0, now, me});
    if (!inserted && !it->second.cancelled && it->second.expires > now && it->second.pid == me) return 0;
    it->second = Claim{tag_ | next_id_++, now + lease, me, false, 0, {}, lease};
    return it->second.id;
}

uint64_t RefreshClaims::take(std::string_view key, std::chrono::milliseconds lease, uint64_t ticket,
                             std::string_view ns) {
    std::lock_guard lock(mutex_);
    const auto now = Clock::now();
    const pid_t me = fork_hooks::pid();
    maybe_purge(now, lease);
    Claim &c = claims_[std::string(key)];
    c = Claim{tag_ | next_id_++, now + lease, me, false, ticket, std::string(ns), lease};
    return c.id;
}

size_t RefreshClaims::held() {
    std::lock_guard lock(mutex_);
    purge(Clock::now());
    return claims_.size();
}

void RefreshClaims::report(const Claim &c, Held *held) {
    if (!held) return;
    held->known = true;
    held->current = !c.cancelled;
    held->ticket = c.ticket;
    held->ns = c.ns;
}

bool RefreshClaims::settle(std::string_view key, uint64_t claim, Held *held) {
    std::lock_guard lock(mutex_);
    auto it = claims_.find(std::string(key));
    if (it == claims_.end() || it->second.id != claim) return false;
    const bool current = !it->second.cancelled;
    report(it->second, held);
    claims_.erase(it);
    return current;
}

bool RefreshClaims::find(std::string_view key, uint64_t claim, Held *held) {
    std::lock_guard lock(mutex_);
    auto it = claims_.find(std::string(key));
    if (it == claims_.end() || it->second.id != claim) return false;
    report(it->second, held);
    return true;
}

void RefreshClaims::cancel(std::string_view key) {
    std::lock_guard lock(mutex_);
    if (claims_.empty()) return;
    auto it = claims_.find(std::string(key));
    if (it != claims_.end()) it->second.cancelled = true;
}

void RefreshClaims::cancel_all() {
    std::lock_guard lock(mutex_);
    claims_.clear();
}

}  // namespace cachekit::cache
