// L1 benchmarks (issue 3), beside a naive baseline written here: one
// std::mutex, std::unordered_map, a std::list LRU and copy-out.
//
//   B1/naive, B1/l1        ns per hit, one thread (and B1/l1_precise_clock:
//                          L1 reading CLOCK_MONOTONIC instead of the coarse clock)
//   B1pair                 the same in alternating 50 ms slices; counters ns_naive,
//                          ns_l1, ratio of the median pair (what bench/run reports)
//   B1tlfu                 the L1 hit with TinyLFU admission against the default L1
//                          in alternating 50 ms slices; counters ns_lru, ns_tinylfu,
//                          ratio (tinylfu / lru) of the median pair
//   B2/<impl>/read100, B2/<impl>/read75 with threads:1 and threads:2
//                          aggregate operations per second (items_per_second)
//   B2pair/l1/read100, B2pair/l1/read75
//                          the same as paired 1-thread / 2-thread phases, back to
//                          back; counters ops_1thread, ops_2threads, ratio of the
//                          median pair (what bench/run reports as B2)
//   H1                     hit ratio on a Zipf trace larger than the budget:
//                          hit_ratio_l1 (default promotion), hit_ratio_l1_exact
//                          (promotion on every hit) and hit_ratio_lru (plain
//                          LRU at the same byte budget)
//   S1/sweep               longest shard-lock hold of one sweep batch (256)
//
// Data: 100,000 keys of 16-64 bytes, 100-byte values, Zipf(s = 1.0) reads,
// all hits; the index sequences are precomputed from fixed seeds so neither
// the RNG nor the Zipf sampling runs in the timed loops.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <ctime>
#include <list>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "l1/l1_cache.hpp"
#include "util/buffer.hpp"
#include "l1_workload.hpp"

using namespace cachekit;

namespace {

using namespace cachekit::benchdata;

// ---------------------------------------------------------------- data

constexpr size_t kKeys = 100000;
constexpr size_t kValueSize = 100;
constexpr size_t kSeqLen = size_t(1) << 20;

struct Data {
    std::vector<std::string> keys = make_keys(kKeys, 1);
    std::vector<uint32_t> seq = zipf_sequence(kKeys, 1.0, kSeqLen, 2);
    std::vector<uint8_t> op;  // 0..99 per step: < 75 is a read in read75
    std::string value = std::string(kValueSize, 'v');
    std::unique_ptr<l1::L1Cache> l1;
    std::unique_ptr<l1::L1Cache> l1_precise;  // CLOCK_MONOTONIC instead of the coarse clock
    std::unique_ptr<l1::L1Cache> l1_tinylfu;  // AdmissionPolicy::TinyLfu
    std::unique_ptr<NaiveLru> naive;

