// Arguments both Redis backends (single node and cluster) send the same way.
#pragma once

#include <string>
#include <string_view>

#include "l2/backend.hpp"

namespace cachekit::l2::redis_args {

// The PX milliseconds of `ttl` written into `ms`; its length, or 0 for no
// expiry (nullopt). A TTL that is not positive is CACHEKIT_EINVAL.
size_t px_milliseconds(const Ttl &ttl, char (&ms)[24]);

// The increment: INCRBY only on a key that exists (INCRBY alone would create
// it), in one script so it stays one atomic round trip. The new value comes
// back as the stored digits (GET), not INCRBY's reply: inside a script that
// is a Lua number, a double, which would round values past 2^53. Its SHA-1
// as SCRIPT LOAD answers it (checked by the tests).
constexpr std::string_view kIncrScript =
    "if redis.call(\"exists\",KEYS[1]) == 0 then return false end "
    "redis.call(\"incrby\",KEYS[1],ARGV[1]) return redis.call(\"get\",KEYS[1])";
constexpr std::string_view kIncrSha = "4da64b950755988b999777072ce30c22d382261e";

// `delta` as decimal digits into `out`; the length.
size_t decimal(int64_t delta, char (&out)[24]);

// A stampede lock's owner token: 16 random bytes as 32 hex digits.
std::string new_lock_token();

}  // namespace cachekit::l2::redis_args
