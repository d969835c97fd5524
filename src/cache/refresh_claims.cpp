#include "cache/refresh_claims.hpp"

#include "util/fork_hooks.hpp"

namespace cachekit::cache {

uint64_t RefreshClaims::claim(std::string_view key, std::chrono::milliseconds lease) {
    std::lock_guard lock(mutex_);
    const auto now = Clock::now();
    const pid_t me = fork_hooks::pid();
    auto [it, inserted] = claims_.try_emplace(std::string(key), Claim{0, now, me});
    if (!inserted && !it->second.cancelled && it->second.expires > now && it->second.pid == me) return 0;
    it->second = Claim{tag_ | next_id_++, now + lease, me};
    return it->second.id;
}

uint64_t RefreshClaims::take(std::string_view key, std::chrono::milliseconds lease, uint64_t ticket,
                             std::string_view ns) {
    std::lock_guard lock(mutex_);
    Claim &c = claims_[std::string(key)];
    c = Claim{tag_ | next_id_++, Clock::now() + lease, fork_hooks::pid(), false, ticket, std::string(ns)};
    return c.id;
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