    Data() {
        std::mt19937_64 rng(3);
        op.resize(kSeqLen);
        for (auto &o : op) o = uint8_t(rng() % 100);
        l1 = std::make_unique<l1::L1Cache>(l1::Options());  // defaults: 100 MiB, 64 shards
        l1::Options precise;
        precise.precise_clock = true;
        l1_precise = std::make_unique<l1::L1Cache>(precise);
        l1::Options tinylfu;
        tinylfu.admission = l1::AdmissionPolicy::TinyLfu;
        l1_tinylfu = std::make_unique<l1::L1Cache>(tinylfu);
        naive = std::make_unique<NaiveLru>(l1::kDefaultMaxBytes);
        for (const std::string &k : keys) {
            l1->put("", k, value, 0);
            l1_precise->put("", k, value, 0);
            l1_tinylfu->put("", k, value, 0);
            naive->put(k, value);
        }
    }
};

Data &data() {
    static Data d;
    return d;
}

// ---------------------------------------------------------------- B1

void B1_naive(benchmark::State &state) {
    Data &d = data();
    Buffer out;
    size_t i = 0;
    for (auto _ : state) {
        bool hit = d.naive->get(d.keys[d.seq[i++ & (kSeqLen - 1)]], out.get());
        benchmark::DoNotOptimize(hit);
    }
    state.SetItemsProcessed(int64_t(state.iterations()));
}

void B1_l1(benchmark::State &state) {
    Data &d = data();
    Buffer out;
    size_t i = 0;
    for (auto _ : state) {
        bool hit = d.l1->get(d.keys[d.seq[i++ & (kSeqLen - 1)]], out.get());
        benchmark::DoNotOptimize(hit);
    }
    state.SetItemsProcessed(int64_t(state.iterations()));
}

void B1_l1_precise(benchmark::State &state) {
    Data &d = data();
    Buffer out;
    size_t i = 0;
    for (auto _ : state) {
        bool hit = d.l1_precise->get(d.keys[d.seq[i++ & (kSeqLen - 1)]], out.get());
        benchmark::DoNotOptimize(hit);
    }
    state.SetItemsProcessed(int64_t(state.iterations()));
}

// Paired B1: naive and L1 in alternating 50 ms slices, 21 pairs, reporting
// the pair with the median ratio. Best-of-N repetitions swing by 40% on this
// VM (its speed drifts within a second); adjacent slices see the same speed.
template <class Get>
double b1_slice_ns(Get get, size_t &i) {
    Buffer out;
    uint64_t n = 0;
    auto t0 = std::chrono::steady_clock::now();
    auto until = t0 + std::chrono::milliseconds(50);
    std::chrono::steady_clock::time_point t;
    do {
        for (int k = 0; k < 256; ++k, ++n) {
            bool hit = get(i++ & (kSeqLen - 1), out);
            benchmark::DoNotOptimize(hit);
        }
    } while ((t = std::chrono::steady_clock::now()) < until);
    return std::chrono::duration<double, std::nano>(t - t0).count() / double(n);
}

// 21 alternating slices of two gets per iteration; the counters are of the
// pair with the median ratio (b over a).
template <class GetA, class GetB>
void paired_slices(benchmark::State &state, GetA get_a, GetB get_b, const char *name_a, const char *name_b) {
    std::vector<std::pair<double, double>> pairs;  // (a, b) ns per hit
    size_t i_a = 0, i_b = 0;
    for (auto _ : state) {
        for (int r = 0; r < 21; ++r) {
            double a = b1_slice_ns(get_a, i_a);
            double b = b1_slice_ns(get_b, i_b);
            pairs.emplace_back(a, b);
        }
    }
    std::sort(pairs.begin(), pairs.end(),
              [](const auto &x, const auto &y) { return x.second / x.first < y.second / y.first; });
    const auto &mid = pairs[pairs.size() / 2];
    state.counters[name_a] = mid.first;
    state.counters[name_b] = mid.second;
    state.counters["ratio"] = mid.second / mid.first;
}

void B1_paired(benchmark::State &state) {
    Data &d = data();
    paired_slices(
        state, [&](size_t at, Buffer &out) { return d.naive->get(d.keys[d.seq[at]], out.get()); },
        [&](size_t at, Buffer &out) { return d.l1->get(d.keys[d.seq[at]], out.get()); }, "ns_naive", "ns_l1");
}

// The cost of TinyLFU on a hit: the same paired slices, default L1 against
// the L1 with admission (its reads also count in the frequency sketch).
void B1_tinylfu_paired(benchmark::State &state) {
    Data &d = data();
    paired_slices(
        state, [&](size_t at, Buffer &out) { return d.l1->get(d.keys[d.seq[at]], out.get()); },
        [&](size_t at, Buffer &out) { return d.l1_tinylfu->get(d.keys[d.seq[at]], out.get()); }, "ns_lru",
        "ns_tinylfu");
}

// ---------------------------------------------------------------- B2

template <bool kL1>
void B2(benchmark::State &state, int read_pct) {
    Data &d = data();
    Buffer out;
    size_t i = size_t(state.thread_index()) * (kSeqLen / 2 + 12345);  // threads walk apart
    for (auto _ : state) {
        size_t at = i++ & (kSeqLen - 1);
        const std::string &key = d.keys[d.seq[at]];
        if (d.op[at] < read_pct) {
            bool hit = kL1 ? d.l1->get(key, out.get()) : d.naive->get(key, out.get());
            benchmark::DoNotOptimize(hit);
        } else if (kL1) {
            d.l1->put("", key, d.value, 0);
        } else {
            d.naive->put(key, d.value);
        }
    }
    state.SetItemsProcessed(int64_t(state.iterations()));
}

void B2_l1_read100(benchmark::State &state) { B2<true>(state, 100); }
void B2_l1_read75(benchmark::State &state) { B2<true>(state, 75); }
void B2_naive_read100(benchmark::State &state) { B2<false>(state, 100); }
void B2_naive_read75(benchmark::State &state) { B2<false>(state, 75); }

// Paired B2: this VM's speed drifts by up to 2x between seconds, so the best
// 1-thread run and the best 2-thread run of separate repetitions need not
// come from comparable moments. Here each pair runs 1 thread then 2 threads
// back to back (150 ms each); of 9 pairs the one with the median ratio is
// reported, so the ratio is the median of paired ratios.
double b2_phase(int threads, int read_pct) {
    Data &d = data();
    std::atomic<bool> stop{false};
    std::atomic<uint64_t> total{0};
    std::vector<std::thread> workers;
    auto t0 = std::chrono::steady_clock::now();
    for (int t = 0; t < threads; ++t)
        workers.emplace_back([&, t] {
            Buffer out;
            uint64_t n = 0;
            size_t i = size_t(t) * (kSeqLen / 2 + 12345);
            while (!stop.load(std::memory_order_relaxed)) {
                for (int k = 0; k < 256; ++k, ++n) {
                    size_t at = i++ & (kSeqLen - 1);
                    const std::string &key = d.keys[d.seq[at]];
                    if (d.op[at] < read_pct) {
                        bool hit = d.l1->get(key, out.get());
                        benchmark::DoNotOptimize(hit);
                    } else {
                        d.l1->put("", key, d.value, 0);
                    }
                }
            }
            total.fetch_add(n);
        });
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    stop.store(true);
    for (auto &w : workers) w.join();
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return double(total.load()) / secs;
}

void B2_paired(benchmark::State &state, int read_pct) {
    std::vector<std::pair<double, double>> pairs;  // (1 thread, 2 threads) ops/s
    for (auto _ : state) {
        pairs.clear();
        for (int r = 0; r < 9; ++r) {
            double one = b2_phase(1, read_pct);
            double two = b2_phase(2, read_pct);
            pairs.emplace_back(one, two);
        }
    }
    std::sort(pairs.begin(), pairs.end(),
              [](const auto &a, const auto &b) { return a.second / a.first < b.second / b.first; });
    const auto &mid = pairs[pairs.size() / 2];
    state.counters["ops_1thread"] = mid.first;
    state.counters["ops_2threads"] = mid.second;
    state.counters["ratio"] = mid.second / mid.first;
}

void B2_paired_read100(benchmark::State &state) { B2_paired(state, 100); }
void B2_paired_read75(benchmark::State &state) { B2_paired(state, 75); }

// ---------------------------------------------------------------- H1

void H1(benchmark::State &state) {
    // 1,000,000 distinct keys, Zipf(1.0), 4,000,000 requests; a 16 MiB budget
    // holds about 6% of the keys. A miss is followed by a put (read-through).
    constexpr size_t kTraceKeys = 1000000, kTraceLen = 4000000;
    constexpr uint64_t kBudget = uint64_t(16) << 20;
    std::vector<std::string> keys = make_keys(kTraceKeys, 5);
    std::vector<uint32_t> trace = zipf_sequence(kTraceKeys, 1.0, kTraceLen, 6);
    std::string value(kValueSize, 'v');
    double l1_ratio = 0, l1_exact_ratio = 0, lru_ratio = 0;
    for (auto _ : state) {
        for (int variant = 0; variant < 2; ++variant) {
            l1::Options o;
            o.max_bytes = kBudget;
            o.sweep_interval_ms = 0;
            if (variant == 1) o.promote_interval_ns = 0;
            l1::L1Cache cache(o);
            uint64_t hits = 0;
            for (uint32_t k : trace) {
                if (cache.get(keys[k], nullptr)) ++hits;
                else cache.put("", keys[k], value, 0);
            }
            (variant == 0 ? l1_ratio : l1_exact_ratio) = double(hits) / double(kTraceLen);
        }
        NaiveLru lru(kBudget);
        Buffer out;
        uint64_t hits = 0;
        for (uint32_t k : trace) {
            if (lru.get(keys[k], out.get())) ++hits;
            else lru.put(keys[k], value);
        }
        lru_ratio = double(hits) / double(kTraceLen);
    }
    state.counters["hit_ratio_l1"] = l1_ratio;
    state.counters["hit_ratio_l1_exact"] = l1_exact_ratio;
    state.counters["hit_ratio_lru"] = lru_ratio;
}

// ---------------------------------------------------------------- S1

void S1_sweep(benchmark::State &state) {
    // 1,000,000 expired entries in 64 shards, removed by one sweep.
    l1::ManualClock clock;
    double hold_us = 0, removed = 0, batch_cpu_us = 0;
    for (auto _ : state) {
        state.PauseTiming();
        l1::Options o;
        o.max_bytes = uint64_t(1) << 30;
        o.sweep_interval_ms = 0;
        o.clock = &clock;
        auto cache = std::make_unique<l1::L1Cache>(o);
        for (int i = 0; i < 1000000; ++i)
            cache->put("", "key:" + std::to_string(i), std::string_view("0123456789", 10), 1000 + i % 1000);
        clock.advance(1000000);
        state.ResumeTiming();
        timespec c0, c1;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
        removed = double(cache->sweep());
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
        state.PauseTiming();
        double cpu_us = double(c1.tv_sec - c0.tv_sec) * 1e6 + double(c1.tv_nsec - c0.tv_nsec) / 1e3;
        // Batches of 256 per shard (64 shards), plus one closing batch each.
        batch_cpu_us = cpu_us / (removed / 256.0 + 64.0);
        hold_us = double(cache->stats().sweep_max_hold_ns) / 1000.0;
        cache.reset();
        state.ResumeTiming();
    }
    state.counters["removed"] = removed;
    state.counters["max_hold_us"] = hold_us;          // wall clock: includes preemption
    state.counters["avg_batch_cpu_us"] = batch_cpu_us;  // CPU time per lock hold
}

}  // namespace

