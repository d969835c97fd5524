// TinyLFU admission (src/l1/admission.hpp, frequency_sketch.hpp): the
// sketch's estimates, aging and saturation; the policy keeps a hot set
// through a scan and gets hits on a loop larger than the cache where LRU
// gets none; the byte budget holds; invalidation, expiry, namespaces and
// fill tickets behave as under LRU; threads hitting and filling at once.
#include <atomic>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "l1/frequency_sketch.hpp"
#include "l1/l1_cache.hpp"
#include "util/buffer.hpp"
#include "util/error.hpp"

#include "cmocka_cpp.hpp"  // last: it defines a fail() macro

using namespace cachekit;
using namespace cachekit::l1;

namespace {

constexpr uint64_t kMs = 1000000;
const std::string kValue(100, 'v');

std::string key_of(size_t i) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "key-%07zu", i);
    return buf;
}

Options tinylfu_options(uint64_t max_bytes = 1u << 20) {
    Options o;
    o.max_bytes = max_bytes;
    o.sweep_interval_ms = 0;
    o.admission = AdmissionPolicy::TinyLfu;
    return o;
}

// A read-through access: a miss is followed by a put. True on a hit.
bool access(L1Cache &c, const std::string &key) {
    if (c.get(key, nullptr)) return true;
    c.put("", key, kValue, 0);
    return false;
}

void test_sketch_estimates(void **) {
    FrequencySketch s(1024);
    assert_int_equal(s.estimate(12345), 0);
    for (int i = 0; i < 5; ++i) s.increment(12345);
    for (int i = 0; i < 2; ++i) s.increment(777);
    // Count-min: never below the true count; with few keys, exact.
    assert_int_equal(s.estimate(12345), 5);
    assert_int_equal(s.estimate(777), 2);
    assert_int_equal(s.estimate(4242), 0);
}

void test_sketch_saturates(void **) {
    FrequencySketch s(1024);
    for (int i = 0; i < 100; ++i) s.increment(99);
    assert_int_equal(s.estimate(99), FrequencySketch::kMax);
    // Neighbouring counters in the same words are untouched by the saturation.
    unsigned others = 0;
    for (uint32_t k = 1000; k < 1100; ++k) others += s.estimate(k);
    assert_true(others < 100 * 2);
}

void test_sketch_ages(void **) {
    FrequencySketch s(4096, 100);  // ages after 100 counted increments
    for (int i = 0; i < 12; ++i) s.increment(1);
    assert_int_equal(s.estimate(1), 12);
    assert_int_equal(s.agings(), 0);
    for (uint32_t k = 2; s.agings() == 0 && k < 10000; ++k) s.increment(k * 7919u);
    assert_int_equal(s.agings(), 1);
    assert_true(s.estimate(1) <= 6 + 1);  // halved (collisions may add one)
    assert_true(s.estimate(1) >= 6);
}

void test_sketch_concurrent_increments(void **) {
    FrequencySketch s(4096, uint64_t(1) << 40);  // no aging
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&s, t] {
            for (int i = 0; i < 20000; ++i) s.increment(uint32_t(i % 2000) * 2654435761u + uint32_t(t == 0));
        });
    for (auto &th : threads) th.join();
    // Each key the three threads share was counted 30 times: at or near
    // saturation (a race may lose a count, never corrupt a counter).
    for (uint32_t k = 0; k < 2000; k += 97) {
        unsigned e = s.estimate(k * 2654435761u);
        assert_true(e >= 8 && e <= FrequencySketch::kMax);
    }
}

