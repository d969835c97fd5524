// Sequential reading of a MessagePack document that scan_document has
// already accepted, so lengths are known to fit in the input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "codec/msgpack_header.hpp"
#include "util/error.hpp"

namespace cachekit::msgpack {

class Cursor {
public:
    Cursor(const uint8_t *data, size_t len) : p_(data), end_(data + len) {}

    const uint8_t *position() const { return p_; }
    size_t remaining() const { return size_t(end_ - p_); }

    Header next() {
        Header h;
        if (read_header(p_, remaining(), h) != HeaderStatus::Ok)
            fail(CACHEKIT_EDESERIALIZE, "malformed MessagePack header");
        p_ += h.size;
        return h;
    }

    // The body of a str/bin/ext header just read.
    std::string_view body(const Header &h) {
        if (h.length > remaining()) fail(CACHEKIT_ETRUNCATED, "body runs past the end of the input");
        std::string_view v(reinterpret_cast<const char *>(p_), size_t(h.length));
        p_ += h.length;
        return v;
    }

    // Skip one whole item (iteratively, depth already bounded by the scan).
    void skip() { skip_items(1); }

    // Skip the children of a container header just read.
    void skip_rest(const Header &h) {
        if (h.kind == Kind::Array) skip_items(h.length);
        if (h.kind == Kind::Map) skip_items(h.length * 2);
    }

    void skip_items(uint64_t count) {
        uint64_t pending = count;
        while (pending > 0) {
            Header h = next();
            --pending;
            if (has_body(h.kind)) body(h);
            if (h.kind == Kind::Array) pending += h.length;
            if (h.kind == Kind::Map) pending += h.length * 2;
        }
    }

private:
    const uint8_t *p_;
    const uint8_t *end_;
};

}  // namespace cachekit::msgpack
