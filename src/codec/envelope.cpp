#include "codec/envelope.hpp"

#include <cstring>
#include <string>

#include <lz4.h>

#include "codec/hashing.hpp"
#include "codec/msgpack_bounds.hpp"
#include "codec/msgpack_cursor.hpp"
#include "codec/msgpack_writer.hpp"
#include "codec/utf8.hpp"
#include "util/buffer.hpp"
#include "util/error.hpp"

namespace cachekit::envelope {
namespace {

size_t bin_header_size(size_t n) { return n < 256 ? 2 : n < 65536 ? 3 : 5; }

void write_bin_header(char *p, size_t n) {
    auto *u = reinterpret_cast<uint8_t *>(p);
    if (n < 256) {
        u[0] = 0xc4;
        u[1] = uint8_t(n);
    } else if (n < 65536) {
        u[0] = 0xc5;
        u[1] = uint8_t(n >> 8);
        u[2] = uint8_t(n);
    } else {
        u[0] = 0xc6;
        for (int i = 0; i < 4; ++i) u[1 + i] = uint8_t(n >> (24 - 8 * i));
    }
}

[[noreturn]] void malformed(const std::string &why) {
    fail(CACHEKIT_EDESERIALIZE, "not a ByteStorage envelope: " + why);
}

uint64_t read_byte_uint(msgpack::Cursor &in, const char *what) {
    msgpack::Header h = in.next();
    if (h.kind != msgpack::Kind::Uint || h.u > 255) malformed(std::string(what) + " must hold integers 0..255");
    return h.u;
}

}  // namespace

void wrap(const void *data, size_t len, std::string_view format, cachekit_buf *out) {
    if (len > kMaxSize) fail(CACHEKIT_ETOOBIG, "payload of " + std::to_string(len) + " bytes is over the 512 MiB limit");
    if (data == nullptr && len != 0) fail(CACHEKIT_EINVAL, "data is NULL");
    const int bound = LZ4_compressBound(int(len));
    // Compress straight into the output after a guessed bin header; move the
    // block only when the real header is shorter than the guess.
    const size_t guess = bin_header_size(size_t(bound));
    char *base = buf_resize(out, 1 + guess + size_t(bound));
    int clen = LZ4_compress_default(static_cast<const char *>(data), base + 1 + guess, int(len), bound);
    if (clen <= 0) fail(CACHEKIT_EINTERNAL, "LZ4 compression failed");
    if (uint64_t(clen) > kMaxSize) fail(CACHEKIT_ETOOBIG, "compressed block is over the 512 MiB limit");
    const size_t hsize = bin_header_size(size_t(clen));
    if (hsize != guess) std::memmove(base + 1 + hsize, base + 1 + guess, size_t(clen));
    base[0] = char(0x94);
    write_bin_header(base + 1, size_t(clen));
    buf_resize(out, 1 + hsize + size_t(clen));

    msgpack::Writer w(out);
    uint64_t sum = xxh3_64(data, len);
    w.array(8);
    for (int i = 7; i >= 0; --i) w.uint((sum >> (8 * i)) & 0xff);
    w.uint(len);
    w.str(format);
    if (out->size > kMaxSize) fail(CACHEKIT_ETOOBIG, "envelope is over the 512 MiB limit");
}

void unwrap(const uint8_t *env, size_t len, cachekit_buf *out, cachekit_buf *format, uint64_t max_original_size) {
    // 1. size of the whole envelope
    if (len > kMaxSize) fail(CACHEKIT_ETOOBIG, "envelope of " + std::to_string(len) + " bytes is over the 512 MiB limit");
    // 2. bounded decode of [compressed, checksum, original_size, format]
    try {
        msgpack::check_document(env, len);
    } catch (const Error &e) {
        malformed(std::string(status_name(e.code())) + ": " + e.what());
    }
    msgpack::Cursor in(env, len);
    msgpack::Header root = in.next();
    if (root.kind != msgpack::Kind::Array || root.length != 4) malformed("expected an array of 4 elements");

    std::string_view compressed;
    std::string legacy;  // the legacy form spells each byte as an integer
    msgpack::Header ch = in.next();
    if (ch.kind == msgpack::Kind::Bin) {
        compressed = in.body(ch);
    } else if (ch.kind == msgpack::Kind::Array) {
        legacy.resize(size_t(ch.length));
        for (uint64_t i = 0; i < ch.length; ++i) legacy[i] = char(read_byte_uint(in, "compressed_data"));
        compressed = legacy;
    } else {
        malformed("compressed_data must be bin or an array of integers");
    }

    msgpack::Header sh = in.next();
    if (sh.kind != msgpack::Kind::Array || sh.length != 8) malformed("checksum must be an array of 8 integers");
    uint64_t expected_sum = 0;
    for (int i = 0; i < 8; ++i) expected_sum = expected_sum << 8 | read_byte_uint(in, "checksum");

    msgpack::Header oh = in.next();
    if (oh.kind != msgpack::Kind::Uint || oh.u > UINT32_MAX) malformed("original_size must be an unsigned integer that fits in 32 bits");
    const uint64_t original_size = oh.u;

    msgpack::Header fh = in.next();
    if (fh.kind != msgpack::Kind::Str) malformed("format must be a string");
    std::string_view fmt = in.body(fh);
    if (!utf8_valid(fmt)) malformed("format is not valid UTF-8");

    // 3. sizes
    if (compressed.size() > kMaxSize) fail(CACHEKIT_ETOOBIG, "compressed block is over the 512 MiB limit");
    if (original_size > kMaxSize) fail(CACHEKIT_ETOOBIG, "original_size " + std::to_string(original_size) + " is over the 512 MiB limit");
    if (original_size > max_original_size)
        fail(CACHEKIT_ETOOBIG, "original_size " + std::to_string(original_size) + " is over the reader's limit of " +
                                   std::to_string(max_original_size) + " bytes");
    // 4. and 5. decompression bombs, in 64-bit arithmetic
    if (compressed.empty()) fail(CACHEKIT_EBOMB, "empty compressed block");
    if (original_size > kMaxRatio * uint64_t(compressed.size()))
        fail(CACHEKIT_EBOMB, "original_size " + std::to_string(original_size) + " is more than 1000x the " +
                                 std::to_string(compressed.size()) + "-byte compressed block");
    // 6. decompress into at most original_size bytes
    char *dst = buf_resize(out, size_t(original_size));
    int n = LZ4_decompress_safe(compressed.data(), dst, int(compressed.size()), int(original_size));
    if (n < 0) {
        buf_resize(out, 0);
        fail(CACHEKIT_EDECOMPRESS, "the LZ4 block is malformed or decodes past original_size");
    }
    // 7. checksum of what was decoded
    if (xxh3_64(dst, size_t(n)) != expected_sum) {
        buf_resize(out, 0);
        fail(CACHEKIT_ECHECKSUM, "xxh3-64 of the decoded payload does not match the envelope's checksum");
    }
    // 8. size
    if (uint64_t(n) != original_size) {
        buf_resize(out, 0);
        fail(CACHEKIT_ESIZE, "decoded " + std::to_string(n) + " bytes, envelope says " + std::to_string(original_size));
    }
    if (format) buf_assign(format, fmt);
}

bool looks_like_envelope(const uint8_t *data, size_t len) {
    return len >= 2 && data[0] == 0x94 &&
           (data[1] == 0xc4 || data[1] == 0xc5 || data[1] == 0xc6 || data[1] == 0xdc || data[1] == 0xdd ||
            (data[1] & 0xf0) == 0x90);
}

}  // namespace cachekit::envelope
