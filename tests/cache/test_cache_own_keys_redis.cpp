// Issue 12, item 4: cachekit_cache_clear and cachekit_cache_invalidate_namespace
// touch only the cache's own key space. One private redis-server database
// holds other applications' keys (celery:task, session:abc, users:foo), keys
// of another prefix, and the cache's own (made with cachekit_key_auto /
// cachekit_key_interop); after clear / invalidate_namespace ours are gone
// and every other key is still there. Auto mode without a prefix (the
// reported case), auto mode with one, and interop mode.
// Skips (exit 77) without redis-server.
#include <string>
#include <vector>

#include "../redis/redis_server.hpp"
#include "cache_test_util.hpp"

namespace {

using cachekit::testing::RedisServer;
using ct::Buf;

RedisServer *g_redis = nullptr;

const std::string kValue = ct::mp_str("ours");

std::string auto_key(const char *ns, int n) {
    Buf out;
    const std::string args = std::string("\x92\x91", 2) + char(n & 0x7f) + std::string("\x80", 1);  // [[n], {}]
    CT_OK(cachekit_key_auto(out.get(), ns, "app.mod", "f", args.data(), args.size(), 1, "std"));
    return out.str();
}

std::string interop_key(const char *ns, int n) {
    Buf out;
    const std::string args = std::string("\x91", 1) + char(n & 0x7f);  // [n]
    CT_OK(cachekit_key_interop(out.get(), nullptr, ns, "op", args.data(), args.size()));
    return out.str();
}

struct Db {
    ct::BackendHandle backend = ct::open_backend(g_redis->url().c_str());
    Db() {
        uint64_t ignored = 0;
        CT_OK(cachekit_backend_clear(backend.get(), &ignored, "", 0));  // a fresh database for each test
    }
    void set(const std::string &key) {
        CT_OK(cachekit_backend_set(backend.get(), key.data(), key.size(), "x", 1, 0));
    }
    bool has(const std::string &key) {
        const int rc = cachekit_backend_exists(backend.get(), key.data(), key.size());
        if (rc != CACHEKIT_OK && rc != CACHEKIT_ENOTFOUND) fail_msg("exists -> %d", rc);
        return rc == CACHEKIT_OK;
    }
};

ct::CacheHandle redis_cache(int format, const char *prefix) {
    cachekit_cache_options o = ct::default_options();
    const std::string url = g_redis->url();
    o.backend_url = url.c_str();
    o.format = format;
    o.key_prefix = prefix;
    return ct::new_cache(&o);
}

void put(cachekit_cache *c, const char *ns, const std::string &key) {
    CT_OK(cachekit_cache_put(c, ns, key.data(), key.size(), kValue.data(), kValue.size(), CACHEKIT_TTL_DEFAULT));
}

// Keys that are not the cache's and must outlive its clear.
std::vector<std::string> foreign_keys(const std::string &other_prefix_key) {
    return {"celery:task", "session:abc", "users:foo", "ns:n:func:not-ours", "func:x", other_prefix_key,
            "inter:op:" + std::string(64, 'z')};
}

void auto_mode(const char *prefix) {
    Db db;
    const std::string p = prefix;
    const std::vector<std::string> foreign = foreign_keys("otherapp:" + auto_key("n", 1));
    for (const std::string &k : foreign) db.set(k);
    ct::CacheHandle cache = redis_cache(CACHEKIT_FORMAT_AUTO, prefix);
    const std::string n1 = auto_key("n", 1), n2 = auto_key("n", 2), m1 = auto_key("m", 1), none = auto_key(nullptr, 3);
    put(cache.get(), "n", n1);
    put(cache.get(), "n", n2);
    put(cache.get(), "m", m1);
    put(cache.get(), nullptr, none);
    for (const std::string &k : {n1, n2, m1, none}) assert_true(db.has(p + k));

    CT_OK(cachekit_cache_invalidate_namespace(cache.get(), "n"));
    assert_false(db.has(p + n1));
    assert_false(db.has(p + n2));
    assert_true(db.has(p + m1));
    assert_true(db.has(p + none));
    for (const std::string &k : foreign) assert_true(db.has(k));

    CT_OK(cachekit_cache_clear(cache.get()));
    assert_false(db.has(p + m1));
    assert_false(db.has(p + none));
    for (const std::string &k : foreign) assert_true(db.has(k));
}

void test_auto_mode_without_a_prefix_keeps_foreign_keys(void **) { auto_mode(""); }
void test_auto_mode_with_a_prefix_keeps_foreign_keys(void **) { auto_mode("t:default:"); }

void test_interop_mode_keeps_foreign_keys(void **) {
    Db db;
    const std::vector<std::string> foreign = foreign_keys("otherapp:" + interop_key("inter", 1));
    for (const std::string &k : foreign) db.set(k);
    db.set("inter:foo");  // in the namespace, not of the shape
    ct::CacheHandle cache = redis_cache(CACHEKIT_FORMAT_INTEROP, "");
    const std::string i1 = interop_key("inter", 1), i2 = interop_key("inter", 2), o1 = interop_key("other", 1);
    put(cache.get(), "inter", i1);
    put(cache.get(), "inter", i2);
    put(cache.get(), "other", o1);
    CT_OK(cachekit_cache_invalidate_namespace(cache.get(), "inter"));
    assert_false(db.has(i1));
    assert_false(db.has(i2));
    assert_true(db.has(o1));
    assert_true(db.has("inter:foo"));
    for (const std::string &k : foreign) assert_true(db.has(k));
    CT_OK(cachekit_cache_clear(cache.get()));
    assert_false(db.has(o1));
    assert_true(db.has("inter:foo"));
    for (const std::string &k : foreign) assert_true(db.has(k));
}

// The explicit database-wide clear is still there: the backend call with an empty prefix.
void test_the_backend_clear_with_an_empty_prefix_clears_all(void **) {
    Db db;
    db.set("celery:task");
    uint64_t deleted = 0;
    CT_OK(cachekit_backend_clear(db.backend.get(), &deleted, "", 0));
    assert_int_equal(deleted, 1);
    assert_false(db.has("celery:task"));
}

}  // namespace

int main() {
    RedisServer::require_or_skip("test_cache_own_keys_redis");
    RedisServer server;
    g_redis = &server;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_auto_mode_without_a_prefix_keeps_foreign_keys),
        cmocka_unit_test(test_auto_mode_with_a_prefix_keeps_foreign_keys),
        cmocka_unit_test(test_interop_mode_keeps_foreign_keys),
        cmocka_unit_test(test_the_backend_clear_with_an_empty_prefix_clears_all),
    };
    return cmocka_run_group_tests_name("cache_own_keys_redis", tests, nullptr, nullptr);
}
