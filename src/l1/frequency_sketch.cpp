#include "l1/frequency_sketch.hpp"

#include <bit>

namespace cachekit::l1 {

namespace {
constexpr auto kRelaxed = std::memory_order_relaxed;
constexpr size_t kCountersPerWord = 16;
// One odd multiplier per row: the rows index with independent-looking bits
// of the key's hash (whose low and high bits also pick bucket and shard).
constexpr uint64_t kRowSeed[FrequencySketch::kRows] = {0x9E3779B97F4A7C15ull, 0xC2B2AE3D27D4EB4Full,
                                                       0x165667B19E3779F9ull, 0xD6E8FEB86659FD93ull};
}  // namespace

FrequencySketch::FrequencySketch(size_t capacity, uint64_t sample) {
    size_t width = std::bit_ceil(capacity < 64 ? size_t(64) : capacity);
    row_mask_ = width - 1;
    words_ = kRows * width / kCountersPerWord;
    sample_ = sample != 0 ? sample : 10 * uint64_t(width);
    table_ = std::make_unique<std::atomic<uint64_t>[]>(words_);
    for (size_t i = 0; i < words_; ++i) table_[i].store(0, kRelaxed);
}

void FrequencySketch::locate(uint64_t hash, unsigned row, size_t *word, unsigned *shift) const noexcept {
    uint64_t h = (hash ^ (hash >> 29)) * kRowSeed[row];
    size_t counter = size_t(h >> 32) & row_mask_;
    size_t index = row * (row_mask_ + 1) + counter;
    *word = index / kCountersPerWord;
    *shift = unsigned(index % kCountersPerWord) * 4;
}

void FrequencySketch::increment(uint64_t hash) noexcept {
    bool added = false;
    for (unsigned row = 0; row < kRows; ++row) {
        size_t w;
        unsigned shift;
        locate(hash, row, &w, &shift);
        std::atomic<uint64_t> &word = table_[w];
        uint64_t cur = word.load(kRelaxed);
        while (((cur >> shift) & 0xF) < kMax) {
            if (word.compare_exchange_weak(cur, cur + (uint64_t(1) << shift), kRelaxed, kRelaxed)) {
                added = true;
                break;
            }
        }
    }
    if (!added) return;  // every counter saturated: the key is as popular as can be told
    uint64_t n = additions_.fetch_add(1, kRelaxed) + 1;
    // One thread claims the aging: the one that moves the count back.
    if (n >= sample_ && additions_.compare_exchange_strong(n, n / 2, kRelaxed, kRelaxed)) age();
}

unsigned FrequencySketch::estimate(uint64_t hash) const noexcept {
    unsigned least = kMax;
    for (unsigned row = 0; row < kRows; ++row) {
        size_t w;
        unsigned shift;
        locate(hash, row, &w, &shift);
        unsigned c = unsigned(table_[w].load(kRelaxed) >> shift) & 0xF;
        if (c < least) least = c;
    }
    return least;
}

void FrequencySketch::age() noexcept {
    for (size_t i = 0; i < words_; ++i) {
        uint64_t w = table_[i].load(kRelaxed);
        table_[i].store((w >> 1) & 0x7777777777777777ull, kRelaxed);
    }
    agings_.fetch_add(1, kRelaxed);
}

}  // namespace cachekit::l1
