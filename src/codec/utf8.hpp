// UTF-8 validation and code point walking (strict: no overlongs, no
// surrogates, nothing past U+10FFFF).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace cachekit {

// Length of the valid UTF-8 sequence at s[i], or 0 when it is not valid.
inline size_t utf8_sequence_length(std::string_view s, size_t i) {
    const auto *p = reinterpret_cast<const uint8_t *>(s.data());
    const size_t n = s.size();
    uint8_t c = p[i];
    if (c < 0x80) return 1;
    auto cont = [&](size_t k) { return i + k < n && (p[i + k] & 0xc0) == 0x80; };
    if (c >= 0xc2 && c <= 0xdf) return cont(1) ? 2 : 0;
    if (c >= 0xe0 && c <= 0xef) {
        if (!cont(1) || !cont(2)) return 0;
        if (c == 0xe0 && p[i + 1] < 0xa0) return 0;  // overlong
        if (c == 0xed && p[i + 1] >= 0xa0) return 0;  // surrogate
        return 3;
    }
    if (c >= 0xf0 && c <= 0xf4) {
        if (!cont(1) || !cont(2) || !cont(3)) return 0;
        if (c == 0xf0 && p[i + 1] < 0x90) return 0;  // overlong
        if (c == 0xf4 && p[i + 1] >= 0x90) return 0;  // past U+10FFFF
        return 4;
    }
    return 0;
}

inline bool utf8_valid(std::string_view s) {
    for (size_t i = 0; i < s.size();) {
        size_t k = utf8_sequence_length(s, i);
        if (k == 0) return false;
        i += k;
    }
    return true;
}

// Number of code points in valid UTF-8.
inline size_t utf8_count(std::string_view s) {
    size_t count = 0;
    for (unsigned char c : s) count += (c & 0xc0) != 0x80;
    return count;
}

// Byte offset of the first `code_points` code points of valid UTF-8.
inline size_t utf8_prefix_bytes(std::string_view s, size_t code_points) {
    size_t i = 0;
    while (i < s.size() && code_points > 0) {
        ++i;
        while (i < s.size() && (static_cast<unsigned char>(s[i]) & 0xc0) == 0x80) ++i;
        --code_points;
    }
    return i;
}

}  // namespace cachekit
