// The cache handle (public C API only) on a Redis Cluster L2: a value put by
// one cache is an L2 hit for another, get_or_load with the cross-process
// stampede lock (taken in the key's own slot), invalidation of a key and of a
// namespace (SCAN + UNLINK on every primary), and clear.
#include <cstring>
#include <string>

#include "cachekit/cachekit.h"
#include "cluster_harness.hpp"

#include <csetjmp>
#include <cstdarg>
#include <cstddef>

extern "C" {
#include <cmocka.h>
}

namespace {

using cachekit::testing::RedisCluster;

RedisCluster *g_cluster = nullptr;
std::string g_url;

cachekit_cache *new_cache(bool lock = false) {
    cachekit_cache_options opts;
    assert_int_equal(cachekit_cache_options_init(&opts, sizeof opts), CACHEKIT_OK);
    opts.backend_url = g_url.c_str();
    opts.fail_closed = CACHEKIT_ON;  // any backend error shows
    opts.cross_process_lock = lock ? CACHEKIT_ON : CACHEKIT_OFF;
    cachekit_cache *cache = nullptr;
    assert_int_equal(cachekit_cache_new(&cache, &opts), CACHEKIT_OK);
    return cache;
}

const char kValue[] = "\xa5hello";  // MessagePack "hello"

// The cache's own key shape (auto mode): what invalidate_namespace and clear select.
std::string auto_key(const char *ns, int i) {
    const unsigned char args[] = {0x92, 0x91, static_cast<unsigned char>(i & 0x7f), 0x80};  // [[i], {}]
    cachekit_buf out = CACHEKIT_BUF_INIT;
    assert_int_equal(cachekit_key_auto(&out, ns, "app.users", "load", args, sizeof args, 1, "std"), CACHEKIT_OK);
    std::string key(out.ptr, out.size);
    cachekit_buf_dispose(&out);
    return key;
}

int loads = 0;
int loader(cachekit_load *load, void *) {
    ++loads;
    return cachekit_load_set_value(load, kValue, sizeof kValue - 1);
}

int setup(void **) {
    try {
        g_cluster = new RedisCluster(1000, "s3cret-pw");  // AUTH on every node
    } catch (const std::exception &e) {
        print_error("cannot build the cluster: %s\n", e.what());
        return -1;
    }
    g_url = g_cluster->url();
    return 0;
}

int teardown(void **) {
    delete g_cluster;
    return 0;
}

void test_two_caches_share_the_cluster(void **) {
    cachekit_cache *a = new_cache(), *b = new_cache();
    cachekit_buf out = CACHEKIT_BUF_INIT;
    cachekit_lookup info = CACHEKIT_LOOKUP_INIT;
    for (int i = 0; i < 30; ++i) {  // keys over every primary
        const std::string key = auto_key("users", i);
        assert_int_equal(cachekit_cache_put(a, "users", key.data(), key.size(), kValue, sizeof kValue - 1, 60), CACHEKIT_OK);
        assert_int_equal(cachekit_cache_get(b, &out, &info, "users", key.data(), key.size()), CACHEKIT_OK);
        assert_int_equal(info.source, CACHEKIT_SOURCE_L2);
        assert_memory_equal(out.ptr, kValue, sizeof kValue - 1);
    }
    // A key invalidated by A is gone for B too (B's L1 dropped by B itself here).
    const std::string first = auto_key("users", 0);
    assert_int_equal(cachekit_cache_invalidate(a, "users", first.data(), first.size()), CACHEKIT_OK);
    assert_int_equal(cachekit_cache_invalidate(b, "users", first.data(), first.size()), CACHEKIT_OK);
    assert_int_equal(cachekit_cache_get(b, &out, &info, "users", first.data(), first.size()), CACHEKIT_ENOTFOUND);
    const std::string other = auto_key("orders", 1);  // another namespace: kept
    assert_int_equal(cachekit_cache_put(a, "orders", other.data(), other.size(), kValue, sizeof kValue - 1, 60), CACHEKIT_OK);
    // The namespace, across the primaries: a fresh cache (empty L1) finds none of them.
    assert_int_equal(cachekit_cache_invalidate_namespace(a, "users"), CACHEKIT_OK);
    cachekit_cache *c = new_cache();
    for (int i = 1; i < 30; ++i) {
        const std::string key = auto_key("users", i);
        assert_int_equal(cachekit_cache_get(c, &out, &info, "users", key.data(), key.size()), CACHEKIT_ENOTFOUND);
    }
    assert_int_equal(cachekit_cache_get(c, &out, &info, "orders", other.data(), other.size()), CACHEKIT_OK);
    cachekit_buf_dispose(&out);
    cachekit_cache_free(a);
    cachekit_cache_free(b);
    cachekit_cache_free(c);
}

void test_get_or_load_with_the_cluster_lock(void **) {
    cachekit_cache *a = new_cache(true), *b = new_cache(true);
    cachekit_buf out = CACHEKIT_BUF_INIT;
    cachekit_lookup info = CACHEKIT_LOOKUP_INIT;
    loads = 0;
    const std::string x = auto_key("calc", 7);
    assert_int_equal(cachekit_cache_get_or_load(a, &out, &info, "calc", x.data(), x.size(), 60, loader, nullptr), CACHEKIT_OK);
    assert_int_equal(info.source, CACHEKIT_SOURCE_LOADED);
    assert_int_equal(cachekit_cache_get_or_load(b, &out, &info, "calc", x.data(), x.size(), 60, loader, nullptr), CACHEKIT_OK);
    assert_int_equal(info.source, CACHEKIT_SOURCE_L2);
    assert_int_equal(loads, 1);
    assert_int_equal(cachekit_cache_clear(a), CACHEKIT_OK);
    cachekit_cache *c = new_cache(true);
    assert_int_equal(cachekit_cache_get(c, &out, &info, "calc", x.data(), x.size()), CACHEKIT_ENOTFOUND);
    cachekit_buf_dispose(&out);
    cachekit_cache_free(a);
    cachekit_cache_free(b);
    cachekit_cache_free(c);
}

// A wrong password: calls fail (fail-closed) with CACHEKIT_EBACKEND naming
// WRONGPASS, never showing the password; the right one works (every case above).
void test_wrong_password(void **) {
    std::string url = g_url;
    url.replace(url.find("s3cret-pw"), 9, "not-the-pw");
    cachekit_backend_options bo;
    assert_int_equal(cachekit_backend_options_init(&bo, sizeof bo), CACHEKIT_OK);
    bo.fail_closed = 1;
    cachekit_backend *backend = nullptr;
    assert_int_equal(cachekit_backend_open(&backend, url.c_str(), &bo), CACHEKIT_OK);  // nothing connects at open
    cachekit_buf out = CACHEKIT_BUF_INIT;
    cachekit_error err = CACHEKIT_ERROR_INIT;
    assert_int_equal(cachekit_backend_get_ex(backend, &out, "k", 1, &err), CACHEKIT_EBACKEND);
    print_message("wrong password: %s\n", err.message);
    assert_non_null(std::strstr(err.message, "WRONGPASS"));
    assert_null(std::strstr(err.message, "not-the-pw"));
    cachekit_buf_dispose(&out);
    cachekit_backend_free(backend);
}

}  // namespace

int main() {
    RedisCluster::require_or_skip("test_cluster_cache");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_caches_share_the_cluster),
        cmocka_unit_test(test_get_or_load_with_the_cluster_lock),
        cmocka_unit_test(test_wrong_password),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
