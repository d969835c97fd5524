// The Redis Cluster backend against a real 6-node cluster (3 primaries, 3
// replicas) built once for the whole suite. Cases that change the cluster
// (a reshard, a migration, a failover, a full restart) run last, in order.
#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cluster_harness.hpp"
#include "cluster_test_support.hpp"
#include "feed_watcher.hpp"
#include "l2/cluster/cluster_slots.hpp"
#include "l2/cluster/redis_cluster_backend.hpp"
#include "l2/open_backend.hpp"
#include "util/buffer.hpp"
#include "util/error.hpp"

#include <csetjmp>
#include <cstdarg>
#include <cstddef>

extern "C" {
#include <cmocka.h>
}

namespace {

using cachekit::Buffer;
using cachekit::l2::Deadline;
using cachekit::l2::KeyValue;
using cachekit::l2::OpenOptions;
using cachekit::l2::ResilientBackend;
using cachekit::testing::RedisCluster;
using namespace std::chrono_literals;
namespace cluster = cachekit::l2::cluster;

RedisCluster *g_cluster = nullptr;

using cachekit::testing::eventually;
using cachekit::testing::soon;

std::unique_ptr<ResilientBackend> open_cluster(const std::string &query = "", bool fail_open = true) {
    // A generous command timeout: a loaded CI machine must not turn a slow call into an error.
    return cachekit::l2::open_backend(g_cluster->url(query), cachekit::testing::live_options(fail_open, 4, 500ms, 2000ms));
}

// A key (with `prefix`) whose slot lies in [first, last].
std::string key_in(const std::string &prefix, unsigned first, unsigned last, int start = 0) {
    for (int i = start;; ++i) {
        std::string key = prefix + std::to_string(i);
        const unsigned slot = cluster::key_slot(key);
        if (slot >= first && slot <= last) return key;
    }
}

std::string get_on(int port, const std::string &key) { return cachekit::testing::get_on(*g_cluster, port, key); }

// A failed case may leave a node paused or stopped (cmocka leaves a case by
// longjmp: no destructor runs): the next case that changes the cluster starts from a whole one.
void heal() {
    g_cluster->start_all();
    assert_true(g_cluster->wait_ok(30000ms));
}

int setup(void **) {
    try {
        g_cluster = new RedisCluster(1000);
    } catch (const std::exception &e) {
        print_error("cannot build the cluster: %s\n", e.what());
        return -1;
    }
    return 0;
}

int teardown(void **) {
    delete g_cluster;
    g_cluster = nullptr;
    return 0;
}

// The slot of keys CLUSTER KEYSLOT computes agrees with ours.
void test_slots_agree_with_server(void **) {
    const int port = g_cluster->port(0);
    for (const char *key : {"foo", "bar", "{user1000}.following", "a{b}c", "x{}y", "{{z}}", ""}) {
        auto r = g_cluster->command(port, {"CLUSTER", "KEYSLOT", key});
        assert_non_null(r.get());
        assert_int_equal(r->integer, cluster::key_slot(key));
    }
}

// Round trips on keys of every shard (each primary's slot ranges: slots 0,
// 5461, 10923, 16383 and between), each checked on the owning node itself.
void test_round_trips_over_every_slot_range(void **) {
    auto backend = open_cluster();
    assert_string_equal(backend->kind(), "redis-cluster");
    Buffer out;
    std::set<int> owners;
    const unsigned edges[][2] = {{0, 0}, {1, 5460}, {5461, 5461}, {5462, 10922}, {10923, 10923}, {10924, 16382}, {16383, 16383}};
    for (auto &range : edges) {
        const std::string key = key_in("rt:", range[0], range[1]);
        const std::string value = "value of " + key;
        backend->set(key, value, std::nullopt, soon());
        assert_true(backend->get(key, out.get(), soon()));
        assert_true(out.view() == value);
        const int owner = g_cluster->owner_of(cluster::key_slot(key));
        owners.insert(owner);
        assert_string_equal(get_on(owner, key).c_str(), value.c_str());  // stored on the slot's primary
        assert_true(backend->exists(key, soon()));
        auto ttl = backend->ttl(key, soon());
        assert_true(ttl.has_value() && !ttl->has_value());
        backend->set(key, value, 60000ms, soon());
        cachekit::l2::Ttl remaining;
        assert_true(backend->get_with_ttl(key, out.get(), &remaining, soon()));
        assert_true(remaining && remaining->count() > 50000);
        assert_true(backend->expire(key, 3600000ms, soon()));  // refresh_ttl_on_get's call, on the key's node
        auto renewed = backend->ttl(key, soon());
        assert_true(renewed && *renewed && (*renewed)->count() > 3500000);
        assert_true(backend->del(key, soon()));
        assert_false(backend->expire(key, 3600000ms, soon()));
        assert_false(backend->get(key, out.get(), soon()));
        assert_false(backend->del(key, soon()));
    }
    assert_int_equal(owners.size(), 3);
    // Hash-tagged keys share a node; the stampede lock lives in its name's slot.
    auto token = backend->lock("{user1000}.lock", 5000ms, soon());
    assert_true(token.has_value());
    assert_false(backend->lock("{user1000}.lock", 5000ms, soon()).has_value());
    const int owner = g_cluster->owner_of(cluster::key_slot("user1000"));
    assert_string_equal(get_on(owner, "{user1000}.lock").c_str(), token->c_str());
    assert_true(backend->unlock("{user1000}.lock", *token, soon()));
    assert_false(backend->unlock("{user1000}.lock", *token, soon()));
    // The cache's stampede lock "<key>:lock" lives on the key's own node, as "{<key>}:lock".
    const std::string key = key_in("lk:", 0, 5460);
    auto held = backend->lock(key + ":lock", 5000ms, soon());
    assert_true(held.has_value());
    assert_false(backend->lock(key + ":lock", 5000ms, soon()).has_value());
    const int key_owner = g_cluster->owner_of(cluster::key_slot(key));
    assert_string_equal(get_on(key_owner, "{" + key + "}:lock").c_str(), held->c_str());
    assert_true(backend->unlock(key + ":lock", *held, soon()));
    assert_string_equal(get_on(key_owner, "{" + key + "}:lock").c_str(), "<none>");
}

void test_batches_across_nodes(void **) {
    auto backend = open_cluster();
    std::vector<std::string> keys, values;
    for (int i = 0; i < 300; ++i) {
        keys.push_back("batch:" + std::to_string(i));
        values.push_back("v" + std::to_string(i * 7));
    }
    std::vector<KeyValue> entries;
    for (size_t i = 0; i < keys.size(); ++i) entries.push_back({keys[i], values[i]});
    backend->set_many(entries, 60000ms, soon());
    std::vector<std::string_view> wanted(keys.begin(), keys.end());
    wanted.push_back("batch:missing");
    std::vector<cachekit_buf> bufs(wanted.size(), CACHEKIT_BUF_INIT);
    std::vector<bool> found;
    backend->get_many(wanted, bufs.data(), found, soon());
    std::set<int> owners;
    for (size_t i = 0; i < keys.size(); ++i) {
        assert_true(found[i]);
        assert_true(cachekit::buf_view(bufs[i]) == values[i]);
        owners.insert(g_cluster->owner_of(cluster::key_slot(keys[i])));
    }
    assert_false(found.back());
    for (cachekit_buf &b : bufs) cachekit::buf_release(&b);
    assert_int_equal(owners.size(), 3);
}

void test_clear_across_primaries(void **) {
    auto backend = open_cluster();
    for (int i = 0; i < 200; ++i) backend->set("clr:" + std::to_string(i), "x", std::nullopt, soon());
    for (int i = 0; i < 20; ++i) backend->set("keep:" + std::to_string(i), "y", std::nullopt, soon());
    assert_int_equal(backend->clear("clr:", ResilientBackend::clear_deadline()), 200);
    Buffer out;
    for (int i = 0; i < 200; ++i) assert_false(backend->get("clr:" + std::to_string(i), out.get(), soon()));
    for (int i = 0; i < 20; ++i) assert_true(backend->get("keep:" + std::to_string(i), out.get(), soon()));
    assert_int_equal(backend->clear("keep:", ResilientBackend::clear_deadline()), 20);
}

void test_health_reports_every_node(void **) {
    auto backend = open_cluster();
    cachekit::l2::Health h = backend->health(soon());
    print_message("health: %s\n", h.detail.c_str());
    assert_true(h.ok);
    for (int i = 0; i < RedisCluster::kNodes; ++i)
        assert_non_null(std::strstr(h.detail.c_str(), (":" + std::to_string(g_cluster->port(i)) + " ok").c_str()));
}

// read_from_replicas=yes sends reads to replicas (their GET counters move).
void test_reads_from_replicas_when_asked(void **) {
    auto backend = open_cluster("read_from_replicas=yes");
    auto replica_gets = [] {
        long long total = 0;
        for (int i = 0; i < RedisCluster::kNodes; ++i) {
            const int port = g_cluster->port(i);
            auto role = g_cluster->command(port, {"ROLE"});
            if (!role || role->type != REDIS_REPLY_ARRAY || std::string(role->element[0]->str) != "slave") continue;
            auto stats = g_cluster->command(port, {"INFO", "commandstats"});
            std::string text(stats->str, stats->len);
            size_t at = text.find("cmdstat_get:calls=");
            if (at != std::string::npos) total += std::atoll(text.c_str() + at + 18);
        }
        return total;
    };
    backend->set("replica:k", "v", std::nullopt, soon());
    const long long before = replica_gets();
    Buffer out;
    assert_true(eventually([&] { return backend->get("replica:k", out.get(), soon()) && out.view() == "v"; }, 5000ms));
    assert_true(replica_gets() > before);
    // Off by default: a plain backend's reads leave the replicas alone.
    auto plain = open_cluster();
    const long long mid = replica_gets();
    for (int i = 0; i < 10; ++i) plain->get("replica:k", out.get(), soon());
    assert_int_equal(replica_gets(), mid);
}

// No node listening at the seeds: the open succeeds (nothing is connected
// at open), fail-open reads are misses and writes are skipped, fail-closed
// callers get CACHEKIT_EBACKEND naming the problem; a bad URL is EINVAL.
void test_nothing_listening(void **) {
    OpenOptions o;
    o.connect_timeout = 200ms;
    o.resilience.command_timeout = 300ms;
    const std::string url = "redis-cluster://127.0.0.1:1,127.0.0.1:2";
    auto open_backend = cachekit::l2::open_backend(url, o);
    Buffer out;
    assert_false(open_backend->get("k", out.get(), soon()));
    open_backend->set("k", "v", std::nullopt, soon());
    o.resilience.fail_open = false;
    auto closed = cachekit::l2::open_backend(url, o);
    try {
        closed->get("k", out.get(), soon());
        fail_msg("expected an error");
    } catch (const cachekit::Error &e) {
        print_message("nothing listening: %s\n", e.what());
        assert_int_equal(e.code(), CACHEKIT_EBACKEND);
        assert_non_null(std::strstr(e.what(), "slot map"));
    }
    assert_false(closed->health(soon()).ok);
    try {
        cachekit::l2::open_backend("redis-cluster://127.0.0.1:1/3", o);
        fail_msg("expected EINVAL");
    } catch (const cachekit::Error &e) {
        assert_int_equal(e.code(), CACHEKIT_EINVAL);
    }
}

// A forked child drops the parent's connections, starts its own refresher,
// and works; the parent keeps working.
void test_fork_child_works(void **) {
    auto backend = open_cluster();
    backend->set("fork:k", "parent", std::nullopt, soon());
    Buffer out;
    assert_true(backend->get("fork:k", out.get(), soon()));
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int code = 0;
        try {
            Buffer child_out;
            for (int i = 0; i < 50; ++i) backend->set("fork:c" + std::to_string(i), "child", std::nullopt, soon());
            if (!backend->get("fork:k", child_out.get(), soon()) || child_out.view() != "parent") code = 2;
            if (!backend->get("fork:c49", child_out.get(), soon())) code = 3;
        } catch (...) {
            code = 4;
        }
        _exit(code);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_true(backend->get("fork:c0", out.get(), soon()));
    assert_true(out.view() == "child");
}

// The `cachekit` tool's set/get/inspect/del take the cluster URL.
const char *g_tool = nullptr;

std::string run_tool(const std::string &args, int *status) {
    std::string command = std::string(g_tool) + " " + args + " 2>&1";
    FILE *p = popen(command.c_str(), "r");
    std::string out;
    char buf[512];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    const int rc = pclose(p);
    *status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
    return out;
}

void test_tool_takes_the_cluster_url(void **) {
    if (g_tool == nullptr) skip();
    const std::string url = "'" + g_cluster->url() + "'";
    int status = 0;
    std::string out = run_tool("set tool:key --hex 68656c6c6f --backend " + url, &status);
    assert_int_equal(status, 0);
    out = run_tool("get tool:key --backend " + url, &status);
    print_message("tool get: %s", out.c_str());
    assert_int_equal(status, 0);
    assert_non_null(std::strstr(out.c_str(), "68656c6c6f"));
    const int owner = g_cluster->owner_of(cluster::key_slot("tool:key"));
    assert_string_equal(get_on(owner, "tool:key").c_str(), "hello");
    out = run_tool("inspect tool:key --backend " + url, &status);  // the stored bytes, read through the cluster
    assert_int_equal(status, 0);
    assert_non_null(std::strstr(out.c_str(), "size:        5 bytes"));
    out = run_tool("del tool:key --backend " + url, &status);
    assert_int_equal(status, 0);
    run_tool("get tool:key --backend " + url, &status);
    assert_int_equal(status, 1);  // missing
}

// A slot in migration: keys already moved answer ASK from the old owner;
// the backend follows with ASKING and the map is not changed.
void test_ask_during_migration(void **) {
    heal();
    auto backend = open_cluster();
    const unsigned slot = cluster::key_slot("{mig}");
    const int from = g_cluster->owner_of(slot);
    int to = 0;
    for (int p : g_cluster->primary_ports())
        if (p != from) to = p;
    const std::string from_id = g_cluster->id_of(from), to_id = g_cluster->id_of(to);
    backend->set("{mig}a", "A", std::nullopt, soon());
    backend->set("{mig}b", "B", std::nullopt, soon());
    const std::string s = std::to_string(slot);
    assert_string_equal(g_cluster->command(to, {"CLUSTER", "SETSLOT", s, "IMPORTING", from_id})->str, "OK");
    assert_string_equal(g_cluster->command(from, {"CLUSTER", "SETSLOT", s, "MIGRATING", to_id})->str, "OK");
    auto migrated = g_cluster->command(from, {"MIGRATE", "127.0.0.1", std::to_string(to), "{mig}a", "0", "5000"});
    assert_string_equal(migrated->str, "OK");
    Buffer out;
    // {mig}a lives on `to` now (ASK), {mig}b still on `from`; a new key goes to `to` (ASK).
    assert_true(backend->get("{mig}a", out.get(), soon()));
    assert_true(out.view() == "A");
    assert_true(backend->get("{mig}b", out.get(), soon()));
    assert_true(out.view() == "B");
    backend->set("{mig}c", "C", std::nullopt, soon());
    assert_string_equal(get_on(to, "{mig}c").c_str(), "<none>");  // a plain GET on `to` is MOVED back
    auto asking_get = [&](const std::string &key) {
        timeval tv{2, 0};
        redisContext *c = redisConnectWithTimeout("127.0.0.1", to, tv);
        freeReplyObject(redisCommand(c, "ASKING"));
        auto *r = static_cast<redisReply *>(redisCommand(c, "GET %s", key.c_str()));
        std::string v = r && r->type == REDIS_REPLY_STRING ? r->str : "<none>";
        freeReplyObject(r);
        redisFree(c);
        return v;
    };
    assert_string_equal(asking_get("{mig}c").c_str(), "C");
    // Finish the migration: the slot moves for good (MOVED from now on).
    g_cluster->command(from, {"MIGRATE", "127.0.0.1", std::to_string(to), "{mig}b", "0", "5000"});
    for (int p : g_cluster->primary_ports()) g_cluster->command(p, {"CLUSTER", "SETSLOT", s, "NODE", to_id});
    assert_true(g_cluster->wait_ok(10000ms));
    for (const char *k : {"{mig}a", "{mig}b", "{mig}c"}) assert_true(backend->get(k, out.get(), soon()));
    assert_int_equal(g_cluster->owner_of(slot), to);
}

// A live reshard (redis-cli --cluster reshard) while 4 threads write and
// read: no caller error, every write readable after.
void test_moved_during_live_reshard(void **) {
    heal();
    auto backend = open_cluster("", false);  // fail-closed: any error reaches the caller
    const std::vector<int> primaries = g_cluster->primary_ports();
    const std::string from = g_cluster->id_of(primaries[0]), to = g_cluster->id_of(primaries[1]);
    std::atomic<bool> stop{false};
    std::atomic<int> errors{0};
    std::mutex mu;
    std::map<std::string, std::string> written;
    std::string first_error;
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            Buffer out;
            for (int i = 0; !stop.load(); ++i) {
                const std::string key = "rs:" + std::to_string(t) + ":" + std::to_string(i % 500);
                const std::string value = std::to_string(i);
                try {
                    backend->set(key, value, std::nullopt, soon());
                    {
                        std::lock_guard<std::mutex> lock(mu);
                        written[key] = value;
                    }
                    if (!backend->get(key, out.get(), soon()) || out.view() != value) throw cachekit::Error(-1, "lost " + key);
                } catch (const cachekit::Error &e) {
                    std::lock_guard<std::mutex> lock(mu);
                    if (errors++ == 0) first_error = e.what();
                }
            }
        });
    }
    std::this_thread::sleep_for(200ms);
    const int rc = g_cluster->cli({"--cluster", "reshard", "127.0.0.1:" + std::to_string(primaries[0]), "--cluster-from",
                                   from, "--cluster-to", to, "--cluster-slots", "300", "--cluster-yes",
                                   "--cluster-pipeline", "50"});
    std::this_thread::sleep_for(300ms);
    stop = true;
    for (auto &t : threads) t.join();
    assert_int_equal(rc, 0);
    if (errors) print_error("%d errors, first: %s\n", errors.load(), first_error.c_str());
    assert_int_equal(errors.load(), 0);
    Buffer out;
    for (auto &[key, value] : written) {
        assert_true(backend->get(key, out.get(), soon()));
        assert_true(out.view() == value);
    }
    print_message("reshard: %zu keys written and read back\n", written.size());
    assert_true(g_cluster->wait_ok(10000ms));
}

