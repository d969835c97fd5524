#include "codec/container_v2.hpp"

#include <string>

#include <lz4.h>

#include "codec/envelope.hpp"
#include "codec/msgpack_bounds.hpp"
#include "codec/msgpack_cursor.hpp"
#include "codec/msgpack_writer.hpp"
#include "codec/utf8.hpp"
#include "util/buffer.hpp"
#include "util/error.hpp"

namespace cachekit::container_v2 {
namespace {

// Every str of an already-checked document is valid UTF-8, as the
// reference reader decodes them (DeserializationFailed otherwise).
void check_strings_utf8(const uint8_t *doc, size_t len) {
    msgpack::Cursor in(doc, len);
    for (uint64_t pending = 1; pending > 0; --pending) {
        const msgpack::Header h = in.next();
        if (msgpack::has_body(h.kind)) {
            const std::string_view body = in.body(h);
            if (h.kind == msgpack::Kind::Str && !utf8_valid(body))
                fail(CACHEKIT_EDESERIALIZE, "the interop/v2 value holds a str that is not valid UTF-8");
        }
        if (h.kind == msgpack::Kind::Array) pending += h.length;
        if (h.kind == msgpack::Kind::Map) pending += 2 * h.length;
    }
}

}  // namespace

bool has_magic(const uint8_t *data, size_t len) { return len >= 2 && data[0] == 0xc1 && data[1] == 0x02; }

void wrap(const uint8_t *value, size_t len, int method, cachekit_buf *out) {
    if (method != CACHEKIT_V2_METHOD_NONE && method != CACHEKIT_V2_METHOD_LZ4)
        fail(CACHEKIT_EINVAL, "unknown interop/v2 method " + std::to_string(method));
    if (len > envelope::kMaxSize) fail(CACHEKIT_ETOOBIG, "value is over the 512 MiB limit");
    msgpack::check_document(value, len);
    Buffer payload;
    const uint8_t *body = value;
    size_t body_len = len;
    if (method == CACHEKIT_V2_METHOD_LZ4) {
        int bound = LZ4_compressBound(int(len));
        char *dst = buf_resize(payload.get(), size_t(bound));
        int n = LZ4_compress_default(reinterpret_cast<const char *>(value), dst, int(len), bound);
        if (n <= 0) fail(CACHEKIT_EINTERNAL, "LZ4 compression failed");
        buf_resize(payload.get(), size_t(n));
        body = reinterpret_cast<const uint8_t *>(payload.data());
        body_len = payload.size();
    }
    buf_resize(out, 0);
    const char magic[2] = {char(0xc1), 0x02};
    buf_append(out, magic, 2);
    msgpack::Writer w(out);
    w.array(3);
    w.uint(uint64_t(method));
    w.uint(len);
    w.bin(body, body_len);
}

void unwrap(const uint8_t *c, size_t len, cachekit_buf *out, uint64_t max_original_size) {
    if (len < 2 || c[0] != 0xc1)
        fail(CACHEKIT_EFRAME, "bad interop/v2 magic (the first byte is not 0xC1): possibly an interop/v1 value");
    if (c[1] != 0x02) fail(CACHEKIT_EFRAME, "unsupported interop/v2 container version " + std::to_string(c[1]));
    const uint8_t *body = c + 2;
    const size_t body_len = len - 2;
    if (body_len > envelope::kMaxSize + 16) fail(CACHEKIT_ETOOBIG, "container is over the 512 MiB limit");
    msgpack::check_document(body, body_len);
    msgpack::Cursor in(body, body_len);
    msgpack::Header root = in.next();
    if (root.kind != msgpack::Kind::Array || root.length != 3)
        fail(CACHEKIT_EDESERIALIZE, "an interop/v2 body is an array [method, original_size, payload]");
    msgpack::Header mh = in.next();
    if (mh.kind != msgpack::Kind::Uint || mh.signed_marker)
        fail(CACHEKIT_EDESERIALIZE, "method must be an unsigned integer (uint family marker)");
    if (mh.u != CACHEKIT_V2_METHOD_NONE && mh.u != CACHEKIT_V2_METHOD_LZ4)
        fail(CACHEKIT_EDESERIALIZE, "unknown interop/v2 compression method " + std::to_string(mh.u));
    msgpack::Header sh = in.next();
    if (sh.kind != msgpack::Kind::Uint || sh.signed_marker)
        fail(CACHEKIT_EDESERIALIZE, "original_size must be an unsigned integer (uint family marker)");
    msgpack::Header ph = in.next();
    if (ph.kind != msgpack::Kind::Bin) fail(CACHEKIT_EDESERIALIZE, "payload must be msgpack bin");
    std::string_view payload = in.body(ph);
    const uint64_t original_size = sh.u;
    if (original_size > envelope::kMaxSize) fail(CACHEKIT_ETOOBIG, "original_size exceeds the 512 MiB limit");
    if (original_size > max_original_size)
        fail(CACHEKIT_ETOOBIG, "original_size " + std::to_string(original_size) + " is over the reader's limit of " +
                                   std::to_string(max_original_size) + " bytes");
    if (payload.size() > envelope::kMaxSize) fail(CACHEKIT_ETOOBIG, "payload exceeds the 512 MiB limit");
    if (mh.u == CACHEKIT_V2_METHOD_NONE) {
        if (original_size != payload.size()) fail(CACHEKIT_ESIZE, "method 0 original_size differs from the payload length");
        buf_assign(out, payload.data(), payload.size());
    } else {
        if (payload.empty()) fail(CACHEKIT_EBOMB, "zero-length compressed payload");
        if (original_size > envelope::kMaxRatio * uint64_t(payload.size()))
            fail(CACHEKIT_EBOMB, "compression ratio exceeds 1000:1");
        char *dst = buf_resize(out, size_t(original_size));
        int n = LZ4_decompress_safe(payload.data(), dst, int(payload.size()), int(original_size));
        if (n < 0) {
            buf_resize(out, 0);
            fail(CACHEKIT_EDECOMPRESS, "the LZ4 block is malformed or decodes past original_size");
        }
        if (uint64_t(n) != original_size) {
            buf_resize(out, 0);
            fail(CACHEKIT_ESIZE, "LZ4 output length differs from original_size");
        }
    }
    const auto *value = reinterpret_cast<const uint8_t *>(out->ptr);
    msgpack::check_document(value, out->size);
    check_strings_utf8(value, out->size);
}

}  // namespace cachekit::container_v2
