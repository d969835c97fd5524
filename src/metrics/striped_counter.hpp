// A counter cheap to bump from many threads: each thread adds to one of a
// few cache-line-padded cells (chosen once per thread), and a read sums the
// cells. Totals are exact: every add lands in exactly one cell.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

namespace cachekit::metrics {

inline unsigned this_thread_cell() noexcept {
    static std::atomic<unsigned> next{0};
    thread_local unsigned cell = next.fetch_add(1, std::memory_order_relaxed);
    return cell;
}

class StripedCounter {
public:
    void add(uint64_t n = 1) noexcept {
        cells_[this_thread_cell() % kCells].value.fetch_add(n, std::memory_order_relaxed);
    }
    uint64_t total() const noexcept {
        uint64_t sum = 0;
        for (const Cell &c : cells_) sum += c.value.load(std::memory_order_relaxed);
        return sum;
    }

private:
    static constexpr unsigned kCells = 8;
    struct alignas(64) Cell {
        std::atomic<uint64_t> value{0};
    };
    std::array<Cell, kCells> cells_{};
};

}  // namespace cachekit::metrics
