// The cache handle (public C API only) on a Redis Cluster L2: a value put by
// one cache is an L2 hit for another, get_or_load with the cross-process
// stampede lock (taken in the key's own slot), invalidation of a key and of a
// namespace (SCAN + UNLINK on every primary), and clear. L1 coherence
// (one invalidation feed per primary): a raw write through redis-cli -c on
// another node reaches the cache's next read; one primary's feed killed
// with CLIENT KILL flushes the L1 (no stale read). The cluster's counters
// and per-node breakers in the metrics text.
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>

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

// ---- L1 coherence ------------------------------------------------------

constexpr const char *kPrefix = "coh:";

cachekit_cache *coherent_cache(bool l1, const char *mode) {
    static std::string url;  // the options borrow it until cachekit_cache_new returns
    url = g_url + "?l1_coherence=" + mode;
    cachekit_cache_options opts;
    assert_int_equal(cachekit_cache_options_init(&opts, sizeof opts), CACHEKIT_OK);
    opts.backend_url = url.c_str();
    opts.key_prefix = kPrefix;
    opts.fail_closed = CACHEKIT_ON;
    opts.l1 = l1 ? CACHEKIT_ON : CACHEKIT_OFF;
    cachekit_cache *cache = nullptr;
    assert_int_equal(cachekit_cache_new(&cache, &opts), CACHEKIT_OK);
    return cache;
}

std::string metrics(cachekit_cache *c) {
    cachekit_buf out = CACHEKIT_BUF_INIT;
    assert_int_equal(cachekit_cache_metrics_text(c, &out), CACHEKIT_OK);
    std::string text(out.ptr, out.size);
    cachekit_buf_dispose(&out);
    return text;
}

// The value of the first sample of `name` (labels included in `name` when given); -1: absent.
long long series(cachekit_cache *c, const std::string &name) {
    const std::string text = metrics(c);
    size_t at = text.find("\n" + name + "{");
    if (at == std::string::npos) at = text.find("\n" + name + " ");
    if (at == std::string::npos) return -1;
    return std::atoll(text.c_str() + text.find(' ', at + 1 + name.size()) + 1);
}

bool eventually(const std::function<bool()> &f) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(15);
    while (std::chrono::steady_clock::now() < until) {
        if (f()) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return f();
}

void wait_live(cachekit_cache *c) {
    if (!eventually([&] { return series(c, "cachekit_l1_coherence_live") == 1; }))
        fail_msg("the invalidation feeds never became live:\n%s", metrics(c).c_str());
}

struct Read {
    int rc;
    std::string value;
    int source;
};

Read read(cachekit_cache *c, const std::string &key) {
    cachekit_buf out = CACHEKIT_BUF_INIT;
    cachekit_lookup info = CACHEKIT_LOOKUP_INIT;
    const int rc = cachekit_cache_get(c, &out, &info, nullptr, key.data(), key.size());
    Read r{rc, std::string(out.ptr ? out.ptr : "", out.size), info.source};
    cachekit_buf_dispose(&out);
    return r;
}

void put(cachekit_cache *c, const std::string &key, const std::string &value) {
    assert_int_equal(cachekit_cache_put(c, nullptr, key.data(), key.size(), value.data(), value.size(), 0), CACHEKIT_OK);
}

// A MessagePack string (short).
std::string mp(const std::string &s) { return std::string(1, char(0xa0 | s.size())) + s; }

// Read `key` until it is an L1 hit of `want`.
void read_into_l1(cachekit_cache *c, const std::string &key, const std::string &want) {
    assert_true(eventually([&] {
        Read r = read(c, key);
        return r.rc == CACHEKIT_OK && r.value == want && r.source == CACHEKIT_SOURCE_L1;
    }));
}

bool eventually_reads(cachekit_cache *c, const std::string &key, const std::string &want) {
    return eventually([&] {
        Read r = read(c, key);
        return r.rc == CACHEKIT_OK && r.value == want;
    });
}

int slot_of(const std::string &storage_key) {
    auto r = g_cluster->command(g_cluster->port(0), {"CLUSTER", "KEYSLOT", storage_key});
    assert_non_null(r.get());
    return static_cast<int>(r->integer);
}

// A primary other than `port`.
int other_primary(int port) {
    for (int p : g_cluster->primary_ports())
        if (p != port) return p;
    fail_msg("no other primary");
    return 0;
}

// Hash-tagged keys ({t}...) share a slot, so redis-cli can COPY a value
// written by a scratch cache (the envelope holds no key without encryption).
void test_coherence_raw_write_on_another_node(void **) {
    cachekit_cache *a = coherent_cache(true, "tracking");
    cachekit_cache *w = coherent_cache(false, "off");
    wait_live(a);
    const std::string v1 = mp("one"), v2 = mp("two");
    put(w, "{t}scratch", v2);
    put(a, "{t}k1", v1);
    read_into_l1(a, "{t}k1", v1);
    const long long dropped = series(a, "cachekit_l1_coherence_keys_dropped_total");
    const int owner = g_cluster->owner_of(static_cast<unsigned>(slot_of(std::string(kPrefix) + "{t}k1")));
    // Sent to a node that does not own the slot: redis-cli -c follows the MOVED.
    const int via = other_primary(owner);
    assert_int_equal(g_cluster->cli({"-c", "-p", std::to_string(via), "COPY", std::string(kPrefix) + "{t}scratch",
                                     std::string(kPrefix) + "{t}k1", "REPLACE"}),
                     0);
    auto copied = g_cluster->command(owner, {"GET", std::string(kPrefix) + "{t}k1"});
    auto scratch = g_cluster->command(owner, {"GET", std::string(kPrefix) + "{t}scratch"});
    assert_true(copied && scratch && copied->type == REDIS_REPLY_STRING && scratch->type == REDIS_REPLY_STRING);
    assert_true(std::string(copied->str, copied->len) == std::string(scratch->str, scratch->len));
    assert_true(eventually_reads(a, "{t}k1", v2));
    assert_true(series(a, "cachekit_l1_coherence_keys_dropped_total") > dropped);
    cachekit_cache_free(w);
    cachekit_cache_free(a);
}

