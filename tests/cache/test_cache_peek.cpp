// cachekit_cache_peek (issue 15): the L1 part of a get alone, for an async
// binding's executor thread. An L1 hit answers; anything else is
// CACHEKIT_ENOTFOUND with no L2 read and no miss counted.
#include "cache_test_util.hpp"

namespace {

const char *const kNs = "peek";

int peek(cachekit_cache *c, const std::string &key, ct::Buf &out, cachekit_lookup *info = nullptr) {
    return cachekit_cache_peek(c, out.get(), info, kNs, key.data(), key.size());
}

// Two caches over one memory backend: a value the other cache wrote is in
// L2 only, so peek misses until a get brings it into this cache's L1.
void test_peek_answers_from_l1_only(void **) {
    ct::BackendHandle backend = ct::open_backend("memory://");
    cachekit_cache_options o = ct::default_options();
    o.backend = backend.get();
    ct::CacheHandle writer = ct::new_cache(&o);
    ct::CacheHandle reader = ct::new_cache(&o);
    const std::string key = "peek:op:k1";
    const std::string value = ct::mp_str("v");
    assert_int_equal(cachekit_cache_put(writer.get(), kNs, key.data(), key.size(), value.data(), value.size(),
                                        CACHEKIT_TTL_DEFAULT),
                     CACHEKIT_OK);

    ct::Buf out;
    assert_int_equal(peek(reader.get(), key, out), CACHEKIT_ENOTFOUND);
    cachekit_cache_stats s = ct::stats_of(reader.get());
    assert_int_equal(s.l2_hits, 0);
    assert_int_equal(s.misses, 0);  // the caller's following get counts it
    assert_int_equal(s.l2_latency_count, 0);  // L2 was not asked

    ct::Buf got;
    assert_int_equal(cachekit_cache_get(reader.get(), got.get(), nullptr, kNs, key.data(), key.size()), CACHEKIT_OK);
    ct::Buf again;
    cachekit_lookup info = CACHEKIT_LOOKUP_INIT;
    assert_int_equal(peek(reader.get(), key, again, &info), CACHEKIT_OK);
    assert_true(again.str() == value);
    assert_int_equal(info.source, CACHEKIT_SOURCE_L1);
    assert_int_equal(cachekit_cache_peek_ex(reader.get(), again.get(), nullptr, kNs, "absent", 6, nullptr),
                     CACHEKIT_ENOTFOUND);
}

// Encrypted caches keep ciphertext in L1: peek opens it like a get does.
void test_peek_opens_encrypted_l1(void **) {
    cachekit_cache_options o = ct::default_options();
    o.backend_url = "memory://";
    o.encryption = CACHEKIT_ON;
    o.master_key_hex = ct::kMasterKeyHex;
    ct::CacheHandle cache = ct::new_cache(&o);
    const std::string key = "peek:op:enc";
    const std::string value = ct::mp_str("secret");
    assert_int_equal(cachekit_cache_put(cache.get(), kNs, key.data(), key.size(), value.data(), value.size(),
                                        CACHEKIT_TTL_DEFAULT),
                     CACHEKIT_OK);
    ct::Buf out;
    assert_int_equal(peek(cache.get(), key, out), CACHEKIT_OK);
    assert_true(out.str() == value);
}

// No L1: every peek misses, and bad arguments are errors, not crashes.
void test_peek_without_l1_and_bad_arguments(void **) {
    cachekit_cache_options o = ct::default_options();
    o.backend_url = "memory://";
    o.l1 = CACHEKIT_OFF;
    ct::CacheHandle cache = ct::new_cache(&o);
    const std::string key = "peek:op:k";
    const std::string value = ct::mp_str("v");
    assert_int_equal(cachekit_cache_put(cache.get(), kNs, key.data(), key.size(), value.data(), value.size(),
                                        CACHEKIT_TTL_DEFAULT),
                     CACHEKIT_OK);
    ct::Buf out;
    assert_int_equal(peek(cache.get(), key, out), CACHEKIT_ENOTFOUND);

    cachekit_error err = CACHEKIT_ERROR_INIT;
    assert_int_equal(cachekit_cache_peek_ex(cache.get(), nullptr, nullptr, kNs, "k", 1, &err), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_cache_peek_ex(nullptr, out.get(), nullptr, kNs, "k", 1, &err), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_cache_peek_ex(cache.get(), out.get(), nullptr, kNs, "", 0, &err), CACHEKIT_EINVAL);
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_peek_answers_from_l1_only),
        cmocka_unit_test(test_peek_opens_encrypted_l1),
        cmocka_unit_test(test_peek_without_l1_and_bad_arguments),
    };
    return cmocka_run_group_tests_name("cache_peek", tests, nullptr, nullptr);
}
