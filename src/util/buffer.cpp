#include "util/buffer.hpp"

#include <cstdlib>
#include <new>

namespace cachekit {

char *buf_resize(cachekit_buf *buf, size_t size) {
    if (size == SIZE_MAX) throw std::bad_alloc();
    if (buf->ptr == nullptr || buf->capacity < size + 1) {
        size_t want = size + 1;
        // Geometric growth for appends; exact size for one-shot outputs.
        if (buf->ptr != nullptr && want < buf->capacity + buf->capacity / 2)
            want = buf->capacity + buf->capacity / 2;
        void *grown = std::realloc(buf->ptr, want);
        if (grown == nullptr) throw std::bad_alloc();
        buf->ptr = static_cast<char *>(grown);
        buf->capacity = want;
    }
    buf->size = size;
    buf->ptr[size] = '\0';
    return buf->ptr;
}

char *buf_grow(cachekit_buf *buf, size_t extra) {
    size_t old = buf->ptr ? buf->size : 0;
    if (extra > SIZE_MAX - old - 1) throw std::bad_alloc();
    return buf_resize(buf, old + extra) + old;
}

void buf_release(cachekit_buf *buf) noexcept {
    if (buf == nullptr) return;
    std::free(buf->ptr);
    *buf = CACHEKIT_BUF_INIT;
}

}  // namespace cachekit
