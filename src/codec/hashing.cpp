#include "codec/hashing.hpp"

#include <sodium.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "util/error.hpp"

namespace cachekit {

void blake2b(uint8_t *out, size_t out_len, const void *data, size_t len) {
    if (crypto_generichash(out, out_len, static_cast<const unsigned char *>(data), len, nullptr, 0) != 0)
        fail(CACHEKIT_EINTERNAL, "BLAKE2b failed");
}

uint64_t xxh3_64(const void *data, size_t len) { return XXH3_64bits(data, len); }

std::string to_hex(const void *data, size_t len) {
    static const char digits[] = "0123456789abcdef";
    const auto *p = static_cast<const uint8_t *>(data);
    std::string out(len * 2, '\0');
    for (size_t i = 0; i < len; ++i) {
        out[2 * i] = digits[p[i] >> 4];
        out[2 * i + 1] = digits[p[i] & 15];
    }
    return out;
}

static int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

bool from_hex(std::string_view hex, uint8_t *out, size_t out_len) {
    if (hex.size() != 2 * out_len) return false;
    for (size_t i = 0; i < out_len; ++i) {
        int hi = hex_digit(hex[2 * i]), lo = hex_digit(hex[2 * i + 1]);
        if (hi < 0 || lo < 0) return false;
        out[i] = uint8_t(hi << 4 | lo);
    }
    return true;
}

bool from_hex(std::string_view hex, std::string &out) {
    if (hex.size() % 2 != 0) return false;
    out.resize(hex.size() / 2);
    return from_hex(hex, reinterpret_cast<uint8_t *>(out.data()), out.size());
}

}  // namespace cachekit