// One primary paused (SIGSTOP): its keys fail over fast to misses (its
// breaker opens), keys of the other shards keep being served.
void test_one_paused_shard_leaves_the_others_served(void **) {
    heal();
    auto backend = open_cluster();
    const std::vector<int> primaries = g_cluster->primary_ports();
    const int victim = primaries[0];
    std::vector<std::string> on_victim, elsewhere;
    for (int i = 0; on_victim.size() < 5 || elsewhere.size() < 5; ++i) {
        std::string key = "pz:" + std::to_string(i);
        (g_cluster->owner_of(cluster::key_slot(key)) == victim ? on_victim : elsewhere).push_back(key);
    }
    for (auto &k : on_victim) backend->set(k, "x", std::nullopt, soon());
    for (auto &k : elsewhere) backend->set(k, "y", std::nullopt, soon());
    // A short command timeout: the victim's breaker opens (3 timeouts) well
    // before cluster-node-timeout (1 s) lets its replica take over.
    OpenOptions o;
    o.resilience.command_timeout = 100ms;
    o.resilience.breaker.failure_threshold = 3;
    o.resilience.breaker.recovery = 10000ms;
    auto quick = cachekit::l2::open_backend(g_cluster->url(), o);
    Buffer out;
    assert_true(quick->get(on_victim[0], out.get(), soon()));  // connected and warm
    g_cluster->server_on(victim).pause();
    bool failed_over = false;
    for (int round = 0; round < 2; ++round)
        for (auto &k : on_victim) failed_over |= quick->get(k, out.get(), soon());  // fail-open: never an error
    const auto t0 = std::chrono::steady_clock::now();
    for (auto &k : on_victim) failed_over |= quick->get(k, out.get(), soon());
    const auto spent = std::chrono::steady_clock::now() - t0;
    // The victim's breaker is open: its keys fail fast (unless the replica was promoted meanwhile: then they hit).
    if (!failed_over) assert_true(spent < 250ms);  // 5 timeouts would take 500 ms
    assert_int_equal(quick->stats().breaker_state, CACHEKIT_BREAKER_CLOSED);  // the L2 as a whole stays on
    for (auto &k : elsewhere) {
        // Through the raw cluster backend: an error here would show, not turn into a miss.
        try {
            assert_true(backend->inner().get(k, out.get(), soon()));
        } catch (const cachekit::Error &e) {
            fail_msg("%s on a healthy shard: %s", k.c_str(), e.what());
        }
        assert_true(out.view() == "y");
    }
    g_cluster->server_on(victim).resume();
    // The pause may outlast cluster-node-timeout: then the victim's replica took over. Either way its keys come back.
    assert_true(eventually([&] { return backend->get(on_victim[0], out.get(), soon()); }, 10000ms));
    assert_true(g_cluster->wait_ok(20000ms));
}

