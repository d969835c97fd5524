// Written from the BLAKE3 specification (compression function, chunk
// chaining, binary tree of parents); one chunk at a time, no SIMD.
#include "codec/blake3.hpp"

#include <cstring>
#include <vector>

namespace cachekit::blake3 {
namespace {

constexpr uint32_t kIv[8] = {0x6A09E667, 0xBB67AE85, 0x3C6EF372, 0xA54FF53A,
                             0x510E527F, 0x9B05688C, 0x1F83D9AB, 0x5BE0CD19};
constexpr uint8_t kPermutation[16] = {2, 6, 3, 10, 7, 0, 4, 13, 1, 11, 12, 5, 9, 14, 15, 8};
constexpr uint32_t kChunkStart = 1, kChunkEnd = 2, kParent = 4, kRoot = 8;
constexpr size_t kBlock = 64, kChunk = 1024;

using Words8 = std::array<uint32_t, 8>;
using Words16 = std::array<uint32_t, 16>;

uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

void g(uint32_t *s, int a, int b, int c, int d, uint32_t x, uint32_t y) {
    s[a] = s[a] + s[b] + x;
    s[d] = rotr(s[d] ^ s[a], 16);
    s[c] = s[c] + s[d];
    s[b] = rotr(s[b] ^ s[c], 12);
    s[a] = s[a] + s[b] + y;
    s[d] = rotr(s[d] ^ s[a], 8);
    s[c] = s[c] + s[d];
    s[b] = rotr(s[b] ^ s[c], 7);
}

// The full 16-word output of one compression.
Words16 compress(const Words8 &cv, const Words16 &block, uint64_t counter, uint32_t len, uint32_t flags) {
    uint32_t s[16] = {cv[0], cv[1], cv[2], cv[3], cv[4], cv[5], cv[6], cv[7],
                      kIv[0], kIv[1], kIv[2], kIv[3], uint32_t(counter), uint32_t(counter >> 32), len, flags};
    Words16 m = block;
    for (int round = 0; round < 7; ++round) {
        g(s, 0, 4, 8, 12, m[0], m[1]);
        g(s, 1, 5, 9, 13, m[2], m[3]);
        g(s, 2, 6, 10, 14, m[4], m[5]);
        g(s, 3, 7, 11, 15, m[6], m[7]);
        g(s, 0, 5, 10, 15, m[8], m[9]);
        g(s, 1, 6, 11, 12, m[10], m[11]);
        g(s, 2, 7, 8, 13, m[12], m[13]);
        g(s, 3, 4, 9, 14, m[14], m[15]);
        Words16 next;
        for (int i = 0; i < 16; ++i) next[i] = m[kPermutation[i]];
        m = next;
    }
    Words16 out;
    for (int i = 0; i < 8; ++i) {
        out[i] = s[i] ^ s[i + 8];
        out[i + 8] = s[i + 8] ^ cv[i];
    }
    return out;
}

Words16 load_block(const uint8_t *p, size_t n) {
    uint8_t buf[kBlock] = {};
    if (n) std::memcpy(buf, p, n);
    Words16 w;
    for (int i = 0; i < 16; ++i)
        w[i] = uint32_t(buf[4 * i]) | uint32_t(buf[4 * i + 1]) << 8 | uint32_t(buf[4 * i + 2]) << 16 |
               uint32_t(buf[4 * i + 3]) << 24;
    return w;
}

// A compression not yet run: a chunk's last block or a parent node. Its
// chaining value, or (as the root) the hash.
struct Output {
    Words8 cv;
    Words16 block;
    uint64_t counter;
    uint32_t len;
    uint32_t flags;

    Words8 chaining_value() const {
        Words16 o = compress(cv, block, counter, len, flags);
        Words8 r;
        for (int i = 0; i < 8; ++i) r[i] = o[i];
        return r;
    }
};

Output chunk_output(const uint8_t *p, size_t n, uint64_t chunk_index) {
    Words8 cv;
    for (int i = 0; i < 8; ++i) cv[i] = kIv[i];
    const size_t blocks = n == 0 ? 1 : (n + kBlock - 1) / kBlock;
    for (size_t b = 0; b + 1 < blocks; ++b) {
        Words16 o = compress(cv, load_block(p + b * kBlock, kBlock), chunk_index, kBlock, b == 0 ? kChunkStart : 0);
        for (int i = 0; i < 8; ++i) cv[i] = o[i];
    }
    const size_t last = n - (blocks - 1) * kBlock;
    return Output{cv, load_block(p + (blocks - 1) * kBlock, last), chunk_index, uint32_t(last),
                  (blocks == 1 ? kChunkStart : 0) | kChunkEnd};
}

Output parent_output(const Words8 &left, const Words8 &right) {
    Output o;
    for (int i = 0; i < 8; ++i) {
        o.cv[i] = kIv[i];
        o.block[i] = left[i];
        o.block[i + 8] = right[i];
    }
    o.counter = 0;
    o.len = kBlock;
    o.flags = kParent;
    return o;
}

}  // namespace

std::array<uint8_t, 32> hash(std::string_view data) {
    const auto *p = reinterpret_cast<const uint8_t *>(data.data());
    const size_t n = data.size();
    const size_t chunks = n == 0 ? 1 : (n + kChunk - 1) / kChunk;
    // Completed subtrees' chaining values; merged as the chunk count's low bits carry.
    std::vector<Words8> stack;
    for (size_t c = 0; c + 1 < chunks; ++c) {
        Words8 cv = chunk_output(p + c * kChunk, kChunk, c).chaining_value();
        for (uint64_t total = c + 1; (total & 1) == 0; total >>= 1) {
            cv = parent_output(stack.back(), cv).chaining_value();
            stack.pop_back();
        }
        stack.push_back(cv);
    }
    Output out = chunk_output(p + (chunks - 1) * kChunk, n - (chunks - 1) * kChunk, chunks - 1);
    while (!stack.empty()) {
        out = parent_output(stack.back(), out.chaining_value());
        stack.pop_back();
    }
    Words16 root = compress(out.cv, out.block, 0, out.len, out.flags | kRoot);
    std::array<uint8_t, 32> digest;
    for (int i = 0; i < 8; ++i)
        for (int b = 0; b < 4; ++b) digest[4 * i + b] = uint8_t(root[i] >> (8 * b));
    return digest;
}

std::string hex_prefix(std::string_view data, size_t bytes) {
    static constexpr char kHex[] = "0123456789abcdef";
    const std::array<uint8_t, 32> d = hash(data);
    std::string out;
    for (size_t i = 0; i < bytes && i < d.size(); ++i) {
        out.push_back(kHex[d[i] >> 4]);
        out.push_back(kHex[d[i] & 15]);
    }
    return out;
}

}  // namespace cachekit::blake3
