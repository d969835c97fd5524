// A fault of one key, not of the backend: a directory planted under one
// entry's name, an entry held locked by another process past the short lock
// wait, a foreign lock file, a cache too full for this one write. The call
// fails (its code says how: CACHEKIT_EBUSY, CACHEKIT_EBACKEND, ...), but the
// backend itself works, so the resilience layer never feeds it to the
// circuit breaker: under fail-open a read with a key fault is a miss and a
// write is skipped (both counted); fail-closed callers get the error.
#pragma once

#include <string>

#include "util/error.hpp"

namespace cachekit::l2 {

class KeyFault : public Error {
public:
    using Error::Error;
};

[[noreturn]] inline void fail_key(int code, const std::string &message) { throw KeyFault(code, message); }

}  // namespace cachekit::l2