using cachekit::testing::FeedWatcher;

size_t threads_now() {
    size_t n = 0;
    if (DIR *d = opendir("/proc/self/task")) {
        while (dirent *e = readdir(d)) n += e->d_name[0] != '.';
        closedir(d);
    }
    return n;
}

// The feed connections (CLIENT SETNAME cachekit-invalidation) on one node.
int feed_clients_on(int port) {
    auto list = g_cluster->command(port, {"CLIENT", "LIST"});
    if (!list || list->type != REDIS_REPLY_STRING) return -1;
    const std::string text(list->str, list->len);
    int n = 0;
    for (size_t at = 0; (at = text.find("name=cachekit-invalidation ", at)) != std::string::npos; ++at) ++n;
    return n;
}

// L1 coherence over the 3 primaries and, with read_from_replicas, the 3
// replicas too: every node gets its tracking connection, all served by one
// feed thread, not a thread per node.
void test_feed_threads_do_not_grow_with_nodes(void **) {
    for (const char *query : {"l1_coherence=tracking", "l1_coherence=tracking&read_from_replicas=yes"}) {
        auto backend = open_cluster(query);
        const bool replicas = std::strstr(query, "replicas") != nullptr;
        const size_t before = threads_now();
        FeedWatcher watcher;
        cachekit::l2::WatchRequest request;
        request.prefixes = {"th:"};
        request.handler = &watcher;
        auto feed = backend->watch(request);
        assert_non_null(feed.get());
        assert_true(eventually([&] { return watcher.is_live.load(); }, 10s));
        int watched = 0;
        for (int i = 0; i < RedisCluster::kNodes; ++i) watched += feed_clients_on(g_cluster->port(i)) >= 1;
        assert_int_equal(watched, replicas ? RedisCluster::kNodes : 3);
        const size_t added = threads_now() - before;
        if (added > 2) fail_msg("%s: %zu threads added for %d watched nodes", query, added, watched);
        feed.reset();
        assert_true(eventually([&] {
            int left = 0;
            for (int i = 0; i < RedisCluster::kNodes; ++i) left += feed_clients_on(g_cluster->port(i));
            return left == 0;
        }, 10s));
    }
}