// Every feed connection on `port` killed (CLIENT KILL ID); how many.
int kill_feeds(int port) {
    auto list = g_cluster->command(port, {"CLIENT", "LIST"});
    assert_non_null(list.get());
    const std::string text(list->str, list->len);
    int killed = 0;
    for (size_t at = 0; (at = text.find("name=cachekit-invalidation ", at)) != std::string::npos; ++at) {
        const size_t line = text.rfind('\n', at);
        const size_t id = text.find("id=", line == std::string::npos ? 0 : line) + 3;
        auto r = g_cluster->command(port, {"CLIENT", "KILL", "ID", text.substr(id, text.find(' ', id) - id)});
        killed += r && r->type == REDIS_REPLY_INTEGER ? static_cast<int>(r->integer) : 0;
    }
    return killed;
}

void test_coherence_killed_feed_flushes(void **) {
    cachekit_cache *a = coherent_cache(true, "tracking");
    cachekit_cache *w = coherent_cache(false, "off");
    wait_live(a);
    const std::string v1 = mp("kill-1"), v2 = mp("kill-2"), v3 = mp("kill-3");
    put(w, "{u}scratch2", v2);
    put(w, "{u}scratch3", v3);
    put(a, "{u}k", v1);
    read_into_l1(a, "{u}k", v1);
    const std::string stored = std::string(kPrefix) + "{u}k";
    const int owner = g_cluster->owner_of(static_cast<unsigned>(slot_of(stored)));
    auto value_of = [&](const char *key) {
        auto r = g_cluster->command(owner, {"GET", std::string(kPrefix) + key});
        assert_true(r && r->type == REDIS_REPLY_STRING);
        return std::string(r->str, r->len);
    };
    const std::string form2 = value_of("{u}scratch2"), form3 = value_of("{u}scratch3");
    const long long flushes = series(a, "cachekit_l1_coherence_flushes_total");
    assert_true(kill_feeds(owner) >= 1);
    // No tracking on that node now: this write sends no message to anyone.
    auto set = g_cluster->command(owner, {"SET", stored, form2});
    assert_true(set && set->type == REDIS_REPLY_STATUS);
    // The loss is noticed: the L1 is flushed and the stale copy is gone.
    assert_true(eventually([&] { return series(a, "cachekit_l1_coherence_flushes_total") > flushes; }));
    Read r = read(a, "{u}k");
    assert_int_equal(r.rc, CACHEKIT_OK);
    assert_true(r.value == v2);
    // Back again, and coherent.
    wait_live(a);
    read_into_l1(a, "{u}k", v2);
    set = g_cluster->command(owner, {"SET", stored, form3});
    assert_true(eventually_reads(a, "{u}k", v3));
    cachekit_cache_free(w);
    cachekit_cache_free(a);
}

// The cluster backend's own series follow the cache's.
void test_cluster_metrics(void **) {
    cachekit_cache *a = coherent_cache(true, "off");
    put(a, "m1", mp("m"));
    const std::string text = metrics(a);
    assert_non_null(std::strstr(text.c_str(), "\ncachekit_redis_cluster_redirects_total{kind=\"moved\"} "));
    assert_non_null(std::strstr(text.c_str(), "\ncachekit_redis_cluster_redirects_total{kind=\"ask\"} "));
    assert_non_null(std::strstr(text.c_str(), "\ncachekit_redis_cluster_retries_total "));
    assert_true(series(a, "cachekit_redis_cluster_topology_refreshes_total") >= 1);
    int primaries = 0, replicas = 0;
    for (int i = 0; i < RedisCluster::kNodes; ++i) {
        const std::string node = "127.0.0.1:" + std::to_string(g_cluster->port(i));
        if (std::strstr(text.c_str(), ("cachekit_redis_cluster_node_breaker_state{node=\"" + node +
                                       "\",role=\"primary\"} 0\n").c_str()))
            ++primaries;
        if (std::strstr(text.c_str(), ("cachekit_redis_cluster_node_breaker_state{node=\"" + node +
                                       "\",role=\"replica\"} 0\n").c_str()))
            ++replicas;
    }
    assert_int_equal(primaries, 3);
    assert_int_equal(replicas, 3);
    cachekit_cache_free(a);
}

}  // namespace

int main() {
    RedisCluster::require_or_skip("test_cluster_cache");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_caches_share_the_cluster),
        cmocka_unit_test(test_get_or_load_with_the_cluster_lock),
        cmocka_unit_test(test_wrong_password),
        cmocka_unit_test(test_coherence_raw_write_on_another_node),
        cmocka_unit_test(test_coherence_killed_feed_flushes),
        cmocka_unit_test(test_cluster_metrics),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
