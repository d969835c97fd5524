// BLAKE3 (hash mode, 32-byte output), portable and small: the reference SDK
// names a function's key registry with the first 8 bytes of BLAKE3 over
// "{module}.{qualname}" (docs/redis.md "Key registry"). Not on a hot path:
// computed once per registered function.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace cachekit::blake3 {

std::array<uint8_t, 32> hash(std::string_view data);

// The first `bytes` bytes of the hash, lowercase hex (bytes <= 32).
std::string hex_prefix(std::string_view data, size_t bytes);

}  // namespace cachekit::blake3
