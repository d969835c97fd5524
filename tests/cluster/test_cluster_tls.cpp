// rediss-cluster://: a 6-node cluster whose bus, replication and clients
// speak TLS (client certificates required), built once for the suite with
// certificates made per run (tls_certs.hpp). The client reaches every node
// through the TLS ports CLUSTER SLOTS names over TLS: a plain connection to
// them would fail its handshake, so a served call proves TLS all the way;
// the L1 coherence feeds speak TLS too. The failover case runs last: it
// changes the cluster.
#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cluster_harness.hpp"
#include "cluster_test_support.hpp"
#include "feed_watcher.hpp"
#include "l2/cluster/cluster_slots.hpp"
#include "l2/open_backend.hpp"
#include "tls_certs.hpp"
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
using cachekit::l2::OpenOptions;
using cachekit::l2::ResilientBackend;
using cachekit::testing::FeedWatcher;
using cachekit::testing::RedisCluster;
using namespace std::chrono_literals;
namespace cluster = cachekit::l2::cluster;

RedisCluster *g_cluster = nullptr;
std::string g_dir;  // certificates

using cachekit::testing::eventually;
using cachekit::testing::soon;

std::unique_ptr<ResilientBackend> open_url(const std::string &url, bool fail_open = true,
                                           const cachekit::l2::RedisTls &tls = {}) {
    // Generous timeouts: a TLS handshake on a loaded CI machine.
    OpenOptions o = cachekit::testing::live_options(fail_open, 2, 2000ms, 4000ms);
    o.redis_tls = tls;
    return cachekit::l2::open_backend(url, o);
}

std::unique_ptr<ResilientBackend> open_tls(bool fail_open = true, const std::string &query = "") {
    return open_url(g_cluster->tls_url(query), fail_open);
}

std::unique_ptr<cachekit::l2::InvalidationFeed> watch(ResilientBackend &b, FeedWatcher &watcher, const char *prefix) {
    cachekit::l2::WatchRequest request;
    request.prefixes = {prefix};
    request.handler = &watcher;
    auto feed = b.watch(request);
    assert_non_null(feed.get());
    return feed;
}

// A key with `prefix` whose slot `port`'s primary serves.
std::string key_on(int port, const std::string &prefix) {
    for (int i = 0;; ++i) {
        std::string key = prefix + std::to_string(i);
        if (g_cluster->owner_of(cluster::key_slot(key)) == port) return key;
    }
}

std::string get_on(int port, const std::string &key) { return cachekit::testing::get_on(*g_cluster, port, key); }

// The code of one fail-closed set, with its message.
int set_error(ResilientBackend &b, std::string *message) {
    try {
        b.set("probe", "v", std::nullopt, soon());
    } catch (const cachekit::Error &e) {
        *message = e.what();
        return e.code();
    }
    return 0;
}

bool contains(const std::string &text, const std::string &part) { return text.find(part) != std::string::npos; }

int setup(void **) {
    g_dir = cachekit::testing::make_tls_certs();
    if (g_dir.empty()) {
        print_error("cannot make test certificates with the openssl CLI\n");
        return -1;
    }
    try {
        g_cluster = new RedisCluster(1000, "", g_dir);
    } catch (const std::exception &e) {
        print_error("cannot build the TLS cluster: %s\n", e.what());
        return -1;
    }
    return 0;
}

int teardown(void **) {
    delete g_cluster;
    g_cluster = nullptr;
    cachekit::testing::run_shell("rm -rf " + g_dir);
    return 0;
}

