// MessagePack output in shortest forms, through msgpack-cxx's packer, into a
// cachekit_buf (appending).
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

#include <msgpack/pack.hpp>

#include "util/buffer.hpp"
#include "util/error.hpp"

namespace cachekit::msgpack {

class Writer {
public:
    explicit Writer(cachekit_buf *out) : stream_{out}, packer_(stream_) {}

    void nil() { packer_.pack_nil(); }
    void boolean(bool v) { v ? packer_.pack_true() : packer_.pack_false(); }
    void uint(uint64_t v) { packer_.pack_uint64(v); }
    void sint(int64_t v) { packer_.pack_int64(v); }  // non-negative values use the uint family
    // Always float64 (0xcb): msgpack-cxx's pack_double writes integral
    // doubles as ints, which would change cache keys.
    void float64(double v) {
        uint64_t bits;
        std::memcpy(&bits, &v, sizeof bits);
        char b[9];
        b[0] = char(0xcb);
        for (int i = 0; i < 8; ++i) b[1 + i] = char(bits >> (56 - 8 * i));
        raw(b, sizeof b);
    }
    void str(std::string_view s) {
        packer_.pack_str(length32(s.size()));
        packer_.pack_str_body(s.data(), uint32_t(s.size()));
    }
    void bin(const void *data, size_t size) {
        packer_.pack_bin(length32(size));
        packer_.pack_bin_body(static_cast<const char *>(data), uint32_t(size));
    }
    void array(uint64_t count) { packer_.pack_array(length32(count)); }
    void map(uint64_t count) { packer_.pack_map(length32(count)); }
    void raw(const void *data, size_t size) { buf_append(stream_.buf, data, size); }

private:
    struct Stream {
        cachekit_buf *buf;
        void write(const char *data, size_t size) { buf_append(buf, data, size); }
    };
    static uint32_t length32(uint64_t n) {
        if (n > UINT32_MAX) fail(CACHEKIT_ETOOBIG, "a MessagePack length past 2^32-1");
        return uint32_t(n);
    }
    Stream stream_;
    ::msgpack::packer<Stream> packer_;
};

}  // namespace cachekit::msgpack