BENCHMARK(B1_naive)->Name("B1/naive");
BENCHMARK(B1_l1)->Name("B1/l1");
BENCHMARK(B1_l1_precise)->Name("B1/l1_precise_clock");
BENCHMARK(B1_paired)->Name("B1pair")->Iterations(1)->Repetitions(1)->UseRealTime();
BENCHMARK(B1_tinylfu_paired)->Name("B1tlfu")->Iterations(1)->Repetitions(1)->UseRealTime();
BENCHMARK(B2_l1_read100)->Name("B2/l1/read100")->Threads(1)->Threads(2)->UseRealTime();
BENCHMARK(B2_l1_read75)->Name("B2/l1/read75")->Threads(1)->Threads(2)->UseRealTime();
BENCHMARK(B2_naive_read100)->Name("B2/naive/read100")->Threads(1)->Threads(2)->UseRealTime();
BENCHMARK(B2_naive_read75)->Name("B2/naive/read75")->Threads(1)->Threads(2)->UseRealTime();
BENCHMARK(B2_paired_read100)->Name("B2pair/l1/read100")->Iterations(1)->Repetitions(1)->UseRealTime();
BENCHMARK(B2_paired_read75)->Name("B2pair/l1/read75")->Iterations(1)->Repetitions(1)->UseRealTime();
BENCHMARK(H1)->Name("H1")->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(S1_sweep)->Name("S1/sweep")->Iterations(1)->Unit(benchmark::kMillisecond);

int main(int argc, char **argv) {
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    data();  // build and load the data set before any timing
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
