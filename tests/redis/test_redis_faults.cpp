// Faults: a paused server (SIGSTOP), a killed and restarted server, a wrong
// password, an exhausted pool, a server that is not there at all.
// One suite for both Redis backends: `test_redis_faults` runs the cases on a
// private redis-server (suite redis), `test_redis_faults tls` on the same
// over rediss:// (its TLS port, a test CA; suite redis), `test_redis_faults
// cluster` on a
// private 6-node Redis Cluster whose nodes are all paused / killed /
// restarted together (suite cluster; fault_target.hpp). Where the two
// differ by design (one breaker for the whole L2 or one per node), the case
// asks the target.
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "fault_target.hpp"
#include "l2/open_backend.hpp"
#include "redis_test_support.hpp"

namespace {

using cachekit::Buffer;
using cachekit::testing::ClusterTarget;
using cachekit::testing::FaultTarget;
using cachekit::testing::RedisServer;
using cachekit::testing::SingleTarget;
using namespace std::chrono_literals;

bool g_cluster = false;  // argv[1] == "cluster"
bool g_tls = false;      // argv[1] == "tls"
constexpr const char *kPassword = ClusterTarget::kPassword;

// The case's server: a fresh redis-server (with `password` when given; over
// TLS with "tls"), or the shared cluster (always with kPassword), whole.
std::shared_ptr<FaultTarget> target(const std::string &password = "") {
    if (g_cluster) return std::shared_ptr<FaultTarget>(std::shared_ptr<void>(), &ClusterTarget::shared());
    return std::make_shared<SingleTarget>(password, g_tls);
}

bool mentions(const std::string &message, std::initializer_list<const char *> words) {
    for (const char *w : words)
        if (message.find(w) != std::string::npos) return true;
    return false;
}

void test_paused_server_times_out(void **) {
    auto server = target();
    auto backend = server->open(server->url(), 200ms, 2);
    backend->set("k", "v", std::nullopt, rt::soon());
    Buffer out;
    assert_true(backend->get("k", out.get(), rt::soon()));
    if (g_tls) assert_non_null(std::strstr(backend->health(rt::soon()).detail.c_str(), "TLS"));  // really rediss://

    server->pause();
    // The command timeout (200 ms) bounds the call although the deadline is 5 s away.
    std::string message;
    assert_int_equal(rt::error_of([&] { backend->get("k", out.get(), rt::soon()); }, &message), CACHEKIT_ETIMEOUT);
    print_message("paused: %s\n", message.c_str());
    // A fresh connection (the timed-out one was discarded) times out too: the
    // kernel accepts the TCP connection, the stopped server never answers.
    assert_int_equal(rt::error_of([&] { backend->set("k2", "v", std::nullopt, rt::soon()); }), CACHEKIT_ETIMEOUT);
    // The deadline bounds it as well when it is the shorter one.
    auto slow = server->open(server->url(), 5000ms, 1);
    assert_int_equal(rt::error_of([&] { slow->get("k", out.get(), rt::Deadline::after(200ms)); }), CACHEKIT_ETIMEOUT);
    // A deadline already passed fails before any I/O.
    assert_int_equal(rt::error_of([&] { slow->get("k", out.get(), rt::Deadline::after(0ms)); }), CACHEKIT_ETIMEOUT);

    server->resume();
    assert_true(rt::eventually([&] {
        try {
            return backend->get("k", out.get(), rt::soon()) && out.view() == "v";
        } catch (const cachekit::Error &) {
            return false;
        }
    }, 5000ms));
    assert_true(slow->get("k", out.get(), rt::soon()));
    // The set that timed out may or may not have been applied; the connection state is clean either way.
    backend->set("k3", "v3", std::nullopt, rt::soon());
    assert_true(backend->get("k3", out.get(), rt::soon()));
}

// Through the resilience layer: a stopped server's timeouts are breaker
// failures like errors; once it opens, calls fail fast without waiting.
void test_timeouts_open_the_breaker(void **) {
    auto server = target();
    cachekit::l2::OpenOptions options;
    options.resilience.command_timeout = 150ms;
    options.resilience.fail_open = false;
    auto backend = cachekit::l2::open_backend(server->url(), options);
    Buffer out;
    assert_false(backend->get("k", out.get(), rt::soon()));
    server->pause();
    for (int i = 0; i < 5; ++i) {
        auto t0 = std::chrono::steady_clock::now();
        assert_int_equal(rt::error_of([&] { backend->get("k", out.get(), rt::soon()); }), CACHEKIT_ETIMEOUT);
        assert_true(std::chrono::steady_clock::now() - t0 < 2000ms);  // one command timeout, generously
    }
    // One server: the whole L2's breaker. A cluster: the key's node's (the
    // whole-L2 one stays closed, so one failed shard leaves the others on).
    if (server->whole_l2_breaker()) {
        assert_true(backend->breaker_state() == cachekit::l2::CircuitBreaker::State::Open);
        assert_int_equal(backend->stats().timeouts, 5);
    } else {
        assert_true(backend->breaker_state() == cachekit::l2::CircuitBreaker::State::Closed);
    }
    auto t0 = std::chrono::steady_clock::now();
    assert_int_equal(rt::error_of([&] { backend->get("k", out.get(), rt::soon()); }), CACHEKIT_ECIRCUIT_OPEN);
    assert_true(std::chrono::steady_clock::now() - t0 < 100ms);
    server->resume();
}

void test_pool_exhausted_waits_for_deadline(void **) {
    auto server = target();
    auto backend = server->open(server->url(), 1500ms, 1);
    backend->set("k", "v", std::nullopt, rt::soon());
    server->pause();
    // One thread holds the only connection, stuck on the paused server...
    std::thread holder([&] {
        Buffer out;
        rt::error_of([&] { backend->get("k", out.get(), rt::soon()); });
    });
    std::this_thread::sleep_for(200ms);
    // ...so this call waits for a connection until its deadline.
    std::string message;
    Buffer out;
    assert_int_equal(rt::error_of([&] { backend->get("k", out.get(), rt::Deadline::after(100ms)); }, &message),
                     CACHEKIT_ETIMEOUT);
    assert_non_null(std::strstr(message.c_str(), "free connection"));
    print_message("pool exhausted: %s\n", message.c_str());
    holder.join();
    server->resume();
    assert_true(rt::eventually([&] {
        try {
            return backend->get("k", out.get(), rt::soon());
        } catch (const cachekit::Error &) {
            return false;
        }
    }));
}

void test_killed_and_restarted(void **) {
    auto server = target();
    auto backend = server->open(server->url(), 1000ms, 4);
    // Open several pooled connections.
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&] {
            for (int i = 0; i < 50; ++i) backend->set("warm", "v", std::nullopt, rt::soon());
        });
    for (auto &t : threads) t.join();

    server->kill();
    Buffer out;
    // First, a large pipeline into a connection whose peer is gone: the send
    // fails (EPIPE/ECONNRESET) or the read sees EOF; either way EBACKEND, and
    // no SIGPIPE (this process keeps the default disposition, which would kill it).
    {
        std::string big(64 * 1024, 'x');
        std::vector<std::string> keys;
        for (int i = 0; i < 200; ++i) keys.push_back("big:" + std::to_string(i));
        std::vector<cachekit::l2::KeyValue> entries;
        for (auto &k : keys) entries.push_back({k, big});
        std::string message;
        assert_int_equal(rt::error_of([&] { backend->set_many(entries, std::nullopt, rt::soon()); }, &message),
                         CACHEKIT_EBACKEND);
        print_message("down, set_many: %s\n", message.c_str());
    }
    // While down: every call fails with EBACKEND (connection closed, refused,
    // or failing fast during the reconnect backoff), never hangs, never SIGPIPE.
    bool saw_backoff = false;
    for (int i = 0; i < 20; ++i) {
        std::string message;
        int code = rt::error_of([&] { backend->set("k", std::string(64 * 1024, 'x'), std::nullopt, rt::soon()); },
                                &message);
        if (code != CACHEKIT_EBACKEND) fail_msg("call %d while down: code %d (%s)", i, code, message.c_str());
        if (message.find("not reconnecting") != std::string::npos) saw_backoff = true;
        if (i < 3) print_message("down, set %d: %s\n", i, message.c_str());
        code = rt::error_of([&] { backend->get("k", out.get(), rt::soon()); }, &message);
        if (code != CACHEKIT_EBACKEND) fail_msg("get %d while down: code %d (%s)", i, code, message.c_str());
        if (i < 3) print_message("down, get %d: %s\n", i, message.c_str());
    }
    assert_true(saw_backoff);
    // Health says so: an error (one server) or a report naming the dead nodes (a cluster).
    bool healthy = true;
    const int health_code = rt::error_of([&] { healthy = backend->health(rt::soon()).ok; });
    assert_true(health_code == CACHEKIT_EBACKEND || (health_code == 0 && !healthy));

    server->restart();
    // Back: calls succeed again once the backoff window (<= 2 s) has passed.
    assert_true(rt::eventually([&] {
        try {
            backend->set("after", "restart", std::nullopt, rt::soon());
            return backend->get("after", out.get(), rt::soon()) && out.view() == "restart";
        } catch (const cachekit::Error &) {
            return false;
        }
    }, 10000ms));
    assert_true(backend->health(rt::soon()).ok);

    // A restart that closed idle connections (unused for over a second) is
    // absorbed: they are probed before reuse and dropped, and the very first
    // call after the restart succeeds on a fresh connection.
    server->restart();
    std::this_thread::sleep_for(1100ms);
    assert_true(backend->health(rt::soon()).ok);
    backend->set("again", "ok", std::nullopt, rt::soon());
    assert_true(backend->get("again", out.get(), rt::soon()));
}

