// The C boundary: every exported function runs its body through guarded(),
// which turns C++ exceptions into pinned status codes plus a thread-local
// message, so no exception ever crosses into C.
#pragma once

#include <new>
#include <string>

#include "util/error.hpp"

namespace cachekit::capi {

void set_last_error(int code, const char *message) noexcept;
void clear_last_error() noexcept;

template <class Body>
int guarded(Body &&body) noexcept {
    try {
        return body();
    } catch (const Error &e) {
        set_last_error(e.code(), e.what());
        return e.code();
    } catch (const std::bad_alloc &) {
        set_last_error(CACHEKIT_ENOMEM, "out of memory");
        return CACHEKIT_ENOMEM;
    } catch (const std::exception &e) {
        set_last_error(CACHEKIT_EINTERNAL, e.what());
        return CACHEKIT_EINTERNAL;
    } catch (...) {
        set_last_error(CACHEKIT_EINTERNAL, "unknown internal error");
        return CACHEKIT_EINTERNAL;
    }
}

// Argument checks shared by the shims.
inline void require(bool ok, const char *message) {
    if (!ok) fail(CACHEKIT_EINVAL, message);
}

inline void require_bytes(const void *data, size_t len, const char *what) {
    if (data == nullptr && len != 0) fail(CACHEKIT_EINVAL, std::string(what) + " is NULL with a non-zero length");
}

}  // namespace cachekit::capi
