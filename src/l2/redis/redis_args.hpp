// Arguments both Redis backends (single node and cluster) send the same way.
#pragma once

#include <string>

#include "l2/backend.hpp"

namespace cachekit::l2::redis_args {

// The PX milliseconds of `ttl` written into `ms`; its length, or 0 for no
// expiry (nullopt). A TTL that is not positive is CACHEKIT_EINVAL.
size_t px_milliseconds(const Ttl &ttl, char (&ms)[24]);

// A stampede lock's owner token: 16 random bytes as 32 hex digits.
std::string new_lock_token();

}  // namespace cachekit::l2::redis_args
