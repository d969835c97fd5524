#include "l2/file/file_format.hpp"

#include "codec/hashing.hpp"

namespace cachekit::l2::filefmt {

std::string entry_name(std::string_view key) {
    uint8_t digest[16];
    blake2b(digest, sizeof digest, key.data(), key.size());
    return to_hex(digest, sizeof digest);
}

std::string lock_name(std::string_view name) { return entry_name(name) + ".lock"; }

bool is_entry_name(std::string_view name) {
    if (name.size() != kNameLength) return false;
    for (char c : name)
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
    return true;
}

bool is_temp_name(std::string_view name) { return name.find(".tmp.") != std::string_view::npos; }

std::array<char, kHeaderSize> encode_header(uint64_t expiry, uint8_t reserved, uint16_t flags) {
    std::array<char, kHeaderSize> h{};
    h[0] = 'C';
    h[1] = 'K';
    h[2] = char(kVersion);
    h[3] = char(reserved);
    h[4] = char(flags >> 8);
    h[5] = char(flags & 0xff);
    for (int i = 0; i < 8; ++i) h[size_t(6 + i)] = char((expiry >> (8 * (7 - i))) & 0xff);
    return h;
}

Verdict classify(const char *data, size_t len, int64_t now_ms, Header *header) {
    if (len < kHeaderSize) return Verdict::Corrupt;
    const auto *p = reinterpret_cast<const uint8_t *>(data);
    if (p[0] != 'C' || p[1] != 'K' || p[2] != kVersion) return Verdict::Corrupt;
    Header h;
    h.version = p[2];
    h.reserved = p[3];
    h.flags = uint16_t(p[4] << 8 | p[5]);
    for (int i = 0; i < 8; ++i) h.expiry = h.expiry << 8 | p[6 + i];
    if (header) *header = h;
    if (h.reserved != 0 || h.flags != 0) return Verdict::MissPreserve;
    if (h.expiry != 0) {
        // now >= expiry, in milliseconds without overflow for any expiry.
        if (now_ms >= 0 && uint64_t(now_ms) / 1000 >= h.expiry) return Verdict::MissExpired;
    }
    return Verdict::Payload;
}

}  // namespace cachekit::l2::filefmt
