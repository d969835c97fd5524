// 8 threads of mixed operations on one cache (gets, puts with and without
// tickets, TTLs that expire under the real clock, invalidations of keys,
// namespaces and everything, a sweeper running every 2 ms, a 1 MiB budget so
// eviction crosses shards). Checks: every hit returns a value written for
// that key, the budget is never exceeded, and the counters are exact once the
// threads have joined. Meant to run clean under TSan.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "l1/l1_cache.hpp"
#include "util/buffer.hpp"

#include "cmocka_cpp.hpp"  // last: it defines a fail() macro

using namespace cachekit;
using namespace cachekit::l1;

namespace {

constexpr int kThreads = 8;
constexpr int kOpsPerThread = 25000;
constexpr uint64_t kBudget = uint64_t(1) << 20;

struct Tally {
    uint64_t gets = 0, hits = 0, puts = 0, stored = 0, dropped = 0, too_large = 0, bad = 0;
};

std::string key_of(uint64_t i) { return "key:" + std::to_string(i); }

// The value names its key, so a hit can be checked without shared state.
std::string value_of(const std::string &key, uint64_t n, size_t len) {
    std::string v = key + "|" + std::to_string(n) + "|";
    if (v.size() < len) v.append(len - v.size(), char('a' + n % 26));
    return v;
}

bool value_ok(const std::string &key, std::string_view v) {
    return v.size() > key.size() && v.substr(0, key.size()) == key && v[key.size()] == '|';
}

const char *const kNamespaces[] = {"", "n1", "n2", "n3", "n4"};

void worker(L1Cache &c, int id, Tally &t) {
    std::mt19937_64 rng(uint64_t(id) * 7919 + 1);
    Buffer out;
    for (int op = 0; op < kOpsPerThread; ++op) {
        uint64_t r = rng() % 1000;
        // invalidate_namespace() and clear() one time in 10000 each, so the
        // budget fills up and eviction runs.
        if (r >= 970 && r < 974 && rng() % 10 != 0) r = 0;
        std::string key = key_of(rng() % 3000);
        if (r < 600 || r >= 972) {
            ++t.gets;
            if (c.get(key, out.get())) {
                ++t.hits;
                if (!value_ok(key, out.view())) ++t.bad;
            }
        } else if (r < 950) {
            ++t.puts;
            size_t len = rng() % 100 == 0 ? kBudget / 8 + 1 : 1 + rng() % 2000;
            uint64_t ttl = rng() % 3 != 0 ? 0 : 1000000 * (1 + rng() % 20);  // up to 20 ms
            std::string ns = kNamespaces[rng() % 5];
            FillTicket ticket = rng() % 2 ? c.begin_fill() : kNoTicket;
            switch (c.put(ns, key, value_of(key, rng(), len), ttl, ticket)) {
            case PutResult::Stored: ++t.stored; break;
            case PutResult::Invalidated: ++t.dropped; break;
            case PutResult::TooLarge: ++t.too_large; break;
            }
        } else if (r < 970) {
            c.invalidate(key);
        } else if (r < 971) {
            c.invalidate_namespace(kNamespaces[rng() % 5]);
        } else if (r < 972) {
            c.clear();
        }
    }
}

void test_stress(void **) {
    Options o;
    o.max_bytes = kBudget;
    o.shards = 16;
    o.sweep_interval_ms = 2;
    o.sweep_batch = 32;
    auto cache = std::make_unique<L1Cache>(o);
    L1Cache &c = *cache;
    std::vector<Tally> tallies(kThreads);
    std::atomic<bool> done{false};
    std::atomic<uint64_t> over_budget{0}, polls{0};
    std::thread monitor([&] {
        while (!done.load()) {
            Stats s = c.stats();
            if (s.bytes > kBudget || s.peak_bytes > kBudget) over_budget.fetch_add(1);
            polls.fetch_add(1);
            std::this_thread::yield();
        }
    });
    std::vector<std::thread> threads;
    for (int i = 0; i < kThreads; ++i) threads.emplace_back(worker, std::ref(c), i, std::ref(tallies[i]));
    for (auto &th : threads) th.join();
    done.store(true);
    monitor.join();

    // Let every TTL run out and sweep, so the background sweeper has nothing
    // left to change while the final state is compared.
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    c.sweep();

    Tally sum;
    for (const Tally &t : tallies) {
        sum.gets += t.gets;
        sum.hits += t.hits;
        sum.puts += t.puts;
        sum.stored += t.stored;
        sum.dropped += t.dropped;
        sum.too_large += t.too_large;
        sum.bad += t.bad;
    }
    Stats s = c.stats();
    std::vector<DebugEntry> all = c.debug_entries();
    uint64_t bytes = 0;
    for (const DebugEntry &d : all) bytes += entry_charge(d.key.size(), d.value_size);
    // Stop the sweeper before any assertion: a failing cmocka assertion
    // longjmps out of this function and would leave the thread running.
    cache.reset();

    std::printf("gets %llu hits %llu puts %llu stored %llu dropped %llu too_large %llu "
                "evictions %llu expirations %llu invalidations %llu polls %llu\n",
                (unsigned long long)sum.gets, (unsigned long long)sum.hits,
                (unsigned long long)sum.puts, (unsigned long long)sum.stored,
                (unsigned long long)sum.dropped, (unsigned long long)sum.too_large,
                (unsigned long long)s.evictions, (unsigned long long)s.expirations,
                (unsigned long long)s.invalidations, (unsigned long long)polls.load());
    assert_int_equal(sum.bad, 0);
    assert_int_equal(over_budget.load(), 0);
    assert_int_equal(s.hits, sum.hits);
    assert_int_equal(s.hits + s.misses, sum.gets);
    assert_int_equal(s.inserts, sum.stored);
    assert_int_equal(s.dropped_fills, sum.dropped);
    assert_int_equal(s.rejected_too_large, sum.too_large);
    assert_true(s.peak_bytes <= kBudget);
    assert_true(sum.hits > 0);
    assert_true(s.evictions > 0);
    assert_true(s.expirations > 0);
    // Every insert left at most once or is still there (replacing a key's
    // older copy is not counted, so this is an upper bound).
    assert_true(s.entries + s.evictions + s.expirations + s.invalidations <= s.inserts);
    assert_int_equal(all.size(), s.entries);
    assert_int_equal(bytes, s.bytes);
}

}  // namespace

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_stress)};
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
