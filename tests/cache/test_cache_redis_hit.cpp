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

}  // namespace

int main() {
    RedisServer::require_or_skip("test_cache_redis_hit");
    RedisServer server;
    g_redis = &server;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_an_l2_hit_is_one_backend_call),
    };
    return cmocka_run_group_tests_name("cache_redis_hit", tests, nullptr, nullptr);
}
