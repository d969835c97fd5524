// The on-disk format of the file backend, byte-compatible with the reference
// Python SDK's FileBackend (protocol.md section 7, file-backend.json):
//   name   = lowercase hex of BLAKE2b-128 (16-byte digest) of the key bytes
//   header = "CK" | version 1 | reserved u8 | flags u16be | expiry u64be
//            (Unix seconds, 0 = never), then the payload.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace cachekit::l2::filefmt {

inline constexpr size_t kHeaderSize = 14;
inline constexpr uint8_t kVersion = 1;
inline constexpr size_t kNameLength = 32;  // hex of 16 bytes
// The longest TTL a file entry takes (the reference SDK's bound).
inline constexpr uint64_t kMaxTtlSeconds = 10ULL * 365 * 24 * 60 * 60;

// The entry file name of a key.
std::string entry_name(std::string_view key);

// The lock file name of a lock name: entry_name(name) + ".lock".
std::string lock_name(std::string_view name);

// True for a name that entry_name could have produced (32 lowercase hex).
bool is_entry_name(std::string_view name);

// True for a temporary file of an atomic write (ours "<hash>.tmp.<rand>", the
// reference SDK's "<hash>.tmp.<pid>.<ns>", health probes).
bool is_temp_name(std::string_view name);

std::array<char, kHeaderSize> encode_header(uint64_t expiry_unix_seconds, uint8_t reserved = 0,
                                            uint16_t flags = 0);

enum class Verdict {
    Payload,       // a live entry: return the payload
    MissPreserve,  // non-zero reserved or flags: a newer format; a miss, keep the file
    MissExpired,   // expiry reached: a miss; the file may be removed
    Corrupt,       // shorter than the header, bad magic or version: a miss; removed
};

struct Header {
    uint8_t version = 0;
    uint8_t reserved = 0;
    uint16_t flags = 0;
    uint64_t expiry = 0;  // Unix seconds, 0 = never
};

// Judge the first bytes of a file (at least the header when available) at
// now_ms (Unix milliseconds): expired when expiry != 0 and now >= expiry.
Verdict classify(const char *data, size_t len, int64_t now_ms, Header *header = nullptr);

}  // namespace cachekit::l2::filefmt
