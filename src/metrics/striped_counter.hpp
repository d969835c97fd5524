// A counter cheap to bump from many threads. Each of the first kCells live
// threads (by this_thread_index()) owns a cache-line-padded cell and bumps it
// with a plain load and store, no locked instruction; later threads add
// atomically to the shared half of a cell. A read sums every cell, so totals
// are exact: every add lands in exactly one place, and an owned cell has one
// writer at a time (an index passes to a new thread only after its previous
// owner exited, through the registry's mutex).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

#include "util/thread_index.hpp"

namespace cachekit::metrics {

class StripedCounter {
public:
    void add(uint64_t n = 1) noexcept {
        unsigned i = this_thread_index();
        if (i < kCells) {
            std::atomic<uint64_t> &c = cells_[i].owned;
            c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
        } else {
            cells_[i % kCells].shared.fetch_add(n, std::memory_order_relaxed);
        }
    }
    uint64_t total() const noexcept {
        uint64_t sum = 0;
        for (const Cell &c : cells_)
            sum += c.owned.load(std::memory_order_relaxed) + c.shared.load(std::memory_order_relaxed);
        return sum;
    }

private:
    static constexpr unsigned kCells = 8;
    struct alignas(64) Cell {
        std::atomic<uint64_t> owned{0};   // written by thread index i only
        std::atomic<uint64_t> shared{0};  // threads beyond kCells
    };
    std::array<Cell, kCells> cells_{};
};

}  // namespace cachekit::metrics
