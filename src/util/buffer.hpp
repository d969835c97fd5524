// Helpers over cachekit_buf, the caller-owned output buffer of the C API.
// Internal layers write straight into it so results are not copied twice.
#pragma once

#include <cstddef>
#include <cstring>
#include <string_view>

#include "cachekit/cachekit.h"

namespace cachekit {

// Make room for `size` bytes (plus a NUL), set buf->size = size and return the
// data pointer. Existing bytes up to min(old size, size) are kept. Throws
// std::bad_alloc.
char *buf_resize(cachekit_buf *buf, size_t size);

// Grow the buffer by `extra` bytes and return a pointer to the new tail.
char *buf_grow(cachekit_buf *buf, size_t extra);

inline void buf_assign(cachekit_buf *buf, const void *data, size_t size) {
    char *dst = buf_resize(buf, size);
    if (size) std::memcpy(dst, data, size);
}

inline void buf_assign(cachekit_buf *buf, std::string_view text) {
    buf_assign(buf, text.data(), text.size());
}

inline void buf_append(cachekit_buf *buf, const void *data, size_t size) {
    if (size == 0) return;
    std::memcpy(buf_grow(buf, size), data, size);
}

void buf_release(cachekit_buf *buf) noexcept;

inline std::string_view buf_view(const cachekit_buf &buf) {
    return std::string_view(buf.ptr ? buf.ptr : "", buf.size);
}

// An owning cachekit_buf for C++ callers.
class Buffer {
public:
    Buffer() = default;
    Buffer(const Buffer &) = delete;
    Buffer &operator=(const Buffer &) = delete;
    Buffer(Buffer &&other) noexcept : buf_(other.buf_) { other.buf_ = CACHEKIT_BUF_INIT; }
    Buffer &operator=(Buffer &&other) noexcept {
        if (this != &other) {
            buf_release(&buf_);
            buf_ = other.buf_;
            other.buf_ = CACHEKIT_BUF_INIT;
        }
        return *this;
    }
    ~Buffer() { buf_release(&buf_); }

    cachekit_buf *get() noexcept { return &buf_; }
    const char *data() const noexcept { return buf_.ptr ? buf_.ptr : ""; }
    size_t size() const noexcept { return buf_.size; }
    std::string_view view() const noexcept { return buf_view(buf_); }

private:
    cachekit_buf buf_ = CACHEKIT_BUF_INIT;
};

}  // namespace cachekit
