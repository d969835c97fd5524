// One MessagePack header at a time: what the type byte and its length fields
// say, without reading the body. Shared by the bounded scanner and the readers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace cachekit::msgpack {

enum class Kind : uint8_t { Nil, Bool, Uint, Int, Float32, Float64, Str, Bin, Array, Map, Ext };

struct Header {
    Kind kind = Kind::Nil;
    uint8_t size = 0;      // bytes of the header itself (type byte + length/scalar fields)
    bool signed_marker = false;  // an int8..int64 or negative fixint marker
    int8_t ext_type = 0;
    uint64_t length = 0;   // element count (array), pair count (map), body bytes (str/bin/ext)
    uint64_t u = 0;        // Uint value, Bool value
    int64_t i = 0;         // Int value (negative or signed-marker)
    double d = 0;          // Float32/Float64 value
};

enum class HeaderStatus { Ok, Short, Reserved };

inline uint16_t load_be16(const uint8_t *p) { return uint16_t(p[0] << 8 | p[1]); }
inline uint32_t load_be32(const uint8_t *p) {
    return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3];
}
inline uint64_t load_be64(const uint8_t *p) { return uint64_t(load_be32(p)) << 32 | load_be32(p + 4); }

// Parse the header at p (avail bytes readable). Body bytes are not checked.
inline HeaderStatus read_header(const uint8_t *p, size_t avail, Header &h) {
    if (avail == 0) return HeaderStatus::Short;
    const uint8_t t = p[0];
    h = Header{};
    h.size = 1;
    auto need = [&](size_t n) { return avail >= n; };
    if (t <= 0x7f) { h.kind = Kind::Uint; h.u = t; return HeaderStatus::Ok; }
    if (t >= 0xe0) { h.kind = Kind::Int; h.i = int8_t(t); h.signed_marker = true; return HeaderStatus::Ok; }
    if ((t & 0xf0) == 0x80) { h.kind = Kind::Map; h.length = t & 0x0f; return HeaderStatus::Ok; }
    if ((t & 0xf0) == 0x90) { h.kind = Kind::Array; h.length = t & 0x0f; return HeaderStatus::Ok; }
    if ((t & 0xe0) == 0xa0) { h.kind = Kind::Str; h.length = t & 0x1f; return HeaderStatus::Ok; }
    auto sized = [&](Kind k, size_t width) {
        if (!need(1 + width)) return HeaderStatus::Short;
        h.kind = k;
        h.size = uint8_t(1 + width);
        h.length = width == 1 ? p[1] : width == 2 ? load_be16(p + 1) : load_be32(p + 1);
        return HeaderStatus::Ok;
    };
    auto ext = [&](size_t width, uint64_t fixed) {
        size_t hs = 1 + width + 1;
        if (!need(hs)) return HeaderStatus::Short;
        h.kind = Kind::Ext;
        h.size = uint8_t(hs);
        h.length = width == 0 ? fixed : width == 1 ? p[1] : width == 2 ? load_be16(p + 1) : load_be32(p + 1);
        h.ext_type = int8_t(p[1 + width]);
        return HeaderStatus::Ok;
    };
    switch (t) {
    case 0xc0: h.kind = Kind::Nil; return HeaderStatus::Ok;
    case 0xc1: return HeaderStatus::Reserved;
    case 0xc2: h.kind = Kind::Bool; h.u = 0; return HeaderStatus::Ok;
    case 0xc3: h.kind = Kind::Bool; h.u = 1; return HeaderStatus::Ok;
    case 0xc4: return sized(Kind::Bin, 1);
    case 0xc5: return sized(Kind::Bin, 2);
    case 0xc6: return sized(Kind::Bin, 4);
    case 0xc7: return ext(1, 0);
    case 0xc8: return ext(2, 0);
    case 0xc9: return ext(4, 0);
    case 0xca: {
        if (!need(5)) return HeaderStatus::Short;
        uint32_t bits = load_be32(p + 1);
        float f;
        std::memcpy(&f, &bits, 4);
        h.kind = Kind::Float32; h.d = f; h.size = 5;
        return HeaderStatus::Ok;
    }
    case 0xcb: {
        if (!need(9)) return HeaderStatus::Short;
        uint64_t bits = load_be64(p + 1);
        std::memcpy(&h.d, &bits, 8);
        h.kind = Kind::Float64; h.size = 9;
        return HeaderStatus::Ok;
    }
    case 0xcc: if (!need(2)) return HeaderStatus::Short; h.kind = Kind::Uint; h.u = p[1]; h.size = 2; return HeaderStatus::Ok;
    case 0xcd: if (!need(3)) return HeaderStatus::Short; h.kind = Kind::Uint; h.u = load_be16(p + 1); h.size = 3; return HeaderStatus::Ok;
    case 0xce: if (!need(5)) return HeaderStatus::Short; h.kind = Kind::Uint; h.u = load_be32(p + 1); h.size = 5; return HeaderStatus::Ok;
    case 0xcf: if (!need(9)) return HeaderStatus::Short; h.kind = Kind::Uint; h.u = load_be64(p + 1); h.size = 9; return HeaderStatus::Ok;
    case 0xd0: if (!need(2)) return HeaderStatus::Short; h.kind = Kind::Int; h.i = int8_t(p[1]); h.size = 2; h.signed_marker = true; return HeaderStatus::Ok;
    case 0xd1: if (!need(3)) return HeaderStatus::Short; h.kind = Kind::Int; h.i = int16_t(load_be16(p + 1)); h.size = 3; h.signed_marker = true; return HeaderStatus::Ok;
    case 0xd2: if (!need(5)) return HeaderStatus::Short; h.kind = Kind::Int; h.i = int32_t(load_be32(p + 1)); h.size = 5; h.signed_marker = true; return HeaderStatus::Ok;
    case 0xd3: if (!need(9)) return HeaderStatus::Short; h.kind = Kind::Int; h.i = int64_t(load_be64(p + 1)); h.size = 9; h.signed_marker = true; return HeaderStatus::Ok;
    case 0xd4: return ext(0, 1);
    case 0xd5: return ext(0, 2);
    case 0xd6: return ext(0, 4);
    case 0xd7: return ext(0, 8);
    case 0xd8: return ext(0, 16);
    case 0xd9: return sized(Kind::Str, 1);
    case 0xda: return sized(Kind::Str, 2);
    case 0xdb: return sized(Kind::Str, 4);
    case 0xdc: return sized(Kind::Array, 2);
    case 0xdd: return sized(Kind::Array, 4);
    case 0xde: return sized(Kind::Map, 2);
    case 0xdf: return sized(Kind::Map, 4);
    }
    return HeaderStatus::Reserved;  // unreachable: every byte is covered above
}

inline bool has_body(Kind k) { return k == Kind::Str || k == Kind::Bin || k == Kind::Ext; }
inline bool is_container(Kind k) { return k == Kind::Array || k == Kind::Map; }

}  // namespace cachekit::msgpack