// A primary killed: its replica is promoted; fail-open callers never see an
// error, and L2 hits resume after the failover and a topology refresh.
void test_primary_killed_replica_promoted(void **) {
    heal();
    auto backend = open_cluster("l1_coherence=tracking");
    // L1 coherence follows the failover: one feed per primary, the gate shut
    // when the victim's feed is lost, open again once the promoted replica's
    // feed is subscribed, which then reports writes on it.
    FeedWatcher watcher;
    cachekit::l2::WatchRequest request;
    request.prefixes = {"fo:"};
    request.handler = &watcher;
    auto feed = backend->watch(request);
    assert_non_null(feed.get());
    assert_true(eventually([&] { return watcher.is_live.load(); }, 10s));
    const std::vector<int> primaries = g_cluster->primary_ports();
    const int victim = primaries[0];
    std::string key;
    for (int i = 0;; ++i) {
        key = "fo:" + std::to_string(i);
        if (g_cluster->owner_of(cluster::key_slot(key)) == victim) break;
    }
    backend->set(key, "survives", std::nullopt, soon());
    // WAIT: the replica has it before the primary dies.
    auto waited = g_cluster->command(victim, {"WAIT", "1", "2000"});
    assert_true(waited && waited->integer >= 1);
    g_cluster->kill(victim);
    assert_true(eventually([&] { return !watcher.is_live.load(); }, 10s));  // its feed lost: shut
    const auto t0 = std::chrono::steady_clock::now();
    Buffer out;
    bool hit = false;
    while (!hit && std::chrono::steady_clock::now() - t0 < 20s) {
        hit = backend->get(key, out.get(), soon());  // never throws: fail-open
        if (!hit) std::this_thread::sleep_for(50ms);
    }
    assert_true(hit);
    assert_true(out.view() == "survives");
    print_message("failover: hits resumed after %lld ms\n",
                  (long long)std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count());
    backend->set(key, "after", std::nullopt, soon());
    assert_true(backend->get(key, out.get(), soon()) && out.view() == "after");
    assert_true(eventually([&] { return watcher.is_live.load(); }, 10s));
    const int promoted = g_cluster->owner_of(cluster::key_slot(key));
    assert_true(promoted != victim);
    auto raw = g_cluster->command(promoted, {"SET", key, "raw"});
    assert_true(raw && raw->type == REDIS_REPLY_STATUS);
    assert_true(eventually([&] { return watcher.saw(key); }, 10s));
    feed.reset();
    // The old primary comes back as a replica of the promoted one.
    g_cluster->server_on(victim).restart();
    assert_true(g_cluster->wait_ok(20000ms));
}

