// H2 (issue 18): the L1's hit ratio (default LRU eviction) beside exact LRU and beside
// the same L1 with W-TinyLFU admission (l1::AdmissionPolicy::TinyLfu, src/l1/admission.hpp)
// at the same byte budget, on three trace shapes generated here:
//   H2/zipf   Zipf(0.8) over 100,000 keys
//   H2/scan   the same Zipf, interrupted every 50,000 requests by a scan of 20,000
//             keys that are never read again
//   H2/loop   a loop over 1.5x as many keys as the budget holds
// and H1curve/<MiB>: H1's trace shape (Zipf 1.0, 200,000 keys) at budgets of 1-32 MiB,
// for bench/report's curve. Counters hit_ratio_l1, hit_ratio_lru, and hit_ratio_wtinylfu
// (the L1 with TinyLFU admission; the counter keeps the name bench/report reads).
// Every miss is followed by a put (read-through); values are 100 bytes.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "l1_workload.hpp"

using namespace cachekit;
using namespace cachekit::benchdata;

namespace {

constexpr size_t kValueSize = 100;
constexpr size_t kTraceLen = 1000000;
constexpr uint64_t kBudget = uint64_t(2) << 20;  // 2 MiB: about 10% of H2's 100,000 keys

l1::Options l1_options(uint64_t budget, l1::AdmissionPolicy admission) {
    l1::Options o;
    o.max_bytes = budget;
    o.sweep_interval_ms = 0;
    o.admission = admission;
    return o;
}

size_t average_charge(const std::vector<std::string> &keys) {
    uint64_t sum = 0;
    for (const auto &k : keys) sum += l1::entry_charge(k.size(), kValueSize);
    return size_t(sum / keys.size());
}

std::vector<uint32_t> scan_trace(size_t zipf_keys, size_t scan_len) {
    std::vector<uint32_t> zipf = zipf_sequence(zipf_keys, 0.8, kTraceLen, 12);
    std::vector<uint32_t> out;
    uint32_t next_scan_key = uint32_t(zipf_keys);  // scan keys come after the Zipf ones, each used once
    for (size_t i = 0; i < zipf.size(); ++i) {
        if (i % 50000 == 0 && i)
            for (size_t s = 0; s < scan_len; ++s) out.push_back(next_scan_key++);
        out.push_back(zipf[i]);
    }
    return out;
}

std::vector<uint32_t> loop_trace(size_t loop_keys) {
    std::vector<uint32_t> out(kTraceLen);
    for (size_t i = 0; i < kTraceLen; ++i) out[i] = uint32_t(i % loop_keys);
    return out;
}

void replay(benchmark::State &state, const std::vector<std::string> &keys, const std::vector<uint32_t> &trace,
            uint64_t budget) {
    std::string value(kValueSize, 'v');
    double l1_ratio = 0, lru_ratio = 0, tlfu_ratio = 0;
    for (auto _ : state) {
        l1::L1Cache l1cache(l1_options(budget, l1::AdmissionPolicy::Lru));
        l1::L1Cache tlfu(l1_options(budget, l1::AdmissionPolicy::TinyLfu));
        NaiveLru lru(budget);
        Buffer out;
        uint64_t l1_hits = 0, lru_hits = 0, tlfu_hits = 0;
        for (uint32_t k : trace) {
            if (l1cache.get(keys[k], nullptr)) ++l1_hits;
            else l1cache.put("", keys[k], value, 0);
            if (lru.get(keys[k], out.get())) ++lru_hits;
            else lru.put(keys[k], value);
            if (tlfu.get(keys[k], nullptr)) ++tlfu_hits;
            else tlfu.put("", keys[k], value, 0);
        }
        l1_ratio = double(l1_hits) / double(trace.size());
        lru_ratio = double(lru_hits) / double(trace.size());
        tlfu_ratio = double(tlfu_hits) / double(trace.size());
    }
    state.counters["hit_ratio_l1"] = l1_ratio;
    state.counters["hit_ratio_lru"] = lru_ratio;
    state.counters["hit_ratio_wtinylfu"] = tlfu_ratio;
}

void H2_zipf(benchmark::State &state) {
    static const auto keys = make_keys(100000, 11);
    static const auto trace = zipf_sequence(100000, 0.8, kTraceLen, 12);
    replay(state, keys, trace, kBudget);
}

void H2_scan(benchmark::State &state) {
    static const auto trace = scan_trace(100000, 20000);
    static const auto keys = make_keys(100000 + 20000 * (kTraceLen / 50000), 11);
    replay(state, keys, trace, kBudget);
}

void H2_loop(benchmark::State &state) {
    static const auto keys = make_keys(100000, 11);
    const size_t fits = size_t(kBudget / average_charge(keys));
    static const auto trace = loop_trace(fits + fits / 2);
    replay(state, keys, trace, kBudget);
}

void H1_curve(benchmark::State &state) {
    static const auto keys = make_keys(200000, 5);
    static const auto trace = zipf_sequence(200000, 1.0, kTraceLen, 6);
    replay(state, keys, trace, uint64_t(state.range(0)) << 20);
}

}  // namespace

BENCHMARK(H2_zipf)->Name("H2/zipf")->Iterations(1)->Repetitions(1)->Unit(benchmark::kMillisecond);
BENCHMARK(H2_scan)->Name("H2/scan")->Iterations(1)->Repetitions(1)->Unit(benchmark::kMillisecond);
BENCHMARK(H2_loop)->Name("H2/loop")->Iterations(1)->Repetitions(1)->Unit(benchmark::kMillisecond);
BENCHMARK(H1_curve)->Name("H1curve")->RangeMultiplier(2)->Range(1, 32)->Iterations(1)->Repetitions(1)->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
