// Redis Cluster key slots: CRC16 (XMODEM: polynomial 0x1021, initial 0) of
// the key, or of its hash tag, modulo 16384. The hash tag is the text
// between the first '{' and the first '}' after it, when that text is not
// empty ("{user1000}.following" and "{user1000}.followers" share a slot;
// "{}x" and "x{" hash whole).
#pragma once

#include <cstdint>
#include <string_view>

namespace cachekit::l2::cluster {

constexpr uint16_t kSlots = 16384;

uint16_t crc16(std::string_view data) noexcept;
// The part of the key that is hashed.
std::string_view hash_tag(std::string_view key) noexcept;
uint16_t key_slot(std::string_view key) noexcept;

}  // namespace cachekit::l2::cluster