// Every node stopped, then started again on the same ports (the cluster
// state is in each node's nodes.conf): calls degrade, then resume.
void test_whole_cluster_stopped_and_restarted(void **) {
    heal();
    auto backend = open_cluster();
    Buffer out;
    backend->set("rr:k", "v", std::nullopt, soon());
    g_cluster->stop_all();
    assert_false(backend->get("rr:k", out.get(), soon()));  // fail-open: a miss
    backend->set("rr:k", "w", std::nullopt, soon());        // skipped, no error
    auto closed = open_cluster("", false);
    g_cluster->start_all();
    assert_true(g_cluster->wait_ok(30000ms));
    bool ok = eventually([&] {
        backend->set("rr:k2", "v2", std::nullopt, soon());
        return backend->get("rr:k2", out.get(), soon()) && out.view() == "v2";
    }, 20000ms);
    assert_true(ok);
    closed->set("rr:k3", "v3", std::nullopt, soon());
    assert_true(closed->get("rr:k3", out.get(), soon()));
}

}  // namespace

int main(int argc, char **argv) {
    RedisCluster::require_or_skip("test_cluster");
    if (argc > 1) g_tool = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slots_agree_with_server),
        cmocka_unit_test(test_round_trips_over_every_slot_range),
        cmocka_unit_test(test_batches_across_nodes),
        cmocka_unit_test(test_clear_across_primaries),
        cmocka_unit_test(test_health_reports_every_node),
        cmocka_unit_test(test_reads_from_replicas_when_asked),
        cmocka_unit_test(test_feed_threads_do_not_grow_with_nodes),
        cmocka_unit_test(test_nothing_listening),
        cmocka_unit_test(test_fork_child_works),
        cmocka_unit_test(test_tool_takes_the_cluster_url),
        cmocka_unit_test(test_ask_during_migration),
        cmocka_unit_test(test_moved_during_live_reshard),
        cmocka_unit_test(test_one_paused_shard_leaves_the_others_served),
        cmocka_unit_test(test_primary_killed_replica_promoted),
        cmocka_unit_test(test_whole_cluster_stopped_and_restarted),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
