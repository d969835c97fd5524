#include "l1/frequency_sketch.hpp"

#include <bit>

namespace cachekit::l1 {

namespace {
constexpr auto kRelaxed = std::memory_order_relaxed;
// Two odd multipliers: one picks the block, the other the counters in it,
// from independent-looking bits of the key's hash (whose low and high bits
// also pick bucket and shard).
constexpr uint64_t kBlockSeed = 0x9E3779B97F4A7C15ull;
constexpr uint64_t kSlotSeed = 0xC2B2AE3D27D4EB4Full;
}  // namespace

FrequencySketch::FrequencySketch(size_t capacity, uint64_t sample) {
    // 4 counters a key in blocks of 128 counters: one block per 32 keys.
    size_t width = std::bit_ceil(capacity < 64 ? size_t(64) : capacity);
    blocks_ = width / 32;
    sample_ = sample != 0 ? sample : 10 * uint64_t(width);
    table_ = std::make_unique<Block[]>(blocks_);
    for (size_t b = 0; b < blocks_; ++b)
        for (auto &w : table_[b].words) w.store(0, kRelaxed);
}

std::atomic<uint64_t> &FrequencySketch::locate(uint32_t hash, unsigned row, unsigned *shift) const noexcept {
    uint64_t block = (uint64_t(hash) * kBlockSeed) >> 32;
    uint64_t slots = uint64_t(hash) * kSlotSeed;  // bits 32..63: 1 word bit + 4 nibble bits a row
    unsigned bits = unsigned(slots >> (32 + 5 * row));
    *shift = (bits >> 1 & 15) * 4;
    return table_[block & (blocks_ - 1)].words[row * 2 + (bits & 1)];
}

void FrequencySketch::increment(uint32_t hash) noexcept {
    bool added = false;
    for (unsigned row = 0; row < kRows; ++row) {
        unsigned shift;
        std::atomic<uint64_t> &word = locate(hash, row, &shift);
        // A load and a store, no read-modify-write: the stored word is a
        // snapshot with one nibble raised (never past 15), so a race only
        // loses another thread's concurrent count in this word.
        uint64_t cur = word.load(kRelaxed);
        if (((cur >> shift) & 0xF) < kMax) {
            word.store(cur + (uint64_t(1) << shift), kRelaxed);
            added = true;
        }
    }
    if (!added) return;  // every counter saturated: the key is as popular as can be told
    uint64_t seen = additions_.load(kRelaxed);  // lossy under races too: aging comes a little late
    if (seen + 1 < sample_) {
        additions_.store(seen + 1, kRelaxed);
        return;
    }
    // One thread claims the aging: the one that moves the count back.
    if (additions_.compare_exchange_strong(seen, sample_ / 2, kRelaxed, kRelaxed)) age();
}

unsigned FrequencySketch::estimate(uint32_t hash) const noexcept {
    unsigned least = kMax;
    for (unsigned row = 0; row < kRows; ++row) {
        unsigned shift;
        // Two statements: `shift` is set by locate(), so it must not be read in the same
        // expression (GCC's UBSan build read it first).
        const std::atomic<uint64_t> &word = locate(hash, row, &shift);
        unsigned c = unsigned(word.load(kRelaxed) >> shift) & 0xF;
        if (c < least) least = c;
    }
    return least;
}

void FrequencySketch::age() noexcept {
    for (size_t b = 0; b < blocks_; ++b)
        for (auto &word : table_[b].words) {
            uint64_t w = word.load(kRelaxed);
            word.store((w >> 1) & 0x7777777777777777ull, kRelaxed);
        }
    agings_.fetch_add(1, kRelaxed);
}

}  // namespace cachekit::l1
