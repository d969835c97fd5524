// cachekit_cache_get_for_load: a lookup whose miss hands out a load claim,
// for callers that compute on their own runtime (an async binding). The
// value lands with cachekit_cache_put_refresh(claim) only if no put or
// invalidation of the key (its namespace, the cache) came after the claim;
// abandon releases it. Every cache here shares one memory backend with a
// reader whose L1 is off, so "nothing in L2" is checked directly.
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "cache_test_util.hpp"

namespace {

const char *const kNs = "claims";

struct Pair {
    ct::BackendHandle backend = ct::open_backend("memory://");
    ct::CacheHandle cache;
    ct::CacheHandle l2_reader;  // L1 off: every get reads L2
    Pair() {
        cachekit_cache_options o = ct::default_options();
        o.backend = backend.get();
        cache = ct::new_cache(&o);
        o.l1 = CACHEKIT_OFF;
        l2_reader = ct::new_cache(&o);
    }
};

struct Claimed {
    int rc = 0;
    std::string bytes;
    cachekit_lookup info = CACHEKIT_LOOKUP_INIT;
};

Claimed get_for_load(cachekit_cache *c, const std::string &key, const char *ns = kNs) {
    Claimed r;
    ct::Buf out;
    r.rc = cachekit_cache_get_for_load(c, out.get(), &r.info, ns, key.data(), key.size());
    r.bytes = out.str();
    return r;
}

int land(cachekit_cache *c, const std::string &key, const std::string &value, uint64_t claim) {
    return cachekit_cache_put_refresh(c, kNs, key.data(), key.size(), value.data(), value.size(),
                                      CACHEKIT_TTL_DEFAULT, claim);
}

void put(cachekit_cache *c, const std::string &key, const std::string &value) {
    CT_OK(cachekit_cache_put(c, kNs, key.data(), key.size(), value.data(), value.size(), CACHEKIT_TTL_DEFAULT));
}

// What a get finds: its bytes, or "" on a miss.
std::string read(cachekit_cache *c, const std::string &key) {
    ct::Buf out;
    const int rc = cachekit_cache_get(c, out.get(), nullptr, kNs, key.data(), key.size());
    if (rc == CACHEKIT_ENOTFOUND) return "";
    CT_OK(rc);
    return out.str();
}

// L1 alone (peek never reads L2).
std::string read_l1(cachekit_cache *c, const std::string &key) {
    ct::Buf out;
    const int rc = cachekit_cache_peek(c, out.get(), nullptr, kNs, key.data(), key.size());
    return rc == CACHEKIT_OK ? out.str() : "";
}

// A miss claims; the claim lands the value in L1 and L2; a hit claims nothing.
void test_claim_then_land_stores(void **) {
    Pair p;
    const std::string key = ct::shaped_key(kNs, "land"), v = ct::mp_str("loaded");
    Claimed miss = get_for_load(p.cache.get(), key);
    assert_int_equal(miss.rc, CACHEKIT_ENOTFOUND);
    assert_int_equal(miss.info.refresh, 1);
    assert_true(miss.info.refresh_claim != 0);
    assert_int_equal(miss.info.source, CACHEKIT_SOURCE_NONE);
    CT_OK(land(p.cache.get(), key, v, miss.info.refresh_claim));
    assert_true(read_l1(p.cache.get(), key) == v);
    assert_true(read(p.l2_reader.get(), key) == v);

    Claimed hit = get_for_load(p.cache.get(), key);
    assert_int_equal(hit.rc, CACHEKIT_OK);
    assert_true(hit.bytes == v);
    assert_int_equal(hit.info.refresh, 0);
    assert_int_equal(hit.info.source, CACHEKIT_SOURCE_L1);
    // A claim lands once.
    assert_int_equal(land(p.cache.get(), key, ct::mp_str("again"), miss.info.refresh_claim), CACHEKIT_ENOTFOUND);
    assert_true(read(p.cache.get(), key) == v);
}

// An invalidation of the key after the claim: the value is stored nowhere.
void test_invalidated_key_keeps_the_load_out(void **) {
    Pair p;
    const std::string key = ct::shaped_key(kNs, "inv");
    Claimed miss = get_for_load(p.cache.get(), key);
    assert_int_equal(miss.rc, CACHEKIT_ENOTFOUND);
    CT_OK(cachekit_cache_invalidate(p.cache.get(), kNs, key.data(), key.size()));
    assert_int_equal(land(p.cache.get(), key, ct::mp_str("old"), miss.info.refresh_claim), CACHEKIT_ENOTFOUND);
    assert_true(read_l1(p.cache.get(), key).empty());
    assert_true(read(p.l2_reader.get(), key).empty());
    assert_int_equal(ct::stats_of(p.cache.get()).dropped_fills, 1);
}

// A namespace invalidation or a clear after the claim: the same.
void test_group_invalidation_keeps_the_load_out(void **) {
    Pair p;
    for (int clear = 0; clear < 2; ++clear) {
        const std::string key = ct::shaped_key(kNs, clear ? "clear" : "ns");
        Claimed miss = get_for_load(p.cache.get(), key);
        assert_int_equal(miss.rc, CACHEKIT_ENOTFOUND);
        if (clear) CT_OK(cachekit_cache_clear(p.cache.get()));
        else CT_OK(cachekit_cache_invalidate_namespace(p.cache.get(), kNs));
        assert_int_equal(land(p.cache.get(), key, ct::mp_str("old"), miss.info.refresh_claim), CACHEKIT_ENOTFOUND);
        assert_true(read_l1(p.cache.get(), key).empty());
        assert_true(read(p.l2_reader.get(), key).empty());
    }
}

// A put after the claim: the newer value stays, in both tiers.
void test_newer_put_wins(void **) {
    Pair p;
    const std::string key = ct::shaped_key(kNs, "put"), v2 = ct::mp_str("v2");
    Claimed miss = get_for_load(p.cache.get(), key);
    assert_int_equal(miss.rc, CACHEKIT_ENOTFOUND);
    put(p.cache.get(), key, v2);
    assert_int_equal(land(p.cache.get(), key, ct::mp_str("v1"), miss.info.refresh_claim), CACHEKIT_ENOTFOUND);
    assert_true(read_l1(p.cache.get(), key) == v2);
    assert_true(read(p.l2_reader.get(), key) == v2);
}

// Ordering, not exclusion: a second miss claims too and replaces the first
// claim (the newest load lands), as a get_or_load leader's claim does.
void test_newer_claim_replaces_older(void **) {
    Pair p;
    const std::string key = ct::shaped_key(kNs, "two"), v2 = ct::mp_str("second");
    Claimed first = get_for_load(p.cache.get(), key);
    Claimed second = get_for_load(p.cache.get(), key);
    assert_int_equal(second.rc, CACHEKIT_ENOTFOUND);
    assert_int_equal(second.info.refresh, 1);
    assert_true(second.info.refresh_claim != first.info.refresh_claim);
    CT_OK(land(p.cache.get(), key, v2, second.info.refresh_claim));
    assert_int_equal(land(p.cache.get(), key, ct::mp_str("first"), first.info.refresh_claim), CACHEKIT_ENOTFOUND);
    assert_true(read(p.l2_reader.get(), key) == v2);
}

// Counters: a miss, a load per landed (or dropped) value, a load error per
// abandon; an abandoned claim lands nothing, and the key can be claimed again.
void test_counters_and_abandon(void **) {
    Pair p;
    const std::string key = ct::shaped_key(kNs, "count"), v = ct::mp_str("v");
    Claimed miss = get_for_load(p.cache.get(), key);
    CT_OK(cachekit_cache_abandon_refresh(p.cache.get(), key.data(), key.size(), miss.info.refresh_claim));
    cachekit_cache_stats s = ct::stats_of(p.cache.get(), kNs);
    assert_int_equal(s.misses, 1);
    assert_int_equal(s.loads, 0);
    assert_int_equal(s.load_errors, 1);
    assert_int_equal(land(p.cache.get(), key, v, miss.info.refresh_claim), CACHEKIT_ENOTFOUND);
    assert_true(read(p.l2_reader.get(), key).empty());
    // The same abandon again is no new error (the claim is gone).
    CT_OK(cachekit_cache_abandon_refresh(p.cache.get(), key.data(), key.size(), miss.info.refresh_claim));

    Claimed again = get_for_load(p.cache.get(), key);
    assert_int_equal(again.rc, CACHEKIT_ENOTFOUND);
    CT_OK(land(p.cache.get(), key, v, again.info.refresh_claim));
    s = ct::stats_of(p.cache.get(), kNs);
    assert_int_equal(s.misses, 2);  // one per claim
    assert_int_equal(s.loads, 2);   // every value reported, the dropped one above too
    assert_int_equal(s.load_errors, 1);
    assert_int_equal(s.stores, 1);
    // An abandon after an invalidation cancelled the claim is still the load's error.
    Claimed third = get_for_load(p.cache.get(), ct::shaped_key(kNs, "count3"));
    const std::string k3 = ct::shaped_key(kNs, "count3");
    CT_OK(cachekit_cache_invalidate(p.cache.get(), kNs, k3.data(), k3.size()));
    CT_OK(cachekit_cache_abandon_refresh(p.cache.get(), k3.data(), k3.size(), third.info.refresh_claim));
    assert_int_equal(ct::stats_of(p.cache.get(), kNs).load_errors, 2);
}

// A value another cache wrote to L2 is a hit (L2 read once), no claim.
void test_l2_hit_claims_nothing(void **) {
    Pair p;
    const std::string key = ct::shaped_key(kNs, "l2"), v = ct::mp_str("there");
    put(p.l2_reader.get(), key, v);
    Claimed hit = get_for_load(p.cache.get(), key);
    assert_int_equal(hit.rc, CACHEKIT_OK);
    assert_true(hit.bytes == v);
    assert_int_equal(hit.info.refresh, 0);
    assert_int_equal(hit.info.source, CACHEKIT_SOURCE_L2);
}

// Refresh claims (SWR) and load claims do not mix up, and bad input is refused.
void test_bad_arguments(void **) {
    Pair p;
    const std::string key = ct::shaped_key(kNs, "bad");
    ct::Buf out;
    cachekit_lookup info = CACHEKIT_LOOKUP_INIT;
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL,
                          cachekit_cache_get_for_load(p.cache.get(), out.get(), nullptr, kNs, key.data(), key.size()));
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL,
                          cachekit_cache_get_for_load(p.cache.get(), nullptr, &info, kNs, key.data(), key.size()));
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL,
                          cachekit_cache_get_for_load(nullptr, out.get(), &info, kNs, key.data(), key.size()));
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL, cachekit_cache_get_for_load(p.cache.get(), out.get(), &info, kNs, "", 0));
    cachekit_lookup small = CACHEKIT_LOOKUP_INIT;
    small.struct_size = 4;
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL,
                          cachekit_cache_get_for_load(p.cache.get(), out.get(), &small, kNs, key.data(), key.size()));

    Claimed miss = get_for_load(p.cache.get(), key);
    const std::string v = ct::mp_str("v"), not_msgpack = "\xc1";
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL, land(p.cache.get(), key, not_msgpack, miss.info.refresh_claim));
    // A claim landed under another namespace than it was taken in.
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL, cachekit_cache_put_refresh(p.cache.get(), "other", key.data(), key.size(),
                                                                      v.data(), v.size(), CACHEKIT_TTL_DEFAULT,
                                                                      miss.info.refresh_claim));
    // The _ex form reports the same per call.
    cachekit_error err = CACHEKIT_ERROR_INIT;
    assert_int_equal(cachekit_cache_get_for_load_ex(p.cache.get(), out.get(), nullptr, kNs, key.data(), key.size(),
                                                    &err),
                     CACHEKIT_EINVAL);
    // The claim survived the refusals and still lands.
    CT_OK(land(p.cache.get(), key, v, miss.info.refresh_claim));
    assert_true(read(p.l2_reader.get(), key) == v);
}

