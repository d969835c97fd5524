// Increment of a value stored as decimal digits, for the backends that do it
// themselves (memory, file) the way Redis INCRBY does it on the server.
#pragma once

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

#include "util/error.hpp"

namespace cachekit::l2 {

// `stored` + `delta`, the digits to store back written to `digits`. The value
// must be what Redis's string2ll takes: an optional '-', then digits with no
// leading zero (or "0" itself), within int64 (else CACHEKIT_EUNSUPPORTED);
// a sum past int64 is CACHEKIT_ETOOBIG.
inline int64_t add_to_stored_integer(std::string_view stored, int64_t delta, std::string &digits) {
    const bool negative = !stored.empty() && stored[0] == '-';
    const std::string_view body = negative ? stored.substr(1) : stored;
    const bool canonical = !body.empty() && body.size() <= 19 && (body[0] != '0' || stored == "0");
    int64_t value = 0;
    const char *end = stored.data() + stored.size();
    auto parsed = canonical ? std::from_chars(stored.data(), end, value) : std::from_chars_result{nullptr, std::errc()};
    if (!canonical || parsed.ec != std::errc() || parsed.ptr != end)
        fail(CACHEKIT_EUNSUPPORTED, "incr: the value is not a decimal 64-bit integer");
    int64_t sum = 0;
    if (__builtin_add_overflow(value, delta, &sum))
        fail(CACHEKIT_ETOOBIG, "incr: the result would not fit in a signed 64-bit integer");
    char out[24];
    auto res = std::to_chars(out, out + sizeof out, static_cast<long long>(sum));
    digits.assign(out, res.ptr);
    return sum;
}

}  // namespace cachekit::l2
