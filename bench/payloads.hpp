// Deterministic benchmark payloads: JSON-like records of a requested size,
// the shape cached API responses usually have.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace cachekit::bench {

inline std::string json_records(size_t size) {
    static const char *names[] = {"alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi"};
    static const char *cities[] = {"Lisbon", "Osaka", "Denver", "Nairobi", "Tallinn", "Quito"};
    std::string out = "[";
    uint64_t x = 0x9e3779b97f4a7c15ULL;  // xorshift64 state: same bytes every run
    for (int id = 1; out.size() < size; ++id) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        const char *name = names[x % 8];
        out += "{\"id\":" + std::to_string(id) + ",\"name\":\"" + name + "\",\"email\":\"" + name +
               std::to_string(x % 1000) + "@example.com\",\"city\":\"" + cities[(x >> 8) % 6] +
               "\",\"active\":" + ((x >> 16) & 1 ? "true" : "false") + ",\"score\":" + std::to_string((x >> 20) % 10000) +
               ",\"tags\":[\"t" + std::to_string((x >> 32) % 50) + "\",\"t" + std::to_string((x >> 40) % 50) + "\"]},";
    }
    out.resize(size);
    return out;
}

}  // namespace cachekit::bench
