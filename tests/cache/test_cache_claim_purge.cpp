// Claims nobody reports back do not live forever (issue 25): a load claim
// whose holder went away (a cancelled async task, a loader that longjmp'd
// out) is purged once its lease (load_timeout_ms) has passed twice, so its
// key keeps no entry; a live claim stays held and lands. Counted through
// cachekit_cache_claims_held.
#include <chrono>
#include <thread>

#include "cache_test_util.hpp"

namespace {

const char *const kNs = "purge";
constexpr int kKeys = 120;

ct::CacheHandle memory_cache(uint32_t load_timeout_ms) {
    cachekit_cache_options o = ct::default_options();
    o.backend_url = "memory://";
    o.load_timeout_ms = load_timeout_ms;
    return ct::new_cache(&o);
}

uint64_t held(cachekit_cache *c) {
    uint64_t n = 0;
    CT_OK(cachekit_cache_claims_held(c, &n));
    return n;
}

uint64_t claim_load(cachekit_cache *c, const std::string &key) {
    ct::Buf out;
    cachekit_lookup info = CACHEKIT_LOOKUP_INIT;
    assert_int_equal(cachekit_cache_get_for_load(c, out.get(), &info, kNs, key.data(), key.size()),
                     CACHEKIT_ENOTFOUND);
    assert_int_equal(info.refresh, 1);
    return info.refresh_claim;
}

std::string key_of(int i) { return ct::shaped_key(kNs, "k" + std::to_string(i)); }

// Polls (the purge is driven by time passing); the limit only bounds a hang.
bool eventually_none_held(cachekit_cache *c) {
    const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (held(c) != 0) {
        if (std::chrono::steady_clock::now() > limit) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
}

void test_landed_and_abandoned_claims_are_not_held(void **) {
    ct::CacheHandle c = memory_cache(60000);
    std::vector<uint64_t> claims;
    for (int i = 0; i < kKeys; ++i) claims.push_back(claim_load(c.get(), key_of(i)));
    assert_int_equal(held(c.get()), kKeys);
    const std::string v = ct::mp_str("v");
    for (int i = 0; i < kKeys; ++i) {
        const std::string k = key_of(i);
        if (i % 2)
            CT_OK(cachekit_cache_put_refresh(c.get(), kNs, k.data(), k.size(), v.data(), v.size(),
                                             CACHEKIT_TTL_DEFAULT, claims[i]));
        else
            CT_OK(cachekit_cache_abandon_refresh(c.get(), k.data(), k.size(), claims[i]));
    }
    assert_int_equal(held(c.get()), 0);
    assert_int_equal(ct::stats_of(c.get(), kNs).load_errors, kKeys / 2);
}

void test_live_claims_survive_a_purge(void **) {
    ct::CacheHandle c = memory_cache(60000);
    std::vector<uint64_t> claims;
    // Past the table's first purge size: a purge runs, and keeps them all.
    for (int i = 0; i < 3 * kKeys; ++i) claims.push_back(claim_load(c.get(), key_of(i)));
    assert_int_equal(held(c.get()), 3 * kKeys);
    const std::string k = key_of(0), v = ct::mp_str("late");
    CT_OK(cachekit_cache_put_refresh(c.get(), kNs, k.data(), k.size(), v.data(), v.size(), CACHEKIT_TTL_DEFAULT,
                                     claims[0]));
}

void test_unreported_claims_are_purged(void **) {
    ct::CacheHandle c = memory_cache(20);
    std::vector<uint64_t> claims;
    for (int i = 0; i < kKeys; ++i) claims.push_back(claim_load(c.get(), key_of(i)));
    assert_true(held(c.get()) > 0 || kKeys == 0);
    assert_true(eventually_none_held(c.get()));
    // A holder reporting back after the purge: nothing lands, nothing is
    // counted twice, nothing breaks; the key's next load claims afresh.
    const std::string k = key_of(0), v = ct::mp_str("late");
    assert_int_equal(cachekit_cache_put_refresh(c.get(), kNs, k.data(), k.size(), v.data(), v.size(),
                                                CACHEKIT_TTL_DEFAULT, claims[0]),
                     CACHEKIT_ENOTFOUND);
    const std::string k1 = key_of(1);
    CT_OK(cachekit_cache_abandon_refresh(c.get(), k1.data(), k1.size(), claims[1]));
    assert_int_equal(ct::stats_of(c.get(), kNs).load_errors, 0);
    const uint64_t fresh = claim_load(c.get(), k);
    assert_true(fresh != claims[0]);
    assert_int_equal(held(c.get()), 1);
    CT_OK(cachekit_cache_put_refresh(c.get(), kNs, k.data(), k.size(), v.data(), v.size(), CACHEKIT_TTL_DEFAULT,
                                     fresh));
    assert_int_equal(held(c.get()), 0);
}

void test_bad_arguments(void **) {
    ct::CacheHandle c = memory_cache(1000);
    uint64_t n = 0;
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL, cachekit_cache_claims_held(c.get(), nullptr));
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL, cachekit_cache_claims_held(nullptr, &n));
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_landed_and_abandoned_claims_are_not_held),
        cmocka_unit_test(test_live_claims_survive_a_purge),
        cmocka_unit_test(test_unreported_claims_are_purged),
        cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests_name("cache_claim_purge", tests, nullptr, nullptr);
}
