// Named locks of the file backend: one file "<hash>.lock" per lock name,
// holding "<token> <expiry unix ms>\n". A lock file appears atomically with
// its content (written to a temp file, then link(2), which fails when the
// name exists). A lock past its expiry may be broken by anyone: the breaker
// takes flock(LOCK_EX) on the file, re-reads it, checks the name still refers
// to that inode, and only then unlinks it; unlock does the same with a token
// comparison, so two breakers or a breaker and an unlock never remove a lock
// taken in between. Anything but a regular file under a lock name (a
// symlink, a directory) is never followed or removed: the calls on that lock
// fail with a KeyFault (l2/key_fault.hpp), other locks are unaffected.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "l2/backend.hpp"

namespace cachekit::l2::filelock {

// Take the lock `lock_file` (a name in dirfd) until now_ms + hold. The new
// token, or nullopt when a live lock is held by someone else.
std::optional<std::string> acquire(int dirfd, const std::string &lock_file, std::chrono::milliseconds hold,
                                   int64_t now_ms, std::chrono::milliseconds lock_timeout, Deadline deadline);

// Release the lock if `token` owns it and it has not expired.
bool release(int dirfd, const std::string &lock_file, std::string_view token, int64_t now_ms,
             std::chrono::milliseconds lock_timeout, Deadline deadline);

// Remove the lock file when it expired (or is unreadable garbage). True when
// it is gone (removed here or already absent); false when a live lock holds
// it or its flock is busy past `wait`.
bool break_if_stale(int dirfd, const std::string &lock_file, int64_t now_ms, std::chrono::milliseconds wait);

}  // namespace cachekit::l2::filelock