// Keys over every primary's slots: each written over TLS, read back, found
// by a raw read on its owner, then batched and deleted.
void test_round_trips_on_every_primary(void **) {
    auto backend = open_tls(false);
    std::set<int> owners;
    std::vector<std::string> keys;
    for (int i = 0; i < 60; ++i) {
        const std::string key = "tls:" + std::to_string(i);
        keys.push_back(key);
        backend->set(key, "v" + std::to_string(i), std::nullopt, soon());
        Buffer out;
        assert_true(backend->get(key, out.get(), soon()));
        assert_true(out.view() == "v" + std::to_string(i));
        const int owner = g_cluster->owner_of(cluster::key_slot(key));
        assert_string_equal(get_on(owner, key).c_str(), ("v" + std::to_string(i)).c_str());
        owners.insert(owner);
    }
    assert_int_equal(owners.size(), 3);
    std::vector<std::string_view> views(keys.begin(), keys.end());
    std::vector<cachekit_buf> bufs(views.size(), CACHEKIT_BUF_INIT);
    std::vector<bool> found;
    backend->get_many(views, bufs.data(), found, soon());
    for (size_t i = 0; i < keys.size(); ++i) {
        assert_true(found[i]);
        assert_true(cachekit::buf_view(bufs[i]) == "v" + std::to_string(i));
    }
    for (cachekit_buf &b : bufs) cachekit::buf_release(&b);
    for (const std::string &key : keys) assert_true(backend->del(key, soon()));
    assert_string_equal(get_on(g_cluster->owner_of(cluster::key_slot(keys[0])), keys[0]).c_str(), "<none>");
}

// A node whose certificate no trusted CA signed, and a client without a
// certificate: refused with the reason and the node, never served in clear.
void test_untrusted_and_anonymous_refused(void **) {
    const int seed = g_cluster->tls_port_of(g_cluster->port(0));
    const std::string seed_url = "rediss-cluster://127.0.0.1:" + std::to_string(seed);
    std::string message;
    auto untrusted = open_url(seed_url + "?ssl_ca_certs=" + g_dir + "/other-ca.crt&ssl_certfile=" + g_dir +
                                  "/client.crt&ssl_keyfile=" + g_dir + "/client.key",
                              false);
    assert_int_equal(set_error(*untrusted, &message), CACHEKIT_EBACKEND);
    assert_true(contains(message, "certificate verify failed"));
    assert_true(contains(message, "127.0.0.1:" + std::to_string(seed)));
    auto anonymous = open_url(seed_url + "?ssl_ca_certs=" + g_dir + "/ca.crt", false);
    assert_int_equal(set_error(*anonymous, &message), CACHEKIT_EBACKEND);
    assert_true(contains(message, "127.0.0.1:" + std::to_string(seed)));
    // TLS to a plain port: the handshake fails, nothing is sent in clear.
    auto plain = open_url("rediss-cluster://127.0.0.1:" + std::to_string(g_cluster->port(0)) + "?ssl_ca_certs=" +
                              g_dir + "/ca.crt&ssl_certfile=" + g_dir + "/client.crt&ssl_keyfile=" + g_dir +
                              "/client.key",
                          false);
    assert_int_equal(set_error(*plain, &message), CACHEKIT_EBACKEND);
    assert_string_equal(get_on(g_cluster->owner_of(cluster::key_slot("probe")), "probe").c_str(), "<none>");
}

// The TLS settings as options (cachekit_backend_options' tls_* fields)
// instead of URL parameters: tls makes redis-cluster:// a TLS cluster.
void test_options_instead_of_params(void **) {
    cachekit::l2::RedisTls tls;
    tls.enabled = true;
    tls.ca_certs = g_dir + "/ca.crt";
    tls.certfile = g_dir + "/client.crt";
    tls.keyfile = g_dir + "/client.key";
    const int seed = g_cluster->tls_port_of(g_cluster->port(0));
    auto backend = open_url("redis-cluster://127.0.0.1:" + std::to_string(seed), false, tls);
    backend->set("topt:k", "v", std::nullopt, soon());
    Buffer out;
    assert_true(backend->get("topt:k", out.get(), soon()));
    assert_true(out.view() == "v");
    assert_string_equal(get_on(g_cluster->owner_of(cluster::key_slot("topt:k")), "topt:k").c_str(), "v");
}