void test_wrong_password(void **) {
    auto server = target(kPassword);
    auto open = [&](const std::string &url) { return server->open(url, 5000ms, 4); };
    Buffer out;
    // Right password (plain AUTH, and the ACL form with the default user).
    auto good = open(server->url());
    good->set("k", "v", std::nullopt, rt::soon());
    assert_true(good->get("k", out.get(), rt::soon()));
    auto acl = open(server->url_with(std::string("default:") + kPassword + "@"));
    assert_true(acl->get("k", out.get(), rt::soon()));

    std::string message;
    auto wrong = open(server->url_with(":nope@"));
    assert_int_equal(rt::error_of([&] { wrong->get("k", out.get(), rt::soon()); }, &message), CACHEKIT_EBACKEND);
    if (!mentions(message, {"WRONGPASS", "NOAUTH", "invalid password"})) fail_msg("message: %s", message.c_str());
    print_message("wrong password: %s\n", message.c_str());
    assert_null(std::strstr(message.c_str(), "nope"));
    // The next call inside the backoff window still names the cause.
    assert_int_equal(rt::error_of([&] { wrong->get("k", out.get(), rt::soon()); }, &message), CACHEKIT_EBACKEND);
    if (!mentions(message, {"WRONGPASS", "NOAUTH", "invalid password"})) fail_msg("message: %s", message.c_str());

    auto wrong_user = open(server->url_with(std::string("mallory:") + kPassword + "@"));
    assert_int_equal(rt::error_of([&] { wrong_user->get("k", out.get(), rt::soon()); }, &message), CACHEKIT_EBACKEND);
    if (!mentions(message, {"WRONGPASS", "NOAUTH", "invalid"})) fail_msg("message: %s", message.c_str());

    auto none = open(server->url_with(""));
    assert_int_equal(rt::error_of([&] { none->get("k", out.get(), rt::soon()); }, &message), CACHEKIT_EBACKEND);
    if (!mentions(message, {"NOAUTH"})) fail_msg("message: %s", message.c_str());
}

