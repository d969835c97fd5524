// A fixed-bucket histogram (Prometheus style: cumulative on output).
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace cachekit::metrics {

template <size_t N>
class Histogram {
public:
    explicit constexpr Histogram(const std::array<double, N> &bounds) : bounds_(bounds) {}

    void observe(double v) noexcept {
        size_t i = 0;
        while (i < N && v > bounds_[i]) ++i;
        counts_[i].fetch_add(1, std::memory_order_relaxed);
        // Sum kept in micro-units so it stays an integer atomic.
        sum_micro_.fetch_add(uint64_t(v * 1e6 + 0.5), std::memory_order_relaxed);
    }

    const std::array<double, N> &bounds() const noexcept { return bounds_; }
    uint64_t count_at(size_t i) const noexcept { return counts_[i].load(std::memory_order_relaxed); }  // i == N: +Inf
    uint64_t count() const noexcept {
        uint64_t c = 0;
        for (const auto &x : counts_) c += x.load(std::memory_order_relaxed);
        return c;
    }
    double sum() const noexcept { return double(sum_micro_.load(std::memory_order_relaxed)) / 1e6; }

private:
    std::array<double, N> bounds_;
    std::array<std::atomic<uint64_t>, N + 1> counts_{};
    std::atomic<uint64_t> sum_micro_{0};
};

inline constexpr std::array<double, 14> kLatencyBucketsMs = {0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000};
inline constexpr std::array<double, 10> kSizeBucketsBytes = {64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216};

}  // namespace cachekit::metrics