// A claim taken before fork() holds nothing up in the child: the child's
// own miss claims the key and its value lands (exit code 0 = as expected).
void test_a_forked_child_claims_anew(void **) {
#if defined(__SANITIZE_THREAD__)
    // The child's store restarts the L1 sweeper: TSan does not support
    // starting threads in the child of a multi-threaded process.
    skip();
#endif
    Pair p;
    const std::string key = ct::shaped_key(kNs, "fork"), v = ct::mp_str("child");
    Claimed parent = get_for_load(p.cache.get(), key);
    assert_int_equal(parent.rc, CACHEKIT_ENOTFOUND);
    const pid_t pid = fork();
    if (pid == 0) {
        Claimed child = get_for_load(p.cache.get(), key);
        if (child.rc != CACHEKIT_ENOTFOUND || child.info.refresh != 1) _exit(2);
        if (child.info.refresh_claim == parent.info.refresh_claim) _exit(3);
        if (land(p.cache.get(), key, v, child.info.refresh_claim) != CACHEKIT_OK) _exit(4);
        _exit(read(p.cache.get(), key) == v ? 0 : 5);
    }
    assert_true(pid > 0);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    // The parent's claim is its own still (the child's memory backend is a copy).
    CT_OK(land(p.cache.get(), key, ct::mp_str("parent"), parent.info.refresh_claim));
}

