// Issue 5, item 2: stale-while-revalidate through the public C API.
//  - past ttl x ratio (+-10 % jitter) a hit is stale: every reader still gets
//    the value, exactly one lookup carries refresh = 1 and a claim;
//  - that claim lands a new value with cachekit_cache_put_refresh;
//  - a claim that lost to an invalidation or a newer put gets
//    CACHEKIT_ENOTFOUND and stores nothing (the newer value stays);
//  - cachekit_cache_abandon_refresh lets a later stale hit claim again.
// Only outcomes are asserted, never times. Entries live 10 minutes and turn
// stale after 0.54..0.66 s (ratio 0.001); the tests wait, polling the
// cache's own clock, until that has certainly happened, so a slow run (under
// valgrind) waits longer but sees the same states.
#include "cache_test_util.hpp"

namespace {

using ct::Buf;
using ct::CacheHandle;

constexpr double kTtlSeconds = 600;
constexpr double kRatio = 0.001;
constexpr double kStaleAfter = kTtlSeconds * kRatio * 1.1 + 0.05;  // past the largest jittered threshold

CacheHandle swr_cache() {
    cachekit_cache_options o = ct::default_options();
    o.backend_url = "memory://";
    o.swr = CACHEKIT_ON;
    o.swr_threshold_ratio = kRatio;
    o.default_ttl_seconds = kTtlSeconds;
    return ct::new_cache(&o);
}

struct Read {
    int rc = 0;
    std::string bytes;
    cachekit_lookup info = CACHEKIT_LOOKUP_INIT;
};

Read read(cachekit_cache *c, const std::string &key) {
    Read r;
    Buf buf;
    r.rc = cachekit_cache_get(c, buf.get(), &r.info, "swr", key.data(), key.size());
    r.bytes = buf.str();
    return r;
}

void put(cachekit_cache *c, const std::string &key, const std::string &value) {
    CT_OK(cachekit_cache_put(c, "swr", key.data(), key.size(), value.data(), value.size(), CACHEKIT_TTL_DEFAULT));
}

void test_refreshes_exactly_once(void **) {
    CacheHandle cache = swr_cache();
    cachekit_cache *c = cache.get();
    const std::string key = "ns:swr:k:herd";
    const std::string v1 = ct::mp_str("first"), v2 = ct::mp_str("second");
    put(c, key, v1);
    Read fresh = read(c, key);
    assert_int_equal(fresh.rc, CACHEKIT_OK);
    assert_int_equal(fresh.info.refresh, 0);
    ct::wait_until_older_than(c, kStaleAfter);

    constexpr int kThreads = 16;
    std::vector<Read> reads(kThreads);
    std::atomic<int> ready{0};
    ct::Gate go;
    std::vector<std::thread> pool;
    for (int t = 0; t < kThreads; ++t)
        pool.emplace_back([&, t] {
            ready.fetch_add(1);
            go.wait();
            reads[size_t(t)] = read(c, key);
        });
    while (ready.load() < kThreads) std::this_thread::yield();
    go.open();
    for (auto &th : pool) th.join();

    int refreshers = 0;
    uint64_t claim = 0;
    for (const Read &r : reads) {
        assert_int_equal(r.rc, CACHEKIT_OK);
        assert_true(r.bytes == v1);  // the stale value is served to everyone
        assert_int_equal(r.info.source, CACHEKIT_SOURCE_L1);
        assert_true(r.info.age_seconds >= kStaleAfter);
        if (r.info.refresh) {
            ++refreshers;
            claim = r.info.refresh_claim;
        } else {
            assert_int_equal(r.info.refresh_claim, 0);
        }
    }
    assert_int_equal(refreshers, 1);
    assert_true(claim != 0);
    assert_int_equal(ct::stats_of(c, "swr").stale_served, kThreads);

    // The claimant lands the new value; later reads see it, fresh.
    CT_OK(cachekit_cache_put_refresh(c, "swr", key.data(), key.size(), v2.data(), v2.size(), CACHEKIT_TTL_DEFAULT, claim));
    Read after = read(c, key);
    assert_int_equal(after.rc, CACHEKIT_OK);
    assert_true(after.bytes == v2);
    assert_int_equal(after.info.refresh, 0);
    // A claim is good once.
    CT_EXPECT(CACHEKIT_ENOTFOUND, cachekit_cache_put_refresh(c, "swr", key.data(), key.size(), v1.data(), v1.size(),
                                                             CACHEKIT_TTL_DEFAULT, claim));
    after = read(c, key);
    assert_true(after.bytes == v2);
    cachekit_cache_stats s = ct::stats_of(c, "swr");
    assert_int_equal(s.refreshes, 1);
    assert_int_equal(s.stores, 2);
}

// The claim-race cases: keys put, then waited on until all are stale (and
// still minutes from expiring).
struct Stale {
    CacheHandle cache;
    cachekit_cache *c;
    std::vector<std::string> keys;
};

Stale stale_keys(std::initializer_list<const char *> names) {
    Stale s{swr_cache(), nullptr, {}};
    s.c = s.cache.get();
    for (const char *n : names) {
        s.keys.push_back(ct::shaped_key("swr", n));
        put(s.c, s.keys.back(), ct::mp_str(std::string("old ") + n));
    }
    ct::wait_until_older_than(s.c, kStaleAfter);
    return s;
}

uint64_t claim_refresh(cachekit_cache *c, const std::string &key) {
    Read r = read(c, key);
    assert_int_equal(r.rc, CACHEKIT_OK);
    if (!r.info.refresh) fail_msg("no refresh claim for %s (age %.3f s)", key.c_str(), r.info.age_seconds);
    assert_true(r.info.refresh_claim != 0);
    return r.info.refresh_claim;
}

void test_refresh_loses_to_invalidation_and_newer_writes(void **) {
    Stale s = stale_keys({"inv", "newer", "ns"});
    cachekit_cache *c = s.c;
    const std::string refreshed = ct::mp_str("refreshed");

    // Invalidated after the claim: nothing is stored, the key stays gone.
    const std::string &inv = s.keys[0];
    uint64_t claim = claim_refresh(c, inv);
    CT_OK(cachekit_cache_invalidate(c, "swr", inv.data(), inv.size()));
    CT_EXPECT(CACHEKIT_ENOTFOUND, cachekit_cache_put_refresh(c, "swr", inv.data(), inv.size(), refreshed.data(),
                                                             refreshed.size(), CACHEKIT_TTL_DEFAULT, claim));
    assert_int_equal(read(c, inv).rc, CACHEKIT_ENOTFOUND);

    // A newer put after the claim wins; the refresh is dropped.
    const std::string &newer = s.keys[1];
    const std::string newest = ct::mp_str("newer put");
    claim = claim_refresh(c, newer);
    put(c, newer, newest);
    CT_EXPECT(CACHEKIT_ENOTFOUND, cachekit_cache_put_refresh(c, "swr", newer.data(), newer.size(), refreshed.data(),
                                                             refreshed.size(), CACHEKIT_TTL_DEFAULT, claim));
    Read r = read(c, newer);
    assert_int_equal(r.rc, CACHEKIT_OK);
    assert_true(r.bytes == newest);

    // A namespace invalidation cancels the claim too.
    const std::string &nsk = s.keys[2];
    claim = claim_refresh(c, nsk);
    CT_OK(cachekit_cache_invalidate_namespace(c, "swr"));
    CT_EXPECT(CACHEKIT_ENOTFOUND, cachekit_cache_put_refresh(c, "swr", nsk.data(), nsk.size(), refreshed.data(),
                                                             refreshed.size(), CACHEKIT_TTL_DEFAULT, claim));
    assert_int_equal(read(c, nsk).rc, CACHEKIT_ENOTFOUND);
    // (that also removed "newer": everything in namespace swr)
    assert_int_equal(read(c, newer).rc, CACHEKIT_ENOTFOUND);

    cachekit_cache_stats st = ct::stats_of(c, "swr");
    assert_int_equal(st.refreshes, 0);
    assert_int_equal(st.dropped_fills, 3);
}

void test_refresh_loses_to_clear(void **) {
    Stale s = stale_keys({"clear"});
    const std::string &key = s.keys[0];
    const std::string refreshed = ct::mp_str("refreshed");
    uint64_t claim = claim_refresh(s.c, key);
    CT_OK(cachekit_cache_clear(s.c));
    CT_EXPECT(CACHEKIT_ENOTFOUND, cachekit_cache_put_refresh(s.c, "swr", key.data(), key.size(), refreshed.data(),
                                                             refreshed.size(), CACHEKIT_TTL_DEFAULT, claim));
    assert_int_equal(read(s.c, key).rc, CACHEKIT_ENOTFOUND);
}

void test_abandon_lets_a_later_hit_claim(void **) {
    Stale s = stale_keys({"abandon"});
    cachekit_cache *c = s.c;
    const std::string &key = s.keys[0];
    uint64_t first = claim_refresh(c, key);
    // While the claim is held, other stale hits are served without one.
    for (int i = 0; i < 3; ++i) {
        Read r = read(c, key);
        assert_int_equal(r.rc, CACHEKIT_OK);
        assert_int_equal(r.info.refresh, 0);
    }
    CT_OK(cachekit_cache_abandon_refresh(c, key.data(), key.size(), first));
    uint64_t second = claim_refresh(c, key);
    assert_true(second != first);
    // The abandoned claim can no longer land anything; the new one can.
    const std::string v = ct::mp_str("by the second claim");
    CT_EXPECT(CACHEKIT_ENOTFOUND, cachekit_cache_put_refresh(c, "swr", key.data(), key.size(), v.data(), v.size(),
                                                             CACHEKIT_TTL_DEFAULT, first));
    CT_OK(cachekit_cache_put_refresh(c, "swr", key.data(), key.size(), v.data(), v.size(), CACHEKIT_TTL_DEFAULT, second));
    Read r = read(c, key);
    assert_true(r.bytes == v);
    assert_int_equal(r.info.refresh, 0);
}

// get_or_load on a stale L1 hit returns the stale value with the claim and
// does not run the loader.
void test_get_or_load_serves_stale_with_claim(void **) {
    Stale s = stale_keys({"gol"});
    const std::string &key = s.keys[0];
    auto loader = [](cachekit_load *, void *calls) {
        ++*static_cast<int *>(calls);
        return 1;
    };
    int calls = 0;
    Buf buf;
    cachekit_lookup info = CACHEKIT_LOOKUP_INIT;
    CT_OK(cachekit_cache_get_or_load(s.c, buf.get(), &info, "swr", key.data(), key.size(), CACHEKIT_TTL_DEFAULT, loader,
                                     &calls));
    assert_int_equal(calls, 0);
    assert_true(buf.str() == ct::mp_str("old gol"));
    assert_int_equal(info.source, CACHEKIT_SOURCE_L1);
    assert_int_equal(info.refresh, 1);
    CT_OK(cachekit_cache_abandon_refresh(s.c, key.data(), key.size(), info.refresh_claim));
}

// Without SWR a hit never asks for a refresh.
void test_no_refresh_when_swr_off(void **) {
    cachekit_cache_options o = ct::default_options();
    o.backend_url = "memory://";
    o.default_ttl_seconds = kTtlSeconds;
    o.swr_threshold_ratio = kRatio;  // ignored: SWR is off
    CacheHandle cache = ct::new_cache(&o);
    cachekit_cache *c = cache.get();
    const std::string key = "ns:swr:k:off";
    put(c, key, ct::mp_str("v"));
    ct::wait_until_older_than(c, kStaleAfter);
    Read r = read(c, key);
    assert_int_equal(r.rc, CACHEKIT_OK);
    assert_int_equal(r.info.refresh, 0);
    assert_int_equal(ct::stats_of(c).stale_served, 0);
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refreshes_exactly_once),
        cmocka_unit_test(test_refresh_loses_to_invalidation_and_newer_writes),
        cmocka_unit_test(test_refresh_loses_to_clear),
        cmocka_unit_test(test_abandon_lets_a_later_hit_claim),
        cmocka_unit_test(test_get_or_load_serves_stale_with_claim),
        cmocka_unit_test(test_no_refresh_when_swr_off),
    };
    return cmocka_run_group_tests_name("cache_swr", tests, nullptr, nullptr);
}
