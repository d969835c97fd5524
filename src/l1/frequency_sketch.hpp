// The popularity estimate behind TinyLFU admission (see admission.hpp): a
// count-min sketch of 4-bit counters, 4 rows, 16 counters to a 64-bit word.
// A key's estimate is the least of its 4 counters (collisions only ever
// inflate a counter). Counters saturate at 15; after `sample` increments every
// counter is halved ("aging"), so the estimate follows recent popularity.
//
// Every read of the L1 calls increment(), including hits on the lock-free
// path, so the words are relaxed atomics updated by compare-and-swap: a lost
// race costs one count, never a torn or overflowing counter, and TSan sees no
// data race. Aging halves word by word while others increment; an increment
// landing between a word's load and store is lost, which is harmless.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace cachekit::l1 {

class FrequencySketch {
public:
    static constexpr unsigned kMax = 15;  // a 4-bit counter's ceiling
    static constexpr unsigned kRows = 4;

    // Sized for about `capacity` distinct keys (at least 64 counters a row);
    // ages after `sample` increments (0: 10 x the width, as TinyLFU suggests).
    explicit FrequencySketch(size_t capacity, uint64_t sample = 0);

    void increment(uint64_t hash) noexcept;
    unsigned estimate(uint64_t hash) const noexcept;

    size_t width() const noexcept { return row_mask_ + 1; }    // counters a row
    uint64_t sample() const noexcept { return sample_; }
    uint64_t agings() const noexcept { return agings_.load(std::memory_order_relaxed); }
    size_t memory_bytes() const noexcept { return words_ * sizeof(uint64_t); }

private:
    // Counter `row` of a key: its word and the nibble's shift within it.
    void locate(uint64_t hash, unsigned row, size_t *word, unsigned *shift) const noexcept;
    void age() noexcept;

    size_t row_mask_;  // counters a row - 1 (a power of two)
    size_t words_;
    uint64_t sample_;
    std::unique_ptr<std::atomic<uint64_t>[]> table_;
    std::atomic<uint64_t> additions_{0};
    std::atomic<uint64_t> agings_{0};
};

}  // namespace cachekit::l1
