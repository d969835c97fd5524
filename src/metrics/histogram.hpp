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
    uint64_t sum_micro() const noexcept { return sum_micro_.load(std::memory_order_relaxed); }

private:
    std::array<double, N> bounds_;
    std::array<std::atomic<uint64_t>, N + 1> counts_{};
    std::atomic<uint64_t> sum_micro_{0};
};

// A histogram's values at one moment, as plain numbers (they add and subtract).
template <size_t N>
struct HistogramCounts {
    std::array<uint64_t, N + 1> buckets{};  // [N]: above the last bound
    uint64_t sum_micro = 0;

    static HistogramCounts read(const Histogram<N> &h) noexcept {
        HistogramCounts c;
        for (size_t i = 0; i <= N; ++i) c.buckets[i] = h.count_at(i);
        c.sum_micro = h.sum_micro();
        return c;
    }
    uint64_t count() const noexcept {
        uint64_t n = 0;
        for (uint64_t b : buckets) n += b;
        return n;
    }
    double sum() const noexcept { return double(sum_micro) / 1e6; }
    HistogramCounts &operator+=(const HistogramCounts &o) noexcept {
        for (size_t i = 0; i <= N; ++i) buckets[i] += o.buckets[i];
        sum_micro += o.sum_micro;
        return *this;
    }
    HistogramCounts &operator-=(const HistogramCounts &o) noexcept {
        for (size_t i = 0; i <= N; ++i) buckets[i] -= o.buckets[i];
        sum_micro -= o.sum_micro;
        return *this;
    }
};

inline constexpr std::array<double, 14> kLatencyBucketsMs = {0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000};
inline constexpr std::array<double, 10> kSizeBucketsBytes = {64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216};

}  // namespace cachekit::metrics
