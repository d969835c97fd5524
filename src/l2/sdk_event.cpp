#include "l2/sdk_event.hpp"

#include <algorithm>
#include <cstdint>

namespace cachekit::l2::sdk_event {
namespace {

constexpr size_t kMaxEventBytes = 4096;
constexpr size_t kMaxFieldBytes = 1024;

// Reads one MessagePack str (fixstr, str8, str16) at `pos`.
std::optional<std::string_view> read_str(std::string_view b, size_t &pos) {
    if (pos >= b.size()) return std::nullopt;
    const auto tag = uint8_t(b[pos++]);
    size_t n;
    if ((tag & 0xe0) == 0xa0) {
        n = tag & 0x1f;
    } else if (tag == 0xd9) {
        if (pos + 1 > b.size()) return std::nullopt;
        n = uint8_t(b[pos]);
        pos += 1;
    } else if (tag == 0xda) {
        if (pos + 2 > b.size()) return std::nullopt;
        n = size_t(uint8_t(b[pos])) << 8 | uint8_t(b[pos + 1]);
        pos += 2;
    } else {
        return std::nullopt;
    }
    if (n > kMaxFieldBytes || pos + n > b.size()) return std::nullopt;
    std::string_view s = b.substr(pos, n);
    pos += n;
    return s;
}

void write_str(std::string &out, std::string_view s) {
    if (s.size() < 32) {
        out.push_back(char(0xa0 | s.size()));
    } else if (s.size() < 256) {
        out.push_back(char(0xd9));
        out.push_back(char(s.size()));
    } else {
        out.push_back(char(0xda));
        out.push_back(char(s.size() >> 8));
        out.push_back(char(s.size() & 0xff));
    }
    out.append(s);
}

// BLAKE3 (one chunk, root output): what cachekit-py's blake3_hash computes
// for a short string.
constexpr uint32_t kIv[8] = {0x6A09E667, 0xBB67AE85, 0x3C6EF372, 0xA54FF53A,
                             0x510E527F, 0x9B05688C, 0x1F83D9AB, 0x5BE0CD19};
constexpr unsigned kPermutation[16] = {2, 6, 3, 10, 7, 0, 4, 13, 1, 11, 12, 5, 9, 14, 15, 8};
enum : uint32_t { kChunkStart = 1, kChunkEnd = 2, kRoot = 8 };

inline uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

void g(uint32_t *v, int a, int b, int c, int d, uint32_t x, uint32_t y) {
    v[a] += v[b] + x;
    v[d] = rotr(v[d] ^ v[a], 16);
    v[c] += v[d];
    v[b] = rotr(v[b] ^ v[c], 12);
    v[a] += v[b] + y;
    v[d] = rotr(v[d] ^ v[a], 8);
    v[c] += v[d];
    v[b] = rotr(v[b] ^ v[c], 7);
}

void compress(uint32_t cv[8], const uint8_t block[64], uint32_t block_len, uint32_t flags) {
    uint32_t m[16];
    for (int i = 0; i < 16; ++i)
        m[i] = uint32_t(block[4 * i]) | uint32_t(block[4 * i + 1]) << 8 | uint32_t(block[4 * i + 2]) << 16 |
               uint32_t(block[4 * i + 3]) << 24;
    uint32_t v[16] = {cv[0], cv[1], cv[2], cv[3], cv[4], cv[5], cv[6], cv[7],
                      kIv[0], kIv[1], kIv[2], kIv[3], 0, 0, block_len, flags};  // chunk counter 0
    for (int round = 0; round < 7; ++round) {
        g(v, 0, 4, 8, 12, m[0], m[1]);
        g(v, 1, 5, 9, 13, m[2], m[3]);
        g(v, 2, 6, 10, 14, m[4], m[5]);
        g(v, 3, 7, 11, 15, m[6], m[7]);
        g(v, 0, 5, 10, 15, m[8], m[9]);
        g(v, 1, 6, 11, 12, m[10], m[11]);
        g(v, 2, 7, 8, 13, m[12], m[13]);
        g(v, 3, 4, 9, 14, m[14], m[15]);
        uint32_t p[16];
        for (int i = 0; i < 16; ++i) p[i] = m[kPermutation[i]];
        std::copy(p, p + 16, m);
    }
    for (int i = 0; i < 8; ++i) cv[i] = v[i] ^ v[i + 8];
}

}  // namespace

std::optional<std::string> registry_hash(std::string_view name) {
    if (name.size() > 1024) return std::nullopt;
    uint32_t cv[8];
    std::copy(kIv, kIv + 8, cv);
    size_t pos = 0;
    uint32_t flags = kChunkStart;
    for (;;) {
        const size_t n = std::min<size_t>(64, name.size() - pos);
        uint8_t block[64] = {};
        std::copy(name.data() + pos, name.data() + pos + n, block);
        pos += n;
        const bool last = pos == name.size();
        compress(cv, block, uint32_t(n), flags | (last ? kChunkEnd | kRoot : 0));
        if (last) break;
        flags = 0;
    }
    static const char *hex = "0123456789abcdef";
    std::string out;
    for (int i = 0; i < 8; ++i) {
        const uint8_t byte = uint8_t(cv[i / 4] >> (8 * (i % 4)));
        out.push_back(hex[byte >> 4]);
        out.push_back(hex[byte & 15]);
    }
    return out;
}

std::optional<std::string> registry_id_of_key(std::string_view key) {
    std::string_view ns, rest = key;
    if (rest.substr(0, 3) == "ns:") {
        const size_t func = rest.find(":func:", 3);
        if (func == std::string_view::npos) return std::nullopt;
        ns = rest.substr(3, func - 3);
        rest.remove_prefix(func + 1);
    }
    if (rest.substr(0, 5) != "func:") return std::nullopt;
    rest.remove_prefix(5);
    const size_t end = rest.find(":args:");
    if (end == std::string_view::npos || end == 0) return std::nullopt;
    std::optional<std::string> h = registry_hash(rest.substr(0, end));
    if (!h) return std::nullopt;
    return "ck:reg:" + std::string(ns) + ":" + *h;
}

std::optional<Event> decode(std::string_view b) {
    if (b.empty() || b.size() > kMaxEventBytes) return std::nullopt;
    const auto head = uint8_t(b[0]);
    if ((head & 0xf0) != 0x80 || (head & 0x0f) > 4) return std::nullopt;
    size_t pos = 1;
    Event ev;
    bool has_r = false;
    for (unsigned i = 0; i < (head & 0x0fu); ++i) {
        auto name = read_str(b, pos);
        auto value = read_str(b, pos);
        if (!name || !value) return std::nullopt;
        if (*name == "r") {
            ev.registry_id = std::string(*value);
            has_r = true;
        } else if (*name == "k") {
            ev.key = std::string(*value);
        }
    }
    if (!has_r || pos != b.size()) return std::nullopt;
    // "ck:reg:{ns}:{hash}": the namespace is what lies between.
    constexpr std::string_view kReg = "ck:reg:";
    const std::string_view r = ev.registry_id;
    const size_t last = r.rfind(':');
    if (r.substr(0, kReg.size()) != kReg || last < kReg.size()) return std::nullopt;
    ev.ns = std::string(r.substr(kReg.size(), last - kReg.size()));
    return ev;
}

std::string encode(std::string_view registry_id, std::optional<std::string_view> key) {
    std::string out;
    const bool with_key = key && key->size() <= kMaxFieldBytes;
    out.push_back(char(with_key ? 0x82 : 0x81));
    write_str(out, "r");
    write_str(out, registry_id.substr(0, kMaxFieldBytes));
    if (with_key) {
        write_str(out, "k");
        write_str(out, *key);
    }
    return out;
}

}  // namespace cachekit::l2::sdk_event
