#include <cstdint>
#include <string>
#include <string_view>

#include "capi/boundary.hpp"
#include "capi/call_error.hpp"

namespace cachekit::capi {
namespace {
struct LastError {
    int code = 0;
    std::string message;
};
thread_local LastError last_error;
thread_local std::uint64_t generation = 0;
}  // namespace

std::uint64_t last_error_generation() noexcept { return generation; }

std::string_view last_error_message() noexcept { return last_error.message; }

void set_last_error(int code, const char *message) noexcept {
    ++generation;
    last_error.code = code;
    try {
        last_error.message = message ? message : "";
    } catch (...) {
        last_error.message.clear();  // keep the code even if the text cannot be kept
    }
}

void clear_last_error() noexcept {
    last_error.code = 0;
    last_error.message.clear();
}

}  // namespace cachekit::capi

using namespace cachekit;

extern "C" {

CACHEKIT_API const char *cachekit_error_name(int code) noexcept { return status_name(code); }

CACHEKIT_API int cachekit_error_last_code(void) noexcept { return capi::last_error.code; }

CACHEKIT_API const char *cachekit_error_last_message(void) noexcept {
    return capi::last_error.message.c_str();
}

CACHEKIT_API void cachekit_error_clear(void) noexcept { capi::clear_last_error(); }

}  // extern "C"
