// The cache handle (public C API only) on a Redis Cluster L2: a value put by
// one cache is an L2 hit for another, get_or_load with the cross-process
// stampede lock (taken in the key's own slot), invalidation of a key and of a
// namespace (SCAN + UNLINK on every primary), and clear. L1 coherence
// (one invalidation feed per primary): a raw write through redis-cli -c on
// another node reaches the cache's next read; one primary's feed killed
// with CLIENT KILL flushes the L1 (no stale read); a slot-map refresh
// leaves the L1 alone; a replica held back (its link cut, reconnection
// refused) gives the old value, which leaves the L1 once it catches up
// (read_from_replicas); no stale read while a live reshard moves the keys'
// slots. The cluster's counters and per-node breakers in the metrics text.
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cachekit/cachekit.h"
#include "cluster_harness.hpp"

#include <csetjmp>
#include <cstdarg>
#include <cstddef>

extern "C" {
#include <cmocka.h>
}

#include "../l2/backend_ops_check.h"

namespace {

using cachekit::testing::RedisCluster;

RedisCluster *g_cluster = nullptr;
std::string g_url;
constexpr const char *kPassword = "s3cret-pw";

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
        g_cluster = new RedisCluster(1000, kPassword);  // AUTH on every node
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

// `more`: further URL options ("&name=value...").
cachekit_cache *coherent_cache(bool l1, const char *mode, const char *more = "") {
    static std::string url;  // the options borrow it until cachekit_cache_new returns
    url = g_url + "?l1_coherence=" + mode + more;
    cachekit_cache_options opts;
    assert_int_equal(cachekit_cache_options_init(&opts, sizeof opts), CACHEKIT_OK);
    opts.backend_url = url.c_str();
    opts.key_prefix = kPrefix;
    opts.fail_closed = CACHEKIT_ON;
    // Generous: a loaded machine (six nodes, a reshard) must not turn a slow call into an error.
    static cachekit_backend_options backend;
    assert_int_equal(cachekit_backend_options_init(&backend, sizeof backend), CACHEKIT_OK);
    backend.command_timeout_ms = 2000;
    backend.fail_closed = 1;
    opts.backend_options = &backend;
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

bool eventually_until(std::chrono::steady_clock::time_point until, const std::function<bool()> &f) {
    while (std::chrono::steady_clock::now() < until) {
        if (f()) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return f();
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

// A slot-map refresh that finds nothing new leaves the L1 alone: the feeds
// follow every refresh, and each used to say live() again, which flushes.
void test_coherence_refresh_keeps_l1(void **) {
    cachekit_cache *a = coherent_cache(true, "tracking", "&refresh_ms=100");
    wait_live(a);
    const std::string v = mp("kept");
    // Written by a cache without a feed: a's own put would also be announced
    // on the SDK channel by another thread, and that event could drop the fill.
    cachekit_cache *w = coherent_cache(false, "off");
    put(w, "{q}k", v);
    cachekit_cache_free(w);
    read_into_l1(a, "{q}k", v);
    const long long flushes = series(a, "cachekit_l1_coherence_flushes_total");
    const long long refreshes = series(a, "cachekit_redis_cluster_topology_refreshes_total");
    assert_true(eventually([&] { return series(a, "cachekit_redis_cluster_topology_refreshes_total") >= refreshes + 3; }));
    assert_int_equal(series(a, "cachekit_l1_coherence_flushes_total"), flushes);
    Read r = read(a, "{q}k");
    assert_true(r.rc == CACHEKIT_OK && r.value == v);
    assert_int_equal(r.source, CACHEKIT_SOURCE_L1);
    cachekit_cache_free(a);
}

// ---- A replica that lags its primary (issue 25) -------------------------

// The replica of the primary on `primary_port`.
int replica_of(int primary_port) {
    const std::string id = g_cluster->id_of(primary_port);
    for (const auto &n : g_cluster->nodes(primary_port))
        if (!n.primary && !n.failed && n.primary_id == id) return n.port;
    fail_msg("the primary on %d has no replica", primary_port);
    return 0;
}

// GET on a replica itself (READONLY first, else it answers MOVED); "" when missing.
std::string replica_get(int port, const std::string &key) {
    timeval tv{2, 0};
    redisContext *c = redisConnectWithTimeout("127.0.0.1", port, tv);
    if (c == nullptr || c->err) fail_msg("cannot connect to the replica on %d", port);
    redisSetTimeout(c, tv);
    freeReplyObject(redisCommand(c, "AUTH %s", kPassword));
    freeReplyObject(redisCommand(c, "READONLY"));
    auto *r = static_cast<redisReply *>(redisCommand(c, "GET %b", key.data(), key.size()));
    if (r == nullptr) fail_msg("GET on the replica on %d: I/O error", port);
    std::string value = r->type == REDIS_REPLY_STRING ? std::string(r->str, r->len) : std::string();
    freeReplyObject(r);
    redisFree(c);
    return value;
}

bool replica_link_up(int port) {
    auto info = g_cluster->command(port, {"INFO", "replication"});
    return info && info->type == REDIS_REPLY_STRING &&
           std::string(info->str, info->len).find("master_link_status:up") != std::string::npos;
}

// With read_from_replicas the write's message comes from the primary before
// the replica has the write: a read made after that message, from the
// replica, gets the old value. It must not stay in L1 once the replica has
// caught up (the replica's own feed reports the write when it applies it).
// The replica is held back for real: its replication link is cut (CLIENT
// KILL TYPE master) and its reconnections refused (a wrong masterauth), so
// it keeps answering reads with the old value; the right password lets it
// reconnect and apply the write from the primary's backlog.
void test_coherence_lagging_replica_read(void **) {
    cachekit_cache *a = coherent_cache(true, "tracking", "&read_from_replicas=yes");
    cachekit_cache *w = coherent_cache(false, "off");
    wait_live(a);
    const std::string v1 = mp("lag-1"), v2 = mp("lag-2");
    put(w, "{r}scratch", v2);
    put(w, "{r}k", v1);
    const std::string stored = std::string(kPrefix) + "{r}k";
    const int owner = g_cluster->owner_of(static_cast<unsigned>(slot_of(stored)));
    const int replica = replica_of(owner);
    auto on_owner = g_cluster->command(owner, {"GET", std::string(kPrefix) + "{r}scratch"});
    assert_true(on_owner && on_owner->type == REDIS_REPLY_STRING);
    const std::string form2(on_owner->str, on_owner->len);
    assert_true(eventually([&] { return !replica_get(replica, stored).empty(); }));
    const std::string form1 = replica_get(replica, stored);
    read_into_l1(a, "{r}k", v1);

    // Hold the replica back.
    auto r = g_cluster->command(replica, {"CONFIG", "SET", "masterauth", "not-the-password"});
    assert_true(r && r->type == REDIS_REPLY_STATUS);
    r = g_cluster->command(replica, {"CLIENT", "KILL", "TYPE", "master"});
    assert_true(r && r->type == REDIS_REPLY_INTEGER && r->integer == 1);
    assert_true(eventually([&] { return !replica_link_up(replica); }));

    const long long dropped = series(a, "cachekit_l1_coherence_keys_dropped_total");
    r = g_cluster->command(owner, {"SET", stored, form2});
    assert_true(r && r->type == REDIS_REPLY_STATUS);
    // The primary's message drops the L1 copy; the next read goes to the
    // replica, which still has v1: the lag is real.
    assert_true(eventually([&] { return series(a, "cachekit_l1_coherence_keys_dropped_total") > dropped; }));
    assert_true(replica_get(replica, stored) == form1);
    Read lagged = read(a, "{r}k");
    assert_int_equal(lagged.rc, CACHEKIT_OK);
    assert_true(lagged.value == v1);
    assert_int_equal(lagged.source, CACHEKIT_SOURCE_L2);

    // Let it catch up: both nodes hold v2 now, and so must the cache's reads.
    r = g_cluster->command(replica, {"CONFIG", "SET", "masterauth", kPassword});
    assert_true(r && r->type == REDIS_REPLY_STATUS);
    assert_true(eventually([&] { return replica_link_up(replica) && replica_get(replica, stored) == form2; }));
    if (!eventually_reads(a, "{r}k", v2))
        fail_msg("the L1 still answers the value the lagging replica gave, after the replica caught up");
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


// ---- Coherence during a live reshard ------------------------------------

// A raw client that routes as `redis-cli -c` does: one connection per node,
// MOVED followed (and remembered per key), ASK answered with ASKING on the
// named node, TRYAGAIN retried. Writes the stored bytes as a foreign client.
class RawRouter {
public:
    ~RawRouter() {
        for (auto &[port, c] : conns_) redisFree(c);
    }
    // SET key bytes, acknowledged (OK) by the node that owns the key now.
    void set(const std::string &key, const std::string &bytes) {
        int port = owner_.count(key) ? owner_[key] : g_cluster->port(0);
        bool asking = false;
        for (int attempt = 0; attempt < 50; ++attempt) {
            redisContext *c = conn(port);
            if (asking) freeReplyObject(redisCommand(c, "ASKING"));
            auto *r = static_cast<redisReply *>(
                redisCommand(c, "SET %b %b", key.data(), key.size(), bytes.data(), bytes.size()));
            if (r == nullptr) fail_msg("raw SET %s: I/O error on %d", key.c_str(), port);
            const std::string text = r->type == REDIS_REPLY_ERROR || r->type == REDIS_REPLY_STATUS
                                         ? std::string(r->str, r->len)
                                         : std::string();
            freeReplyObject(r);
            if (text == "OK") {
                if (!asking) owner_[key] = port;
                return;
            }
            asking = false;
            if (text.rfind("MOVED ", 0) == 0 || text.rfind("ASK ", 0) == 0) {
                asking = text[0] == 'A';
                port = std::atoi(text.c_str() + text.rfind(':') + 1);
            } else if (text.rfind("TRYAGAIN", 0) == 0) {
                std::this_thread::sleep_for(std::chrono::milliseconds(10));
            } else {
                fail_msg("raw SET %s on %d: %s", key.c_str(), port, text.c_str());
            }
        }
        fail_msg("raw SET %s: too many redirects", key.c_str());
    }

private:
    redisContext *conn(int port) {
        redisContext *&c = conns_[port];
        if (c == nullptr) {
            timeval tv{5, 0};
            c = redisConnectWithTimeout("127.0.0.1", port, tv);
            if (c == nullptr || c->err) fail_msg("cannot connect to %d", port);
            redisSetTimeout(c, tv);
            freeReplyObject(redisCommand(c, "AUTH %s", kPassword));
        }
        return c;
    }
    std::map<int, redisContext *> conns_;
    std::map<std::string, int> owner_;
};

// The check, precisely: one writer changes one key at a time (a raw SET
// routed to the owning node, or a put by a second cache W, alternately) and,
// once the write is acknowledged and the invalidation has had time to arrive
// (the bounded wait kBound, 5 s: generous for a loaded machine), every cache
// (A, B and W) reads the new value, and keeps reading it. The check reads at
// kSettle (200 ms) and, if the value is still the old one, again until the
// bound: such late reads are counted and printed, a read still old at the
// bound is a stale read (a lost invalidation: nothing else would fix it). Meanwhile two threads keep reading
// every key into A's and B's L1 (fills racing the invalidations), and
// `redis-cli --cluster reshard` moves 300 slots, the keys' among them, from
// one primary to another and back, three times. No caller error anywhere (the caches fail closed),
// no stale read after the wait.
void test_coherence_during_live_reshard(void **) {
    constexpr auto kSettle = std::chrono::milliseconds(200);  // when the check reads
    constexpr auto kBound = std::chrono::seconds(5);          // the bounded wait: a message later than this is lost
    cachekit_cache *a = coherent_cache(true, "tracking");
    cachekit_cache *b = coherent_cache(true, "tracking");
    cachekit_cache *w = coherent_cache(true, "tracking");
    cachekit_cache *scratch = coherent_cache(false, "off");
    wait_live(a);
    wait_live(b);
    wait_live(w);
    // redis-cli's reshard table takes the source's lowest slots first: with
    // the source owning slot 0, slots 0-299 move. 16 keys there, 8 elsewhere.
    const int from = g_cluster->owner_of(0), to = g_cluster->owner_of(16383);
    std::vector<std::string> keys;
    int moving = 0, staying = 0;
    for (int i = 0; moving < 16 || staying < 8; ++i) {
        const std::string key = "rsh:" + std::to_string(i);
        const bool in_range = slot_of(std::string(kPrefix) + key) < 300;
        if (in_range && moving < 16) ++moving, keys.push_back(key);
        if (!in_range && staying < 8) ++staying, keys.push_back(key);
    }
    // A pool of values with their stored bytes (written by a scratch cache
    // under one hash tag and read raw; without encryption the stored form
    // does not depend on the key).
    constexpr int kPool = 64;
    std::vector<std::string> values, stored;
    const int pool_owner = g_cluster->owner_of(static_cast<unsigned>(slot_of(std::string(kPrefix) + "{pool}")));
    for (int i = 0; i < kPool; ++i) {
        values.push_back(mp("v" + std::to_string(i)));
        const std::string pool_key = "{pool}" + std::to_string(i);
        put(scratch, pool_key, values.back());
        auto r = g_cluster->command(pool_owner, {"GET", std::string(kPrefix) + pool_key});
        assert_true(r && r->type == REDIS_REPLY_STRING);
        stored.emplace_back(r->str, r->len);
    }
    const std::set<std::string> known(values.begin(), values.end());
    for (size_t k = 0; k < keys.size(); ++k) put(w, keys[k], values[0]);

    std::atomic<bool> stop{false};
    std::atomic<int> reader_errors{0};
    std::mutex mu;
    std::string first_reader_error;
    auto reader = [&](cachekit_cache *c) {
        while (!stop.load()) {
            for (auto &key : keys) {
                Read r = read(c, key);
                if (r.rc != CACHEKIT_OK || known.count(r.value) == 0) {
                    std::lock_guard<std::mutex> lock(mu);
                    if (reader_errors++ == 0)
                        first_reader_error = key + ": rc " + std::to_string(r.rc) + " " + cachekit_error_last_message();
                }
            }
        }
    };
    std::thread ra(reader, a), rb(reader, b);
    std::atomic<bool> resharded{false};
    std::atomic<int> reshard_rc{-1};
    // Three reshards, there and back and there again (the lowest slots of
    // each source are slots 0-299 each time): more writes land mid-migration.
    std::thread resharder([&] {
        const std::string from_id = g_cluster->id_of(from), to_id = g_cluster->id_of(to);
        int rc = 0;
        for (int i = 0; i < 3 && rc == 0; ++i) {
            const bool there = i % 2 == 0;
            rc = g_cluster->cli({"--cluster", "reshard", "127.0.0.1:" + std::to_string(from), "--cluster-from",
                                 there ? from_id : to_id, "--cluster-to", there ? to_id : from_id, "--cluster-slots",
                                 "300", "--cluster-yes", "--cluster-pipeline", "1"});
            if (rc == 0 && !g_cluster->wait_ok(std::chrono::seconds(20))) rc = -2;
        }
        reshard_rc = rc;
        resharded = true;
    });
    RawRouter raw;
    int writes = 0, raw_writes = 0, stale = 0, late = 0, writer_errors = 0;
    long long max_late_ms = 0;
    std::string first_stale;
    // Until the reshard is over, then one more pass over every key.
    for (size_t rounds_after = 0; rounds_after < keys.size(); ++writes) {
        if (resharded.load()) ++rounds_after;
        const std::string &key = keys[static_cast<size_t>(writes) % keys.size()];
        const int v = 1 + writes % (kPool - 1);  // never the previous value of this key (24 writes apart)
        if (writes % 2 == 0) {
            raw.set(std::string(kPrefix) + key, stored[static_cast<size_t>(v)]);
            ++raw_writes;
        } else if (cachekit_cache_put(w, nullptr, key.data(), key.size(), values[v].data(), values[v].size(), 0) !=
                   CACHEKIT_OK) {
            ++writer_errors;
            print_error("put %s: %s\n", key.c_str(), cachekit_error_last_message());
            continue;
        }
        const auto acked = std::chrono::steady_clock::now();
        std::this_thread::sleep_for(kSettle);
        for (cachekit_cache *c : {a, b, w}) {
            const char *name = c == a ? "A" : c == b ? "B" : "W";
            Read r = read(c, key);
            if (r.rc == CACHEKIT_OK && r.value != values[v]) {
                // Not yet: the message is late (a loaded machine) or lost. Late
                // arrives within the bound; lost never does (no flush comes).
                ++late;
                const bool arrived = eventually_until(acked + kBound, [&] {
                    r = read(c, key);
                    return r.rc != CACHEKIT_OK || r.value == values[v];
                });
                const long long ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                         std::chrono::steady_clock::now() - acked).count();
                max_late_ms = std::max(max_late_ms, ms);
                print_message("late: %s write %d cache %s: %s %lld ms after the acknowledgement\n", key.c_str(),
                              writes, name, arrived ? "new" : "STILL OLD", ms);
                if (!arrived) {
                    if (stale++ == 0)
                        first_stale = key + " (write " + std::to_string(writes) + ", cache " + name + ", source " +
                                      std::to_string(r.source) + ")";
                    continue;
                }
            }
            if (r.rc == CACHEKIT_OK && r.value == values[v]) r = read(c, key);  // and it stays new
            if (r.rc != CACHEKIT_OK) {
                ++writer_errors;
                print_error("read %s after the write: rc %d\n", key.c_str(), r.rc);
            } else if (r.value != values[v] && stale++ == 0) {
                first_stale = key + " (write " + std::to_string(writes) + ", cache " + name + ", back to old)";
            }
        }
    }
    stop = true;
    ra.join();
    rb.join();
    resharder.join();
    int moved = 0;
    for (auto &key : keys)
        if (g_cluster->owner_of(static_cast<unsigned>(slot_of(std::string(kPrefix) + key))) == to) ++moved;
    print_message("reshard: %d writes (%d raw, %d by put), %d of %zu keys moved, %d stale, %d late reads "
                  "(latest %lld ms), %d reader errors\n",
                  writes, raw_writes, writes - raw_writes, moved, keys.size(), stale, late, max_late_ms,
                  reader_errors.load());
    if (stale) print_error("first stale read: %s\n", first_stale.c_str());
    if (reader_errors) print_error("first reader error: %s\n", first_reader_error.c_str());
    assert_int_equal(reshard_rc.load(), 0);
    assert_true(moved >= 16);  // the moving keys did move: the check ran across the migration
    assert_int_equal(stale, 0);
    assert_int_equal(writer_errors, 0);
    assert_int_equal(reader_errors.load(), 0);
    assert_true(g_cluster->wait_ok(std::chrono::seconds(10)));
    cachekit_cache_free(scratch);
    cachekit_cache_free(w);
    cachekit_cache_free(b);
    cachekit_cache_free(a);
}

}  // namespace

// incr/add/touch/delete_many on the cluster through a raw backend handle: the
// shared checks, then one delete_many of keys on every primary (one UNLINK
// per slot, all nodes written before any reply is read).
void test_backend_ops_on_the_cluster(void **) {
    cachekit_backend_options o = CACHEKIT_BACKEND_OPTIONS_INIT;
    o.fail_closed = 1;
    o.command_timeout_ms = 2000;
    cachekit_backend *b = nullptr;
    assert_int_equal(cachekit_backend_open(&b, g_url.c_str(), &o), CACHEKIT_OK);
    check_backend_ops(b);
    std::vector<std::string> keys;
    for (int i = 0; i < 300; ++i) keys.push_back("dm:" + std::to_string(i));
    std::vector<const void *> ptrs;
    std::vector<size_t> lens;
    for (const std::string &k : keys) {
        assert_int_equal(cachekit_backend_set(b, k.data(), k.size(), "v", 1, 60.0), CACHEKIT_OK);
        ptrs.push_back(k.data());
        lens.push_back(k.size());
    }
    ptrs.push_back("dm:none");
    lens.push_back(7);
    uint64_t deleted = 0;
    assert_int_equal(cachekit_backend_delete_many(b, &deleted, ptrs.data(), lens.data(), ptrs.size()), CACHEKIT_OK);
    assert_int_equal(deleted, 300);
    for (const std::string &k : keys) assert_int_equal(cachekit_backend_exists(b, k.data(), k.size()), CACHEKIT_ENOTFOUND);
    cachekit_backend_free(b);
}

int main() {
    RedisCluster::require_or_skip("test_cluster_cache");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_caches_share_the_cluster),
        cmocka_unit_test(test_backend_ops_on_the_cluster),
        cmocka_unit_test(test_get_or_load_with_the_cluster_lock),
        cmocka_unit_test(test_wrong_password),
        cmocka_unit_test(test_coherence_raw_write_on_another_node),
        cmocka_unit_test(test_coherence_killed_feed_flushes),
        cmocka_unit_test(test_cluster_metrics),
        cmocka_unit_test(test_coherence_refresh_keeps_l1),
        cmocka_unit_test(test_coherence_lagging_replica_read),
        cmocka_unit_test(test_coherence_during_live_reshard),  // changes the cluster: last
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
