#include "l2/cluster/cluster_slots.hpp"

#include <array>

namespace cachekit::l2::cluster {
namespace {

constexpr std::array<uint16_t, 256> make_table() {
    std::array<uint16_t, 256> table{};
    for (unsigned byte = 0; byte < 256; ++byte) {
        uint16_t crc = static_cast<uint16_t>(byte << 8);
        for (int bit = 0; bit < 8; ++bit)
            crc = static_cast<uint16_t>((crc & 0x8000) ? (crc << 1) ^ 0x1021 : crc << 1);
        table[byte] = crc;
    }
    return table;
}

constexpr std::array<uint16_t, 256> kTable = make_table();

}  // namespace

uint16_t crc16(std::string_view data) noexcept {
    uint16_t crc = 0;
    for (char c : data)
        crc = static_cast<uint16_t>((crc << 8) ^ kTable[((crc >> 8) ^ static_cast<unsigned char>(c)) & 0xff]);
    return crc;
}

std::string_view hash_tag(std::string_view key) noexcept {
    const size_t open = key.find('{');
    if (open == std::string_view::npos) return key;
    const size_t close = key.find('}', open + 1);
    if (close == std::string_view::npos || close == open + 1) return key;
    return key.substr(open + 1, close - open - 1);
}

uint16_t key_slot(std::string_view key) noexcept { return crc16(hash_tag(key)) & (kSlots - 1); }

std::string lock_key(std::string_view name) {
    constexpr std::string_view kSuffix = ":lock";
    if (name.size() <= kSuffix.size() || name.substr(name.size() - kSuffix.size()) != kSuffix) return std::string(name);
    const std::string_view key = name.substr(0, name.size() - kSuffix.size());
    if (hash_tag(key).size() != key.size() || key.find('}') != std::string_view::npos) return std::string(name);
    std::string out;
    out.reserve(name.size() + 2);
    out.append("{").append(key).append("}").append(kSuffix);
    return out;
}

}  // namespace cachekit::l2::cluster
