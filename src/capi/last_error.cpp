#include <string>

#include "capi/boundary.hpp"

namespace cachekit::capi {
namespace {
struct LastError {
    int code = 0;
    std::string message;
};
thread_local LastError last_error;
}  // namespace

void set_last_error(int code, const char *message) noexcept {
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
