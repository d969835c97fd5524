#include "cache/refresh_claims.hpp"

#include "util/fork_hooks.hpp"

namespace cachekit::cache {

uint64_t RefreshClaims::claim(std::string_view key, std::chrono::milliseconds lease) {
    std::lock_guard lock(mutex_);
    const auto now = Clock::now();
    const pid_t me = fork_hooks::pid();
    auto [it, inserted] = claims_.try_emplace(std::string(key), Claim{0, now, me});
    if (!inserted && it->second.expires > now && it->second.pid == me) return 0;
    it->second = Claim{next_id_++, now + lease, me};
    return it->second.id;
}

uint64_t RefreshClaims::take(std::string_view key, std::chrono::milliseconds lease) {
    std::lock_guard lock(mutex_);
    Claim &c = claims_[std::string(key)];
    c = Claim{next_id_++, Clock::now() + lease, fork_hooks::pid()};
    return c.id;
}

bool RefreshClaims::settle(std::string_view key, uint64_t claim) {
    std::lock_guard lock(mutex_);
    auto it = claims_.find(std::string(key));
    if (it == claims_.end() || it->second.id != claim) return false;
    claims_.erase(it);
    return true;
}

void RefreshClaims::cancel(std::string_view key) {
    std::lock_guard lock(mutex_);
    if (!claims_.empty()) claims_.erase(std::string(key));
}

void RefreshClaims::cancel_all() {
    std::lock_guard lock(mutex_);
    claims_.clear();
}

}  // namespace cachekit::cache