void test_scan_keeps_hot_set(void **) {
    for (AdmissionPolicy policy : {AdmissionPolicy::Lru, AdmissionPolicy::TinyLfu}) {
        Options o = tinylfu_options();
        o.admission = policy;
        L1Cache c(o);
        for (int round = 0; round < 20; ++round)
            for (size_t i = 0; i < 500; ++i) access(c, key_of(i));
        for (size_t i = 0; i < 20000; ++i) access(c, key_of(1000000 + i));  // a one-use scan
        size_t hits = 0;
        for (size_t i = 0; i < 500; ++i) hits += c.get(key_of(i), nullptr);
        Stats st = c.stats();
        std::printf("%s: %zu of 500 hot keys kept; admitted %llu, rejected %llu\n",
                    policy == AdmissionPolicy::Lru ? "lru" : "tinylfu", hits,
                    (unsigned long long)st.admitted, (unsigned long long)st.rejected_by_admission);
        if (policy == AdmissionPolicy::Lru) {
            assert_true(hits < 50);
            assert_int_equal(st.admitted + st.rejected_by_admission, 0);
        } else {
            assert_true(hits >= 450);
            assert_true(st.rejected_by_admission > 10000);
            assert_true(st.evictions >= st.rejected_by_admission);
        }
        assert_true(st.peak_bytes <= st.max_bytes);
    }
}

void test_loop_larger_than_cache(void **) {
    for (AdmissionPolicy policy : {AdmissionPolicy::Lru, AdmissionPolicy::TinyLfu}) {
        Options o = tinylfu_options();
        o.admission = policy;
        o.promote_interval_ns = 0;  // exact LRU: the loop's worst case
        L1Cache c(o);
        size_t fits = o.max_bytes / entry_charge(key_of(0).size(), kValue.size());
        size_t loop = fits + fits / 2;
        size_t hits = 0, reads = 0;
        for (int pass = 0; pass < 10; ++pass)
            for (size_t i = 0; i < loop; ++i) {
                bool hit = access(c, key_of(i));
                if (pass >= 2) {
                    hits += hit;
                    ++reads;
                }
            }
        double ratio = double(hits) / double(reads);
        std::printf("%s: loop of %zu keys over %zu that fit: hit ratio %.3f\n",
                    policy == AdmissionPolicy::Lru ? "lru" : "tinylfu", loop, fits, ratio);
        if (policy == AdmissionPolicy::Lru) assert_true(ratio < 0.02);
        else assert_true(ratio > 0.3);
        assert_true(c.stats().peak_bytes <= o.max_bytes);
    }
}

void test_budget_with_mixed_sizes(void **) {
    L1Cache c(tinylfu_options());
    uint64_t seed = 42;
    for (int i = 0; i < 40000; ++i) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        size_t k = size_t(seed >> 33) % 3000;
        // Mostly small values, now and then one near the 1/8 limit that needs
        // the room of many victims.
        size_t size = (seed >> 20) % 50 == 0 ? 120000 : 50 + (seed >> 40) % 400;
        if (!c.get(key_of(k), nullptr)) {
            PutResult r = c.put("", key_of(k), std::string(size, 'x'), 0);
            assert_true(r == PutResult::Stored);
        }
        Stats st = c.stats();
        assert_true(st.bytes <= st.max_bytes);
    }
    Stats st = c.stats();
    assert_true(st.peak_bytes <= st.max_bytes);
    assert_true(st.admitted > 0);
    assert_true(st.rejected_by_admission > 0);
    // The accounting matches the entries held.
    uint64_t sum = 0;
    for (const DebugEntry &d : c.debug_entries()) sum += entry_charge(d.key.size(), d.value_size);
    assert_int_equal(sum, st.bytes);
}

void test_segments(void **) {
    L1Cache c(tinylfu_options());
    // Fill past the window: older entries move to probation; a hit there
    // moves the entry to protected.
    for (size_t i = 0; i < 2000; ++i) c.put("", key_of(i), kValue, 0);
    auto segment_of = [&c](const std::string &key) {
        for (const DebugEntry &d : c.debug_entries())
            if (d.key == key) return int(d.segment);
        return -1;
    };
    assert_int_equal(segment_of(key_of(0)), int(kProbation));
    assert_true(c.get(key_of(0), nullptr));
    assert_int_equal(segment_of(key_of(0)), int(kProtected));
    // A new copy keeps its place.
    c.put("", key_of(0), "new", 0);
    assert_int_equal(segment_of(key_of(0)), int(kProtected));
    assert_true(c.frequency_estimate(key_of(0)) >= 1);
    L1Cache lru([] { Options o; o.sweep_interval_ms = 0; o.max_bytes = 1u << 20; return o; }());
    lru.put("", "k", "v", 0);
    assert_int_equal(int(lru.debug_entries().at(0).segment), int(kWindow));
    assert_int_equal(lru.frequency_estimate("k"), 0);
}

