// Hash functions of the protocol: BLAKE2b (keys, file names, serializer
// codes) via libsodium, XXH3-64 (envelope checksums) via xxHash.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace cachekit {

// Unkeyed BLAKE2b with an output of `out_len` bytes (1..64).
void blake2b(uint8_t *out, size_t out_len, const void *data, size_t len);

inline std::array<uint8_t, 32> blake2b256(const void *data, size_t len) {
    std::array<uint8_t, 32> digest;
    blake2b(digest.data(), digest.size(), data, len);
    return digest;
}

uint64_t xxh3_64(const void *data, size_t len);

// Lowercase hex of bytes.
std::string to_hex(const void *data, size_t len);

// Decode hex (either case); false on odd length or a non-hex character.
bool from_hex(std::string_view hex, std::string &out);
// Decode exactly out_len bytes (hex holds 2 * out_len digits) into out.
bool from_hex(std::string_view hex, uint8_t *out, size_t out_len);

}  // namespace cachekit
