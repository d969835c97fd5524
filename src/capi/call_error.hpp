// The per-call error form: every `_ex` function runs its plain twin on the
// same thread and copies that call's outcome into the caller's
// cachekit_error, so a binding never has to read thread-local state in a
// second call (a goroutine may change threads between two cgo calls).
#pragma once

#include <cstdint>
#include <string_view>

#include "cachekit/cachekit.h"

namespace cachekit::capi {

// Counts set_last_error calls on this thread: a change across a call means
// the thread-local message belongs to that call.
std::uint64_t last_error_generation() noexcept;

// The message of this thread's last failure.
std::string_view last_error_message() noexcept;

// Whether `err` (not NULL) is large enough for this library to write;
// otherwise records CACHEKIT_EINVAL as the thread's last error.
bool call_error_usable(const cachekit_error *err) noexcept;

// Write the outcome `code` of the call that began at generation `before`.
void report_call(cachekit_error *err, int code, std::uint64_t before) noexcept;

template <class Call>
int with_call_error(cachekit_error *err, Call &&call) noexcept {
    if (err != nullptr && !call_error_usable(err)) return CACHEKIT_EINVAL;
    const std::uint64_t before = last_error_generation();
    const int code = call();
    if (err != nullptr) report_call(err, code, before);
    return code;
}

// Defines `name##_ex(params..., cachekit_error *err)` over `name(args)`. The
// header declares each one, so a parameter list that drifts from the
// declaration fails to compile (two C functions cannot share a name).
#define CACHEKIT_DEFINE_EX(name, params, args)                                                   \
    CACHEKIT_API int name##_ex params noexcept {                                                 \
        return ::cachekit::capi::with_call_error(err, [&]() noexcept { return name args; }); \
    }

}  // namespace cachekit::capi
