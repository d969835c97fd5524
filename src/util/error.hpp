// The one exception type of the C++ core: a pinned status code plus a message.
// Thrown inside the library, caught and turned into a status at the C boundary.
#pragma once

#include <stdexcept>
#include <string>

#include "cachekit/cachekit.h"

namespace cachekit {

class Error : public std::runtime_error {
public:
    Error(int code, const std::string &message) : std::runtime_error(message), code_(code) {}
    int code() const noexcept { return code_; }

private:
    int code_;
};

[[noreturn]] void fail(int code, const std::string &message);

// The stable name of a status code, as cachekit_error_name reports it.
const char *status_name(int code) noexcept;

}  // namespace cachekit
