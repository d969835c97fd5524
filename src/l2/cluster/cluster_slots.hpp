// Redis Cluster key slots: CRC16 (XMODEM: polynomial 0x1021, initial 0) of
// the key, or of its hash tag, modulo 16384. The hash tag is the text
// between the first '{' and the first '}' after it, when that text is not
// empty ("{user1000}.following" and "{user1000}.followers" share a slot;
// "{}x" and "x{" hash whole).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace cachekit::l2::cluster {

constexpr uint16_t kSlots = 16384;

uint16_t crc16(std::string_view data) noexcept;
// The part of the key that is hashed.
std::string_view hash_tag(std::string_view key) noexcept;
uint16_t key_slot(std::string_view key) noexcept;

// The stored name of a lock on a cluster. The cache names a key's stampede
// lock "<key>:lock"; stored as is it would hash to another slot (another
// node) than the key. So "<key>:lock" becomes "{<key>}:lock" (the key's slot)
// when <key> has no hash tag of its own and no '}' (which would end the new
// tag early); a key with its own tag keeps the name (the tag already puts it
// in the key's slot); any other name is kept.
std::string lock_key(std::string_view name);

}  // namespace cachekit::l2::cluster
