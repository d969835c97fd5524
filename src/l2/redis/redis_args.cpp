#include "l2/redis/redis_args.hpp"

#include <sodium.h>

#include <charconv>

#include "codec/crypto.hpp"
#include "util/error.hpp"

namespace cachekit::l2::redis_args {

size_t px_milliseconds(const Ttl &ttl, char (&ms)[24]) {
    if (!ttl) return 0;
    if (ttl->count() <= 0) fail(CACHEKIT_EINVAL, "the TTL must be positive (nullopt for no expiry)");
    auto res = std::to_chars(ms, ms + sizeof ms, static_cast<long long>(ttl->count()));
    return static_cast<size_t>(res.ptr - ms);
}

size_t decimal(int64_t delta, char (&out)[24]) {
    auto res = std::to_chars(out, out + sizeof out, static_cast<long long>(delta));
    return static_cast<size_t>(res.ptr - out);
}

std::string new_lock_token() {
    crypto::ensure_sodium();
    unsigned char raw[16];
    randombytes_buf(raw, sizeof raw);
    char hex[sizeof raw * 2 + 1];
    sodium_bin2hex(hex, sizeof hex, raw, sizeof raw);
    return std::string(hex, sizeof raw * 2);
}

}  // namespace cachekit::l2::redis_args
