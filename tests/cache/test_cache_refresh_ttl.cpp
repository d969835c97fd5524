// refresh_ttl_on_get (cachekit_cache_options, the reference SDK's option
// with its ttl_refresh_threshold): an L2 hit of an entry with less than
// default_ttl x fraction left gets default_ttl again, on Redis (PEXPIRE, a
// private redis-server), the file backend (its expiry header) and the
// memory backend; an entry with more left, one without expiry, a cache
// without the option and an L1 hit leave the TTL alone; the value is the
// same bytes afterwards. Redis cases skip (77 overall) without redis-server.
#include <cmath>
#include <string>

#include "../redis/redis_server.hpp"
#include "cache_test_util.hpp"

namespace {

using cachekit::testing::RedisServer;
using ct::Buf;

RedisServer *g_redis = nullptr;

double ttl_of(cachekit_backend *b, const std::string &key) {
    double t = 0;
    CT_OK(cachekit_backend_ttl(b, &t, key.data(), key.size()));
    return t;
}

std::string raw_value(cachekit_backend *b, const std::string &key) {
    Buf out;
    CT_OK(cachekit_backend_get(b, out.get(), key.data(), key.size()));
    return out.str();
}

// A cache over the borrowed `backend`: default TTL 100 s, refresh below `fraction`.
ct::CacheHandle refreshing_cache(cachekit_backend *backend, double fraction, int l1 = CACHEKIT_OFF) {
    cachekit_cache_options o = ct::default_options();
    o.backend = backend;
    o.default_ttl_seconds = 100;
    o.refresh_ttl_on_get = fraction;
    o.l1 = l1;
    o.l1_sweep_interval_ms = 0;
    return ct::new_cache(&o);
}

void put(cachekit_cache *c, const std::string &key, double ttl) {
    const std::string value = ct::mp_str("v");
    CT_OK(cachekit_cache_put(c, "r", key.data(), key.size(), value.data(), value.size(), ttl));
}

int get(cachekit_cache *c, const std::string &key) {
    Buf out;
    cachekit_lookup info = CACHEKIT_LOOKUP_INIT;
    const int rc = cachekit_cache_get(c, out.get(), &info, "r", key.data(), key.size());
    if (rc == CACHEKIT_OK) assert_true(out.str() == ct::mp_str("v"));
    return rc == CACHEKIT_OK ? info.source : -1;
}

// The whole behaviour over one backend. Bounds allow the file backend its
// whole-second expiry (rounded down).
void check_backend(cachekit_backend *backend) {
    ct::CacheHandle cache = refreshing_cache(backend, 0.5);

    // 20 s left of a 100 s default, below 50 %: reset to 100 s, bytes untouched.
    const std::string due = ct::shaped_key("r", "due");
    put(cache.get(), due, 20);
    const std::string before = raw_value(backend, due);
    assert_true(ttl_of(backend, due) <= 21.5);
    assert_int_equal(get(cache.get(), due), CACHEKIT_SOURCE_L2);
    assert_true(ttl_of(backend, due) > 90);
    assert_true(raw_value(backend, due) == before);

    // 80 s left, above 50 %: left alone.
    const std::string fresh = ct::shaped_key("r", "fresh");
    put(cache.get(), fresh, 80);
    assert_int_equal(get(cache.get(), fresh), CACHEKIT_SOURCE_L2);
    assert_true(ttl_of(backend, fresh) <= 81.5);

    // No expiry: nothing to refresh, still none.
    const std::string forever = ct::shaped_key("r", "forever");
    put(cache.get(), forever, 0);
    assert_int_equal(get(cache.get(), forever), CACHEKIT_SOURCE_L2);
    assert_true(ttl_of(backend, forever) == -1.0);

    // A cache without the option (0, the default) leaves a due entry alone.
    ct::CacheHandle plain = refreshing_cache(backend, 0);
    const std::string untouched = ct::shaped_key("r", "untouched");
    put(plain.get(), untouched, 20);
    assert_int_equal(get(plain.get(), untouched), CACHEKIT_SOURCE_L2);
    assert_true(ttl_of(backend, untouched) <= 21.5);

    // With an L1, only the L2 hit refreshes: the L1 hit after it does not
    // reach the backend (its copy lives as long as the refreshed entry).
    ct::CacheHandle with_l1 = refreshing_cache(backend, 0.5, CACHEKIT_ON);
    const std::string l1_key = ct::shaped_key("r", "l1");
    put(plain.get(), l1_key, 20);
    assert_int_equal(get(with_l1.get(), l1_key), CACHEKIT_SOURCE_L2);
    assert_true(ttl_of(backend, l1_key) > 90);
    const std::string stored = raw_value(backend, l1_key);
    CT_OK(cachekit_backend_set(backend, l1_key.data(), l1_key.size(), stored.data(), stored.size(), 20));
    assert_int_equal(get(with_l1.get(), l1_key), CACHEKIT_SOURCE_L1);
    assert_true(ttl_of(backend, l1_key) <= 21.5);
}

void test_redis_refreshes_a_due_entry(void **) {
    if (!g_redis) skip();
    ct::BackendHandle backend = ct::open_backend(g_redis->url().c_str());
    check_backend(backend.get());
}

void test_the_file_backend_rewrites_its_expiry(void **) {
    ct::TempDir dir("refresh-ttl");
    const std::string url = "file://" + dir.path();
    ct::BackendHandle backend = ct::open_backend(url.c_str());
    check_backend(backend.get());
}

void test_the_memory_backend_refreshes(void **) {
    ct::BackendHandle backend = ct::open_backend("memory://");
    check_backend(backend.get());
}

// Out of range is refused; a caller's struct that ends before the field
// (an older header) gets the option off.
void test_the_option_is_checked_and_versioned(void **) {
    for (double bad : {-0.1, 1.5, std::nan("")}) {
        cachekit_cache_options o = ct::default_options();
        o.backend_url = "memory://";
        o.refresh_ttl_on_get = bad;
        cachekit_cache *c = nullptr;
        assert_int_equal(cachekit_cache_new(&c, &o), CACHEKIT_EINVAL);
    }
    cachekit_cache_options o;
    std::memset(&o, 0xff, sizeof o);  // garbage past the old struct's end
    CT_OK(cachekit_cache_options_init(&o, offsetof(cachekit_cache_options, refresh_ttl_on_get)));
    o.backend_url = "memory://";
    ct::CacheHandle old = ct::new_cache(&o);
    cachekit_cache_options fresh = ct::default_options();
    assert_true(fresh.refresh_ttl_on_get == 0.0);
}

}  // namespace

int main() {
    std::unique_ptr<RedisServer> server;
    if (!RedisServer::find_binary().empty()) {
        server = std::make_unique<RedisServer>();
        g_redis = server.get();
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_redis_refreshes_a_due_entry),
        cmocka_unit_test(test_the_file_backend_rewrites_its_expiry),
        cmocka_unit_test(test_the_memory_backend_refreshes),
        cmocka_unit_test(test_the_option_is_checked_and_versioned),
    };
    return cmocka_run_group_tests_name("cache_refresh_ttl", tests, nullptr, nullptr);
}