// A forked child's calls open TLS sessions of its own (it never writes on
// the parent's): both go on working.
void test_fork_child_has_its_own_sessions(void **) {
    auto backend = open_tls(false);
    backend->set("tfork:k", "parent", std::nullopt, soon());
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int code = 0;
        try {
            Buffer out;
            for (int i = 0; i < 30; ++i) backend->set("tfork:c" + std::to_string(i), "child", std::nullopt, soon());
            if (!backend->get("tfork:k", out.get(), soon()) || out.view() != "parent") code = 2;
        } catch (...) {
            code = 3;
        }
        _exit(code);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    Buffer out;
    for (int i = 0; i < 30; ++i) {
        assert_true(backend->get("tfork:c" + std::to_string(i), out.get(), soon()));
        assert_true(out.view() == "child");
    }
}

// L1 coherence over TLS: one tracking session per primary, each over TLS
// with the client certificate, reporting a raw write on every primary.
void test_coherence_over_tls(void **) {
    auto backend = open_tls(true, "l1_coherence=tracking");
    FeedWatcher watcher;
    auto feed = watch(*backend, watcher, "tco:");
    assert_true(eventually([&] { return watcher.is_live.load(); }, 10s));
    for (int port : g_cluster->primary_ports()) {
        const std::string key = key_on(port, "tco:");
        auto raw = g_cluster->command(port, {"SET", key, "raw"});
        assert_true(raw && raw->type == REDIS_REPLY_STATUS);
        assert_true(eventually([&] { return watcher.saw(key); }, 10s));
    }
}

// A primary killed: its replica (replicating over TLS) is promoted, calls
// degrade to misses meanwhile (fail-open: no error, no wrong value), and
// writes then land on the promoted node over TLS. The coherence gate shuts
// with the victim's feed and opens again on the promoted node's.
void test_primary_killed_over_tls(void **) {
    auto backend = open_tls(true, "l1_coherence=tracking");
    FeedWatcher watcher;
    auto feed = watch(*backend, watcher, "tfo:");
    assert_true(eventually([&] { return watcher.is_live.load(); }, 10s));
    const int victim = g_cluster->primary_ports()[0];
    const std::string key = key_on(victim, "tfo:");
    backend->set(key, "survives", std::nullopt, soon());
    auto waited = g_cluster->command(victim, {"WAIT", "1", "2000"});
    assert_true(waited && waited->integer >= 1);
    g_cluster->kill(victim);
    assert_true(eventually([&] { return !watcher.is_live.load(); }, 10s));
    Buffer out;
    const bool hit = eventually([&] {
        if (!backend->get(key, out.get(), soon())) return false;
        assert_true(out.view() == "survives");  // a hit is never another value
        return true;
    }, 20s);
    assert_true(hit);
    backend->set(key, "after", std::nullopt, soon());
    const int promoted = g_cluster->owner_of(cluster::key_slot(key));
    assert_true(promoted != victim);
    assert_string_equal(get_on(promoted, key).c_str(), "after");
    assert_true(eventually([&] { return watcher.is_live.load(); }, 10s));
    auto raw = g_cluster->command(promoted, {"SET", key, "raw"});
    assert_true(raw && raw->type == REDIS_REPLY_STATUS);
    assert_true(eventually([&] { return watcher.saw(key); }, 10s));
    feed.reset();
    g_cluster->server_on(victim).restart();
    assert_true(g_cluster->wait_ok(20000ms));
}

}  // namespace

int main() {
    RedisCluster::require_or_skip("test_cluster_tls");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trips_on_every_primary),
        cmocka_unit_test(test_untrusted_and_anonymous_refused),
        cmocka_unit_test(test_options_instead_of_params),
        cmocka_unit_test(test_fork_child_has_its_own_sessions),
        cmocka_unit_test(test_coherence_over_tls),
        cmocka_unit_test(test_primary_killed_over_tls),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
