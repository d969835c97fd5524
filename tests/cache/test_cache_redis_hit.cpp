// Issue 12, item 6: one L2 round trip per hit. An L2 hit of a cache with an
// L1 reads the value and its remaining TTL (for the L1 copy's lifetime):
// over Redis, GET and PTTL go out in one write, one backend call (counted
// by the borrowed handle's stats); before, it was a GET and then a PTTL.
// The copy still carries the L2 TTL: it expires with the L2 entry.
// Skips (exit 77) without redis-server.
#include <string>

#include "../redis/redis_server.hpp"
#include "cache_test_util.hpp"

namespace {

using cachekit::testing::RedisServer;
using ct::Buf;

RedisServer *g_redis = nullptr;

uint64_t calls_of(cachekit_backend *b) {
    cachekit_backend_stats s;
    std::memset(&s, 0, sizeof s);
    s.struct_size = sizeof s;
    CT_OK(cachekit_backend_stats_get(b, &s));
    return s.calls;
}

void test_an_l2_hit_is_one_backend_call(void **) {
    ct::BackendHandle backend = ct::open_backend(g_redis->url().c_str());
    cachekit_cache_options o = ct::default_options();
    o.backend = backend.get();
    o.l1_sweep_interval_ms = 0;
    ct::CacheHandle writer = ct::new_cache(&o);
    ct::CacheHandle reader = ct::new_cache(&o);  // its own L1: the first get is an L2 hit
    const std::string key = ct::shaped_key("hit", "1"), value = ct::mp_str("from redis");
    CT_OK(cachekit_cache_put(writer.get(), "hit", key.data(), key.size(), value.data(), value.size(), 1.0));

    const uint64_t before = calls_of(backend.get());
    Buf out;
    cachekit_lookup info = CACHEKIT_LOOKUP_INIT;
    CT_OK(cachekit_cache_get(reader.get(), out.get(), &info, "hit", key.data(), key.size()));
    assert_int_equal(info.source, CACHEKIT_SOURCE_L2);
    assert_true(out.str() == value);
    assert_int_equal(calls_of(backend.get()) - before, 1);

    // The L1 copy lives no longer than the L2 entry's 1 s.
    CT_OK(cachekit_cache_get(reader.get(), out.get(), &info, "hit", key.data(), key.size()));
    assert_int_equal(info.source, CACHEKIT_SOURCE_L1);
    assert_true(ct::eventually(
        [&] { return cachekit_cache_get(reader.get(), out.get(), nullptr, "hit", key.data(), key.size()) == CACHEKIT_ENOTFOUND; },
        30s, 50ms));
}

// A stored value over the reply limit a cache derives from max_value_bytes
// (for a backend it opens from its URL) is refused from its length line: a
// miss counted too_large, not an error, and the entry is left in place.
void test_a_value_over_the_reply_limit_is_a_counted_miss(void **) {
    cachekit_cache_options o = ct::default_options();
    const std::string url = g_redis->url();
    o.backend_url = url.c_str();
    o.l1 = CACHEKIT_OFF;
    o.max_value_bytes = 1u << 20;  // reply limit about 1.08 MB
    ct::CacheHandle cache = ct::new_cache(&o);
    ct::BackendHandle raw = ct::open_backend(url.c_str());
    const std::string key = ct::shaped_key("big", "1"), huge(3u << 20, 'x');
    CT_OK(cachekit_backend_set(raw.get(), key.data(), key.size(), huge.data(), huge.size(), 0.0));

    Buf out;
    assert_int_equal(cachekit_cache_get(cache.get(), out.get(), nullptr, "big", key.data(), key.size()),
                     CACHEKIT_ENOTFOUND);
    assert_int_equal(ct::stats_of(cache.get()).too_large, 1);
    assert_int_equal(cachekit_backend_exists(raw.get(), key.data(), key.size()), CACHEKIT_OK);
}

}  // namespace

int main() {
    RedisServer::require_or_skip("test_cache_redis_hit");
    RedisServer server;
    g_redis = &server;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_an_l2_hit_is_one_backend_call),
        cmocka_unit_test(test_a_value_over_the_reply_limit_is_a_counted_miss),
    };
    return cmocka_run_group_tests_name("cache_redis_hit", tests, nullptr, nullptr);
}