void test_nothing_listening(void **) {
    // A cluster has no single node to reconnect to: its URL with nothing
    // listening is test_cluster's test_nothing_listening (the slot map named).
    if (g_cluster) skip();
    // A loopback port nobody listens on (a server started and stopped).
    int port;
    {
        RedisServer gone;
        port = gone.port();
    }
    // Over TLS: refused before any handshake, with the TLS settings loaded.
    const std::string url = g_tls ? "rediss://127.0.0.1:" + std::to_string(port) + "/0?ssl_ca_certs=" +
                                        cachekit::testing::fault_tls_certs() + "/ca.crt"
                                  : "redis://127.0.0.1:" + std::to_string(port);
    cachekit::l2::RedisConfig config = cachekit::l2::parse_redis_url(url);
    config.reconnect_backoff_min = 2000ms;  // wide enough that the second call surely falls inside it
    config.reconnect_backoff_max = 2000ms;
    auto backend = cachekit::l2::open_redis(config);
    Buffer out;
    std::string message;
    assert_int_equal(rt::error_of([&] { backend->get("k", out.get(), rt::soon()); }, &message), CACHEKIT_EBACKEND);
    if (!mentions(message, {"refused", "connect"})) fail_msg("message: %s", message.c_str());
    // Within the backoff window: fails fast, no connect attempted, the cause named.
    assert_int_equal(rt::error_of([&] { backend->get("k", out.get(), rt::soon()); }, &message), CACHEKIT_EBACKEND);
    assert_non_null(std::strstr(message.c_str(), "not reconnecting"));
    assert_non_null(std::strstr(message.c_str(), "refused"));
    print_message("backoff: %s\n", message.c_str());
}

}  // namespace

int main(int argc, char **argv) {
    g_cluster = argc > 1 && std::strcmp(argv[1], "cluster") == 0;
    g_tls = argc > 1 && std::strcmp(argv[1], "tls") == 0;
    if (g_cluster)
        cachekit::testing::RedisCluster::require_or_skip("test_redis_faults cluster");
    else
        RedisServer::require_or_skip(g_tls ? "test_redis_faults tls" : "test_redis_faults");
    if (g_tls) {
        try {
            (void)cachekit::testing::fault_tls_certs();  // once, before the cases
        } catch (const std::exception &e) {
            std::fprintf(stderr, "test_redis_faults tls: %s\n", e.what());
            return 1;
        }
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_paused_server_times_out),
        cmocka_unit_test(test_timeouts_open_the_breaker),
        cmocka_unit_test(test_pool_exhausted_waits_for_deadline),
        cmocka_unit_test(test_killed_and_restarted),
        cmocka_unit_test(test_wrong_password),
        cmocka_unit_test(test_nothing_listening),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
