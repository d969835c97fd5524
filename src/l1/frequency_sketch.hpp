// The popularity estimate behind TinyLFU admission (see admission.hpp): a
// count-min sketch of 4-bit counters, 16 to a 64-bit word. A key's 4
// counters all lie in one 64-byte block (one cache line: a read touches one
// line, not four), each in its own pair of the block's 8 words. A key's
// estimate is the least of its 4 counters (collisions only ever inflate a
// counter). Counters saturate at 15; after `sample` increments every
// counter is halved ("aging"), so the estimate follows recent popularity.
//
// Every read of the L1 calls increment(), including hits on the lock-free
// path, so it must be cheap: the words are relaxed atomics updated by a load
// and a store (no locked read-modify-write). A race loses a count, never
// tears or overflows a counter, and TSan sees no data race. Aging halves word
// by word while others increment; a count landing between a word's load and
// store is lost, which is harmless.
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

    // Sized for about `capacity` distinct keys (a counter a key per "row",
    // at least 64); ages after `sample` increments (0: 10 x the width, as
    // TinyLFU suggests).
    explicit FrequencySketch(size_t capacity, uint64_t sample = 0);

    void increment(uint32_t hash) noexcept;
    unsigned estimate(uint32_t hash) const noexcept;

    size_t width() const noexcept { return blocks_ * 32; }  // counters per "row" (128 a block)
    uint64_t sample() const noexcept { return sample_; }
    uint64_t agings() const noexcept { return agings_.load(std::memory_order_relaxed); }
    size_t memory_bytes() const noexcept { return blocks_ * sizeof(Block); }

private:
    struct alignas(64) Block {
        std::atomic<uint64_t> words[8];
    };
    // Counter `row` of a key: its word and the nibble's shift within it.
    std::atomic<uint64_t> &locate(uint32_t hash, unsigned row, unsigned *shift) const noexcept;
    void age() noexcept;

    size_t blocks_;      // a power of two
    uint64_t sample_;
    std::unique_ptr<Block[]> table_;
    std::atomic<uint64_t> additions_{0};
    std::atomic<uint64_t> agings_{0};
};

}  // namespace cachekit::l1
