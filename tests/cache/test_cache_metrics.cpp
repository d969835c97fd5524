// Issue 5, item 7: metric totals are exact under concurrency.
// 8 threads x 10,000 operations of known kinds on namespace "m" (a
// deterministic mix of puts, gets of present keys = L1 hits, gets of absent
// keys = misses, get_or_load of absent keys = loads, get_or_load of present
// keys = L1 hits without a load), plus a
// known number of operations on namespace "o" from the main thread:
// cachekit_cache_stats_get totals are exact for "m", for "o" and for all,
// and cachekit_cache_metrics_text carries the matching
// cache_operations_total lines.

#include "cache_test_util.hpp"
#include "prometheus_text.hpp"

namespace {

using ct::Buf;

constexpr int kThreads = 8;
constexpr int kOps = 10000;
constexpr int kPresent = 64;  // keys put before the threads start

std::string present_key(int i) { return "ns:m:func:m.f:args:present:" + std::to_string(i); }

struct Expected {
    uint64_t stores = 0, l1_hits = 0, misses = 0, loads = 0, invalidations = 0;
};

// The operation i of thread t, and what it adds to the totals.
// No invalidations run concurrently with the writes: an invalidation
// drops in-flight fills of every key sharing its hashed stripe (by design),
// which would make the store count depend on timing.
enum class Op { Put, GetPresent, GetAbsent, LoadAbsent, LoadPresent };

Op op_of(int i) {
    switch (i % 10) {
    case 0:
    case 1: return Op::Put;
    case 2:
    case 3:
    case 4:
    case 5: return Op::GetPresent;
    case 6:
    case 7: return Op::GetAbsent;
    case 8: return Op::LoadAbsent;
    default: return Op::LoadPresent;
    }
}

Expected expected_for_thread() {
    Expected e;
    for (int i = 0; i < kOps; ++i) {
        switch (op_of(i)) {
        case Op::Put: ++e.stores; break;
        case Op::GetPresent: ++e.l1_hits; break;
        case Op::GetAbsent: ++e.misses; break;
        case Op::LoadAbsent: ++e.misses, ++e.loads, ++e.stores; break;  // a miss, one load, its store
        case Op::LoadPresent: ++e.l1_hits; break;  // served from L1, the loader never runs
        }
    }
    return e;
}

int load_value(cachekit_load *load, void *) { return cachekit_load_set_value(load, "\xa6loaded", 7); }

void worker(cachekit_cache *c, int t, std::atomic<int> *errors) {
    Buf out;
    const std::string value = ct::mp_str("value of thread " + std::to_string(t));
    for (int i = 0; i < kOps; ++i) {
        int rc = -100, want = CACHEKIT_OK;
        std::string key;
        switch (op_of(i)) {
        case Op::Put:
            key = "ns:m:func:m.f:args:t" + std::to_string(t) + ":" + std::to_string(i % 100);
            rc = cachekit_cache_put(c, "m", key.data(), key.size(), value.data(), value.size(), CACHEKIT_TTL_DEFAULT);
            break;
        case Op::GetPresent:
            key = present_key((t * 7 + i) % kPresent);
            rc = cachekit_cache_get(c, out.get(), nullptr, "m", key.data(), key.size());
            break;
        case Op::GetAbsent:
            key = "ns:m:func:m.f:args:absent:" + std::to_string(t) + ":" + std::to_string(i);
            rc = cachekit_cache_get(c, out.get(), nullptr, "m", key.data(), key.size());
            want = CACHEKIT_ENOTFOUND;
            break;
        case Op::LoadAbsent:  // a distinct key each time: always a miss, then a load
            key = "ns:m:func:m.f:args:load:" + std::to_string(t) + ":" + std::to_string(i);
            rc = cachekit_cache_get_or_load(c, out.get(), nullptr, "m", key.data(), key.size(), CACHEKIT_TTL_DEFAULT,
                                            load_value, nullptr);
            break;
        case Op::LoadPresent:
            key = present_key((t * 13 + i) % kPresent);
            rc = cachekit_cache_get_or_load(c, out.get(), nullptr, "m", key.data(), key.size(), CACHEKIT_TTL_DEFAULT,
                                            load_value, nullptr);
            if (rc == CACHEKIT_OK && out.str() != ct::mp_str("present")) rc = -200;
            break;
        }
        if (rc != want) errors->fetch_add(1);
    }
}

void check(const cachekit_cache_stats &s, const Expected &e, const char *what) {
    if (s.stores != e.stores || s.l1_hits != e.l1_hits || s.misses != e.misses || s.loads != e.loads ||
        s.invalidations != e.invalidations)
        fail_msg("%s: stores %llu/%llu l1_hits %llu/%llu misses %llu/%llu loads %llu/%llu invalidations %llu/%llu", what,
                 (unsigned long long)s.stores, (unsigned long long)e.stores, (unsigned long long)s.l1_hits,
                 (unsigned long long)e.l1_hits, (unsigned long long)s.misses, (unsigned long long)e.misses,
                 (unsigned long long)s.loads, (unsigned long long)e.loads, (unsigned long long)s.invalidations,
                 (unsigned long long)e.invalidations);
    assert_int_equal(s.l2_hits, 0);
    assert_int_equal(s.load_errors + s.waits + s.dropped_fills + s.too_large, 0);
    assert_int_equal(s.backend_errors + s.timeouts + s.corrupt + s.tampered + s.wrong_key + s.downgrade, 0);
}

void expect_line(const std::string &text, const std::string &line) {
    if (!ct::contains(text, line + "\n")) fail_msg("metrics text lacks \"%s\"", line.c_str());
}

std::string op_line(const char *operation, const char *ns, const char *success, uint64_t v) {
    return std::string("cache_operations_total{operation=\"") + operation + "\",namespace=\"" + ns +
           "\",serializer=\"default\",success=\"" + success + "\"} " + std::to_string(v);
}

void test_exact_totals_under_concurrency(void **) {
    cachekit_cache_options o = ct::default_options();
    o.backend_url = "memory://";
    ct::CacheHandle cache = ct::new_cache(&o);
    cachekit_cache *c = cache.get();

    // Namespace "m": the present keys.
    const std::string pv = ct::mp_str("present");
    for (int i = 0; i < kPresent; ++i) {
        const std::string k = present_key(i);
        CT_OK(cachekit_cache_put(c, "m", k.data(), k.size(), pv.data(), pv.size(), CACHEKIT_TTL_DEFAULT));
    }
    // Namespace "o": 30 puts, 20 hits, 10 misses, 2 invalidations.
    Buf out;
    for (int i = 0; i < 30; ++i) {
        const std::string k = "ns:o:k:" + std::to_string(i);
        CT_OK(cachekit_cache_put(c, "o", k.data(), k.size(), pv.data(), pv.size(), CACHEKIT_TTL_DEFAULT));
    }
    for (int i = 0; i < 20; ++i) {
        const std::string k = "ns:o:k:" + std::to_string(i);
        CT_OK(cachekit_cache_get(c, out.get(), nullptr, "o", k.data(), k.size()));
    }
    for (int i = 0; i < 10; ++i) {
        const std::string k = "ns:o:absent:" + std::to_string(i);
        CT_EXPECT(CACHEKIT_ENOTFOUND, cachekit_cache_get(c, out.get(), nullptr, "o", k.data(), k.size()));
    }
    CT_OK(cachekit_cache_invalidate(c, "o", "ns:o:k:0", 8));
    CT_OK(cachekit_cache_invalidate(c, "o", "ns:o:k:1", 8));

    std::atomic<int> errors{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < kThreads; ++t) pool.emplace_back(worker, c, t, &errors);
    for (auto &th : pool) th.join();  // (the workers do not assert)
    assert_int_equal(errors.load(), 0);

    Expected per = expected_for_thread();
    Expected m;
    m.stores = per.stores * kThreads + kPresent;
    m.l1_hits = per.l1_hits * kThreads;
    m.misses = per.misses * kThreads;
    m.loads = per.loads * kThreads;
    m.invalidations = per.invalidations * kThreads;
    assert_int_equal(m.stores + m.l1_hits + m.misses - per.loads * kThreads,
                     uint64_t(kThreads) * kOps + kPresent);  // every operation counted once (a load adds a store)
    Expected e_o;
    e_o.stores = 30;
    e_o.l1_hits = 20;
    e_o.misses = 10;
    e_o.invalidations = 2;
    Expected all;
    all.stores = m.stores + e_o.stores;
    all.l1_hits = m.l1_hits + e_o.l1_hits;
    all.misses = m.misses + e_o.misses;
    all.loads = m.loads;
    all.invalidations = m.invalidations + e_o.invalidations;

    check(ct::stats_of(c, "m"), m, "namespace m");
    check(ct::stats_of(c, "o"), e_o, "namespace o");
    check(ct::stats_of(c, nullptr), all, "all namespaces");
    cachekit_cache_stats none = ct::stats_of(c, "never-used");
    check(none, Expected{}, "unused namespace");

    // The same numbers in the Prometheus text.
    Buf text;
    CT_OK(cachekit_cache_metrics_text(c, text.get()));
    const std::string t = text.str();
    assert_true(ct::contains(t, "# TYPE cache_operations_total counter\n"));
    expect_line(t, op_line("get", "m", "true", m.l1_hits));
    expect_line(t, op_line("get", "m", "false", m.misses));
    expect_line(t, op_line("set", "m", "true", m.stores));
    expect_line(t, op_line("set", "m", "false", 0));
    expect_line(t, op_line("load", "m", "true", m.loads));
    expect_line(t, op_line("load", "m", "false", 0));
    expect_line(t, op_line("invalidate", "m", "true", m.invalidations));
    expect_line(t, op_line("get", "o", "true", 20));
    expect_line(t, op_line("get", "o", "false", 10));
    expect_line(t, op_line("set", "o", "true", 30));
    expect_line(t, op_line("invalidate", "o", "true", 2));
    expect_line(t, "cachekit_cache_hits_total{namespace=\"m\",tier=\"l1\"} " + std::to_string(m.l1_hits));
    expect_line(t, "cachekit_cache_hits_total{namespace=\"m\",tier=\"l2\"} 0");
    expect_line(t, "cachekit_cache_errors_total{namespace=\"m\",kind=\"tampered\"} 0");
    expect_line(t, "circuit_breaker_state{namespace=\"m\",state=\"closed\"} 0");
    // The stored-size histogram counted every write that reached L2.
    expect_line(t, "cache_operation_size_bytes_count{operation=\"set\",namespace=\"m\",serializer=\"default\"} " +
                       std::to_string(m.stores));
}

// Rejections are counted too: too large, dropped fills, load errors.
void test_failure_counters(void **) {
    cachekit_cache_options o = ct::default_options();
    o.backend_url = "none";
    o.max_value_bytes = 16;
    ct::CacheHandle cache = ct::new_cache(&o);
    cachekit_cache *c = cache.get();
    const std::string big = ct::mp_str(std::string(40, 'b'));
    CT_EXPECT(CACHEKIT_ETOOBIG, cachekit_cache_put(c, "f", "k", 1, big.data(), big.size(), CACHEKIT_TTL_DEFAULT));
    auto failing = [](cachekit_load *load, void *) {
        cachekit_load_set_error(load, "nope");
        return 1;
    };
    Buf out;
    for (int i = 0; i < 3; ++i)
        CT_EXPECT(CACHEKIT_EUSER, cachekit_cache_get_or_load(c, out.get(), nullptr, "f", "k", 1, CACHEKIT_TTL_DEFAULT,
                                                             failing, nullptr));
    cachekit_cache_stats s = ct::stats_of(c, "f");
    assert_int_equal(s.too_large, 1);
    assert_int_equal(s.load_errors, 3);
    assert_int_equal(s.misses, 3);
    assert_int_equal(s.stores, 0);
    Buf text;
    CT_OK(cachekit_cache_metrics_text(c, text.get()));
    expect_line(text.str(), op_line("set", "f", "false", 1));
    expect_line(text.str(), op_line("load", "f", "false", 3));
    // No backend: no breaker series.
    assert_false(ct::contains(text.str(), "circuit_breaker_state"));
}

// Where an L1 hit is counted: under the namespace its entry was put in, with
// or without a lookup report, plaintext (the engine counts it) or encrypted
// (the cache counts it once the entry opens).
void test_l1_hits_count_under_the_entry_namespace(void **) {
    for (bool encrypted : {false, true}) {
        cachekit_cache_options o = ct::default_options();
        o.backend_url = "none";
        if (encrypted) {
            o.encryption = CACHEKIT_ON;
            o.master_key_hex = ct::kMasterKeyHex;
        }
        ct::CacheHandle cache = ct::new_cache(&o);
        cachekit_cache *c = cache.get();
        const std::string v = ct::mp_str("v");
        CT_OK(cachekit_cache_put(c, "a", "ka", 2, v.data(), v.size(), CACHEKIT_TTL_DEFAULT));
        Buf out;
        cachekit_lookup info = CACHEKIT_LOOKUP_INIT;
        for (int i = 0; i < 3; ++i) CT_OK(cachekit_cache_get(c, out.get(), nullptr, "a", "ka", 2));
        CT_OK(cachekit_cache_get(c, out.get(), &info, "a", "ka", 2));
        assert_int_equal(info.source, CACHEKIT_SOURCE_L1);
        CT_OK(cachekit_cache_get(c, out.get(), nullptr, "b", "ka", 2));  // asked under another namespace
        CT_EXPECT(CACHEKIT_ENOTFOUND, cachekit_cache_get(c, out.get(), nullptr, "b", "kb", 2));
        assert_int_equal(ct::stats_of(c, "a").l1_hits, 5);
        assert_int_equal(ct::stats_of(c, "b").l1_hits, 0);
        assert_int_equal(ct::stats_of(c, "b").misses, 1);
        assert_int_equal(ct::stats_of(c, nullptr).l1_hits, 5);
        Buf text;
        CT_OK(cachekit_cache_metrics_text(c, text.get()));
        expect_line(text.str(), op_line("get", "a", "true", 5));
    }
}

using prometheus_text::namespace_labels;
using prometheus_text::sum_lines;

// Issue 12: at most 1,024 namespaces have series of their own; the least
// recently used fold into "__other__" and every count stays: totals over the
// series equal the calls made, plaintext (engine-counted hits) or encrypted.
void test_namespaces_beyond_the_cap_fold_into_other(void **) {
    constexpr int kNamespaces = 3000;
    for (bool encrypted : {false, true}) {
        cachekit_cache_options o = ct::default_options();
        o.backend_url = "none";
        if (encrypted) {
            o.encryption = CACHEKIT_ON;
            o.master_key_hex = ct::kMasterKeyHex;
        }
        ct::CacheHandle cache = ct::new_cache(&o);
        cachekit_cache *c = cache.get();
        const std::string v = ct::mp_str("v");
        Buf out;
        for (int i = 0; i < kNamespaces; ++i) {
            const std::string ns = "n" + std::to_string(i), k = "k" + std::to_string(i), absent = "a" + std::to_string(i);
            CT_OK(cachekit_cache_put(c, ns.c_str(), k.data(), k.size(), v.data(), v.size(), CACHEKIT_TTL_DEFAULT));
            CT_OK(cachekit_cache_get(c, out.get(), nullptr, ns.c_str(), k.data(), k.size()));
            CT_EXPECT(CACHEKIT_ENOTFOUND, cachekit_cache_get(c, out.get(), nullptr, ns.c_str(), absent.data(), absent.size()));
        }
        cachekit_cache_stats all = ct::stats_of(c, nullptr);
        assert_int_equal(all.stores, kNamespaces);
        assert_int_equal(all.l1_hits, kNamespaces);
        assert_int_equal(all.misses, kNamespaces);
        // The first namespaces keep their series, and so do the recent ones.
        for (const char *ns : {"n0", "n7", "n2999"}) {
            cachekit_cache_stats one = ct::stats_of(c, ns);
            assert_int_equal(one.stores, 1);
            assert_int_equal(one.l1_hits, 1);
            assert_int_equal(one.misses, 1);
        }
        assert_true(ct::stats_of(c, "__other__").stores > 0);

        Buf text;
        CT_OK(cachekit_cache_metrics_text(c, text.get()));
        const std::string t = text.str();
        assert_true(namespace_labels(t) <= 1025);
        assert_true(ct::contains(t, "namespace=\"__other__\""));
        assert_int_equal(sum_lines(t, "cache_operations_total{operation=\"get\"", "success=\"true\""), kNamespaces);
        assert_int_equal(sum_lines(t, "cache_operations_total{operation=\"get\"", "success=\"false\""), kNamespaces);
        assert_int_equal(sum_lines(t, "cache_operations_total{operation=\"set\"", "success=\"true\""), kNamespaces);
        assert_int_equal(sum_lines(t, "cachekit_cache_hits_total{", "tier=\"l1\""), kNamespaces);
    }
}

// A namespace name longer than 256 bytes never gets a series of its own.
void test_long_namespace_counts_in_other(void **) {
    cachekit_cache_options o = ct::default_options();
    o.backend_url = "none";
    ct::CacheHandle cache = ct::new_cache(&o);
    cachekit_cache *c = cache.get();
    const std::string ns(300, 'n');
    Buf out;
    CT_EXPECT(CACHEKIT_ENOTFOUND, cachekit_cache_get(c, out.get(), nullptr, ns.c_str(), "k", 1));
    assert_int_equal(ct::stats_of(c, "__other__").misses, 1);
    Buf text;
    CT_OK(cachekit_cache_metrics_text(c, text.get()));
    assert_false(ct::contains(text.str(), ns));
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_totals_under_concurrency),
        cmocka_unit_test(test_failure_counters),
        cmocka_unit_test(test_l1_hits_count_under_the_entry_namespace),
        cmocka_unit_test(test_namespaces_beyond_the_cap_fold_into_other),
        cmocka_unit_test(test_long_namespace_counts_in_other),
    };
    return cmocka_run_group_tests_name("cache_metrics", tests, nullptr, nullptr);
}
