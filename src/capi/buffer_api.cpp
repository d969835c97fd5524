#include <cstdlib>

#include "capi/boundary.hpp"
#include "util/buffer.hpp"

using namespace cachekit;

extern "C" {

CACHEKIT_API void cachekit_buf_dispose(cachekit_buf *buf) noexcept { buf_release(buf); }

CACHEKIT_API int cachekit_buf_reserve(cachekit_buf *buf, size_t capacity) noexcept {
    return capi::guarded([&] {
        capi::require(buf != nullptr, "buf is NULL");
        size_t keep = buf->ptr ? buf->size : 0;
        if (capacity > keep) {
            buf_resize(buf, capacity);
            buf_resize(buf, keep);
        }
        return CACHEKIT_OK;
    });
}

CACHEKIT_API void cachekit_free(void *ptr) noexcept { std::free(ptr); }

CACHEKIT_API const char *cachekit_version_string(void) noexcept { return CACHEKIT_VERSION_STRING; }

CACHEKIT_API unsigned cachekit_version_number(void) noexcept { return CACHEKIT_VERSION_NUMBER; }

}  // extern "C"
