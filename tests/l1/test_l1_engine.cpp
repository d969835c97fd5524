// Unit tests of the L1 engine pieces: TTL and lazy expiry on the manual
// clock, entry metadata, the oversize rule, replacement accounting,
// cross-shard eviction, bounded sweep batches, the sweeper thread (runs and
// stops promptly), option validation, and that entry_charge() is not below
// what malloc really uses.
#include <malloc.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "l1/l1_cache.hpp"
#include "util/buffer.hpp"
#include "util/error.hpp"

#include "cmocka_cpp.hpp"  // last: it defines a fail() macro

using namespace cachekit;
using namespace cachekit::l1;

namespace {

constexpr uint64_t kMs = 1000000;

Options manual(ManualClock &clock) {
    Options o;
    o.sweep_interval_ms = 0;
    o.max_bytes = 1u << 20;
    o.clock = &clock;
    return o;
}

void test_ttl_and_info(void **) {
    ManualClock clock;
    L1Cache c(manual(clock));
    uint64_t t0 = clock.now_ns();
    assert_int_equal(int(c.put("ns1", "k", "value", 10 * kMs)), int(PutResult::Stored));
    assert_int_equal(int(c.put("", "forever", "x", 0)), int(PutResult::Stored));
    Buffer out;
    EntryInfo info;
    assert_true(c.get("k", out.get(), &info));
    assert_true(out.view() == "value");
    assert_int_equal(info.inserted_at_ns, t0);
    assert_int_equal(info.deadline_ns, t0 + 10 * kMs);
    assert_true(info.ns == "ns1");
    assert_int_equal(info.value_size, 5);
    clock.advance(10 * kMs - 1);
    assert_true(c.get("k", nullptr));
    clock.advance(1);  // deadline reached: expired
    assert_false(c.get("k", out.get()));
    assert_true(out.view() == "value");  // a miss leaves the buffer alone
    assert_int_equal(c.stats().expirations, 1);
    clock.advance(uint64_t(1) << 50);
    assert_true(c.get("forever", out.get(), &info));
    assert_int_equal(info.deadline_ns, kNever);
    assert_true(info.ns.empty());
}

void test_oversize(void **) {
    ManualClock clock;
    L1Cache c(manual(clock));
    c.put("", "k", "small", 0);
    std::string big(c.max_entry_bytes(), 'x');  // with the overhead it is over 1/8
    assert_int_equal(int(c.put("", "k", big, 0)), int(PutResult::TooLarge));
    assert_false(c.get("k", nullptr));
    Stats s = c.stats();
    assert_int_equal(s.rejected_too_large, 1);
    assert_int_equal(s.entries, 0);
    assert_int_equal(s.bytes, 0);
    // The largest admitted value.
    size_t fit = c.max_entry_bytes() - entry_charge(1, 0);
    while (entry_charge(1, fit + 1) <= c.max_entry_bytes()) ++fit;
    assert_int_equal(int(c.put("", "k", std::string(fit, 'y'), 0)), int(PutResult::Stored));
    assert_int_equal(int(c.put("", "k", std::string(fit + 1, 'y'), 0)), int(PutResult::TooLarge));
}

void test_replace_accounting(void **) {
    ManualClock clock;
    L1Cache c(manual(clock));
    c.put("", "k", std::string(100, 'a'), 0);
    assert_int_equal(c.stats().bytes, entry_charge(1, 100));
    c.put("", "k", std::string(1000, 'b'), 5 * kMs);
    assert_int_equal(c.stats().bytes, entry_charge(1, 1000));
    c.put("", "k", std::string(10, 'c'), 0);
    Stats s = c.stats();
    assert_int_equal(s.bytes, entry_charge(1, 10));
    assert_int_equal(s.entries, 1);
    assert_int_equal(s.inserts, 3);
    clock.advance(10 * kMs);
    assert_true(c.get("k", nullptr));  // the last put has no TTL
}

// With many shards and the budget filled through one shard's keys, a put to
// an empty shard must evict from the others.
void test_cross_shard_eviction(void **) {
    ManualClock clock;
    Options o = manual(clock);
    o.shards = 64;
    L1Cache c(o);
    std::string v(60000, 'v');
    unsigned target = c.shard_of("k0");
    int stored = 0;
    for (int i = 0; stored < 40; ++i) {
        std::string k = "k" + std::to_string(i);
        if (c.shard_of(k) != target) continue;
        assert_int_equal(int(c.put("", k, v, 0)), int(PutResult::Stored));
        ++stored;
    }
    std::string other;
    for (int i = 0;; ++i) {
        other = "o" + std::to_string(i);
        if (c.shard_of(other) != target) break;
    }
    assert_int_equal(int(c.put("", other, v, 0)), int(PutResult::Stored));
    assert_true(c.get(other, nullptr));
    Stats s = c.stats();
    assert_true(s.evictions > 0);
    assert_true(s.bytes <= s.max_bytes);
    assert_true(s.peak_bytes <= s.max_bytes);
}

// Sweep in batches: never more than sweep_batch entries per lock hold.
void test_sweep_batches(void **) {
    ManualClock clock;
    Options o = manual(clock);
    o.max_bytes = 64u << 20;
    o.shards = 4;
    o.sweep_batch = 256;
    L1Cache c(o);
    for (int i = 0; i < 100000; ++i) c.put("", "key" + std::to_string(i), "v", (1 + i % 50) * kMs);
    for (int i = 0; i < 1000; ++i) c.put("keep", "keep" + std::to_string(i), "v", 0);
    clock.advance(100 * kMs);
    assert_int_equal(c.sweep(), 100000);
    Stats s = c.stats();
    assert_int_equal(s.entries, 1000);
    assert_int_equal(s.expirations, 100000);
    std::printf("sweep of 100000 expired entries, batch 256: longest lock hold %.1f us\n",
                double(s.sweep_max_hold_ns) / 1000.0);
    // Namespace reclaim by the sweep.
    c.invalidate_namespace("keep");
    assert_int_equal(c.stats().entries, 1000);  // O(1): nothing freed yet
    assert_int_equal(c.sweep(), 1000);
    assert_int_equal(c.stats().entries, 0);
    assert_int_equal(c.stats().bytes, 0);
    assert_int_equal(c.sweep(), 0);
}

void test_sweeper_thread(void **) {
    Options o;
    o.max_bytes = 1u << 20;
    o.sweep_interval_ms = 5;
    L1Cache c(o);
    c.put("", "short", "v", 1 * kMs);
    c.put("", "long", "v", 0);
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (c.stats().entries != 1 && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    assert_int_equal(c.stats().entries, 1);
    assert_int_equal(c.stats().expirations, 1);
    assert_true(c.get("long", nullptr));
}

void test_sweeper_stops_promptly(void **) {
    auto t0 = std::chrono::steady_clock::now();
    {
        Options o;
        o.sweep_interval_ms = 30000;
        L1Cache c(o);
        c.put("", "k", "v", 0);
    }
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
    assert_true(ms.count() < 1000);
}

void test_options(void **) {
    Options o;
    o.max_bytes = (1u << 20) - 1;
    try {
        L1Cache c(o);
        fail_msg("a budget under 1 MiB was accepted");
    } catch (const Error &e) {
        assert_int_equal(e.code(), CACHEKIT_EINVAL);
    }
    o = Options();
    o.shards = 5;
    o.sweep_interval_ms = 0;
    L1Cache c(o);
    assert_int_equal(c.shard_count(), 8);
    assert_int_equal(c.max_bytes(), 100u << 20);
    o.shards = 2048;
    try {
        L1Cache c2(o);
        fail_msg("2048 shards were accepted");
    } catch (const Error &e) {
        assert_int_equal(e.code(), CACHEKIT_EINVAL);
    }
}

// entry_charge() must cover what the allocator really spends per entry
// (glibc; skipped under sanitizers, whose allocators differ).
void test_charge_is_honest(void **) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    skip();
#else
    for (int ttl = 0; ttl < 2; ++ttl) {
        Options o;
        o.sweep_interval_ms = 0;
        o.shards = 16;
        malloc_trim(0);
        size_t before = mallinfo2().uordblks;
        uint64_t charged;
        {
            L1Cache c(o);
            for (int i = 0; i < 100000; ++i) {
                std::string k = "user:" + std::to_string(i * 7919) + ":profile";  // ~20 bytes
                c.put("", k, std::string(100, 'v'), ttl ? 3600 * 1000 * kMs : 0);
            }
            charged = c.stats().bytes;
            size_t used = mallinfo2().uordblks - before;
            std::printf("ttl %d: malloc in use %zu bytes, charged %llu (%.1f%%), per entry %.1f / %.1f\n",
                        ttl, used, (unsigned long long)charged, 100.0 * double(used) / double(charged),
                        double(used) / 100000, double(charged) / 100000);
            assert_true(used <= charged);
        }
    }
#endif
}

}  // namespace

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ttl_and_info),
        cmocka_unit_test(test_oversize),
        cmocka_unit_test(test_replace_accounting),
        cmocka_unit_test(test_cross_shard_eviction),
        cmocka_unit_test(test_sweep_batches),
        cmocka_unit_test(test_sweeper_thread),
        cmocka_unit_test(test_sweeper_stops_promptly),
        cmocka_unit_test(test_options),
        cmocka_unit_test(test_charge_is_honest),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