// With no L2 the L1 is the store: a load racing a put of its key, in any
// interleaving, leaves the put's value (it is the newer write), never an
// empty key. Each round starts both writers together; no timing is assumed.
void test_l1_only_racing_load_and_put_keep_the_put(void **) {
    cachekit_cache_options o = ct::default_options();
    o.backend_url = "none";
    ct::CacheHandle cache = ct::new_cache(&o);
    const std::string loaded = ct::mp_str("loaded"), newer = ct::mp_str("put");
    for (int round = 0; round < 2000; ++round) {
        const std::string key = ct::shaped_key(kNs, "race" + std::to_string(round));
        std::atomic<int> ready{0};
        auto start_together = [&ready] {
            ready.fetch_add(1);
            while (ready.load() < 2) std::this_thread::yield();
        };
        int landed = CACHEKIT_OK;  // asserted here: cmocka asserts on this thread only
        std::thread loader([&] {
            start_together();
            Claimed miss = get_for_load(cache.get(), key);
            if (miss.rc == CACHEKIT_ENOTFOUND) landed = land(cache.get(), key, loaded, miss.info.refresh_claim);
        });
        start_together();
        put(cache.get(), key, newer);
        loader.join();
        assert_true(landed == CACHEKIT_OK || landed == CACHEKIT_ENOTFOUND);
        assert_true(read(cache.get(), key) == newer);
    }
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_claim_then_land_stores),
        cmocka_unit_test(test_invalidated_key_keeps_the_load_out),
        cmocka_unit_test(test_group_invalidation_keeps_the_load_out),
        cmocka_unit_test(test_newer_put_wins),
        cmocka_unit_test(test_newer_claim_replaces_older),
        cmocka_unit_test(test_counters_and_abandon),
        cmocka_unit_test(test_l2_hit_claims_nothing),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_a_forked_child_claims_anew),
        cmocka_unit_test(test_l1_only_racing_load_and_put_keep_the_put),
    };
    return cmocka_run_group_tests_name("cache_get_for_load", tests, nullptr, nullptr);
}