void test_invalidation_expiry_tickets(void **) {
    ManualClock clock;
    Options o = tinylfu_options();
    o.clock = &clock;
    L1Cache c(o);
    for (size_t i = 0; i < 2000; ++i) c.put(i % 2 ? "odd" : "even", key_of(i), kValue, i < 1000 ? 10 * kMs : 0);
    for (size_t i = 0; i < 2000; i += 3) c.get(key_of(i), nullptr);  // some to protected
    // Key invalidation, in every segment.
    assert_true(c.invalidate(key_of(3)));
    assert_false(c.get(key_of(3), nullptr));
    // Fill tickets: a fill begun before an invalidation is dropped.
    FillTicket t = c.begin_fill();
    c.invalidate(key_of(6));
    assert_int_equal(int(c.put("even", key_of(6), kValue, 0, t)), int(PutResult::Invalidated));
    assert_false(c.get(key_of(6), nullptr));
    // Namespace invalidation.
    c.invalidate_namespace("odd");
    for (size_t i = 1; i < 2000; i += 2) assert_false(c.get(key_of(i), nullptr));
    assert_true(c.get(key_of(1000), nullptr));
    // Expiry: the first thousand had a 10 ms TTL.
    clock.advance(10 * kMs);
    for (size_t i = 0; i < 1000; ++i) assert_false(c.get(key_of(i), nullptr));
    assert_true(c.get(key_of(1002), nullptr));
    c.sweep();
    c.clear();
    Stats st = c.stats();
    assert_int_equal(st.entries, 0);
    assert_int_equal(st.bytes, 0);
    assert_true(st.expirations > 0);
    assert_true(st.invalidations > 0);
}

void test_concurrent_hits_and_fills(void **) {
    Options o = tinylfu_options();
    o.shards = 4;  // contention on purpose
    L1Cache c(o);
    std::atomic<bool> bad{false};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&c, &bad, t] {
            Buffer out;
            uint64_t seed = uint64_t(t) + 1;
            for (int i = 0; i < 30000; ++i) {
                seed = seed * 6364136223846793005ull + 1442695040888963407ull;
                // Skewed: a few hot keys, many cold ones.
                size_t k = (seed >> 33) % 8 == 0 ? (seed >> 40) % 20000 : (seed >> 40) % 300;
                std::string key = key_of(k);
                if (c.get(key, out.get())) {
                    if (out.view() != key + kValue) bad = true;
                } else {
                    c.put("", key, key + kValue, i % 5 == 0 ? 50 * kMs : 0);
                }
                if (i % 1000 == 0) c.invalidate(key_of(k + 1));
            }
        });
    for (auto &th : threads) th.join();
    assert_false(bad.load());
    Stats st = c.stats();
    assert_true(st.peak_bytes <= st.max_bytes);
    uint64_t sum = 0;
    for (const DebugEntry &d : c.debug_entries()) sum += entry_charge(d.key.size(), d.value_size);
    assert_int_equal(sum, st.bytes);
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sketch_estimates),
        cmocka_unit_test(test_sketch_saturates),
        cmocka_unit_test(test_sketch_ages),
        cmocka_unit_test(test_sketch_concurrent_increments),
        cmocka_unit_test(test_scan_keeps_hot_set),
        cmocka_unit_test(test_loop_larger_than_cache),
        cmocka_unit_test(test_budget_with_mixed_sizes),
        cmocka_unit_test(test_segments),
        cmocka_unit_test(test_invalidation_expiry_tickets),
        cmocka_unit_test(test_concurrent_hits_and_fills),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
