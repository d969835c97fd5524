// rediss:// against private TLS redis-servers: round trips, batches, a big
// value, AUTH+SELECT, certificate and host name checks, mutual TLS, a
// handshake that never answers, a server killed mid-use, fork(), the idle
// probe, the L1 coherence feed (its sessions and its publisher) over TLS.
// The CAs and certificates are made per run (tls_certs.hpp).
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "feed_watcher.hpp"
#include "l2/redis/transport.hpp"
#include "tls_certs.hpp"
// Last: they need cmocka.h.
#include "redis_test_support.hpp"
#include "raw_redis.hpp"

namespace {

using cachekit::Buffer;
using cachekit::l2::Backend;
using cachekit::l2::KeyValue;
using namespace std::chrono_literals;

using cachekit::testing::TlsServer;

cachekit::testing::TlsServers servers;  // tls_certs.hpp: main, mutual, wrong_name
std::string &dir = servers.dir;         // certificates
TlsServer &main_server = servers.main;  // password s3cret, cert for 127.0.0.1 and localhost
TlsServer &mutual_server = servers.mutual;
TlsServer &wrong_name = servers.wrong_name;

std::string url(const TlsServer &s, const std::string &params, const std::string &host = "127.0.0.1",
                const std::string &userinfo = "", int db = 0) {
    return "rediss://" + userinfo + host + ":" + std::to_string(s.tls_port) + "/" + std::to_string(db) +
           (params.empty() ? "" : "?" + params);
}
std::string ca_param() { return "ssl_ca_certs=" + dir + "/ca.crt"; }
std::string main_url(const std::string &extra = "", int db = 0) {
    return url(main_server, ca_param() + extra, "127.0.0.1", ":s3cret@", db);
}

int setup(void **) { return servers.start() ? 0 : -1; }

int teardown(void **) {
    servers.stop();
    return 0;
}

std::unique_ptr<Backend> open(const std::string &u, std::chrono::milliseconds connect = 2000ms) {
    cachekit::l2::RedisConfig config = cachekit::l2::parse_redis_url(u);
    config.command_timeout = 5000ms;
    config.connect_timeout = connect;
    config.reconnect_backoff_min = 0ms;
    config.reconnect_backoff_max = 0ms;
    config.pool_size = 4;
    return cachekit::l2::open_redis(config);
}

// The code of one get, with its message.
int get_error(Backend &b, std::string *message) {
    return rt::error_of([&] {
        Buffer out;
        b.get("probe", out.get(), rt::soon());
    }, message);
}

bool contains(const std::string &text, const char *part) { return text.find(part) != std::string::npos; }

void test_round_trip_and_batch(void **) {
    auto b = open(main_url());
    b->set("k", "v", std::nullopt, rt::soon());
    Buffer out;
    assert_true(b->get("k", out.get(), rt::soon()));
    assert_int_equal(out.size(), 1);
    assert_memory_equal(out.data(), "v", 1);
    assert_true(b->del("k", rt::soon()));
    assert_false(b->get("k", out.get(), rt::soon()));

    std::vector<KeyValue> entries;
    std::vector<std::string> keys, values;
    for (int i = 0; i < 2500; ++i) {
        keys.push_back("batch:" + std::to_string(i));
        values.push_back(std::string(static_cast<size_t>(i % 300), static_cast<char>('a' + i % 26)));
    }
    for (int i = 0; i < 2500; ++i) entries.push_back({keys[static_cast<size_t>(i)], values[static_cast<size_t>(i)]});
    b->set_many(entries, std::nullopt, rt::soon());
    for (int i = 0; i < 2500; i += 97) {
        assert_true(b->get(keys[static_cast<size_t>(i)], out.get(), rt::soon()));
        assert_int_equal(out.size(), values[static_cast<size_t>(i)].size());
    }
    auto health = b->health(rt::soon());
    assert_true(health.ok);
    assert_true(contains(health.detail, "TLS"));
}

void test_big_value(void **) {
    auto b = open(main_url());
    std::string value(4 << 20, '\0');
    for (size_t i = 0; i < value.size(); ++i) value[i] = static_cast<char>((i * 131) ^ (i >> 9));
    b->set("big", value, std::nullopt, rt::soon());
    Buffer out;
    assert_true(b->get("big", out.get(), rt::soon()));
    assert_int_equal(out.size(), value.size());
    assert_memory_equal(out.data(), value.data(), value.size());
}

void test_auth_and_select(void **) {
    auto in3 = open(main_url("", 3));
    auto in0 = open(main_url());
    in3->set("only-in-3", "x", std::nullopt, rt::soon());
    Buffer out;
    assert_true(in3->get("only-in-3", out.get(), rt::soon()));
    assert_false(in0->get("only-in-3", out.get(), rt::soon()));

    auto wrong = open(url(main_server, ca_param(), "127.0.0.1", ":nope@"));
    std::string message;
    assert_int_equal(get_error(*wrong, &message), CACHEKIT_EBACKEND);
    assert_true(contains(message, "AUTH"));
    assert_false(contains(message, "nope"));
}

void test_wrong_ca(void **) {
    auto b = open(url(main_server, "ssl_ca_certs=" + dir + "/other-ca.crt", "127.0.0.1", ":s3cret@"));
    std::string message;
    assert_int_equal(get_error(*b, &message), CACHEKIT_EBACKEND);
    assert_true(contains(message, "certificate verify failed"));
    const std::string where = "127.0.0.1:" + std::to_string(main_server.tls_port);
    assert_true(contains(message, where.c_str()));
    assert_false(contains(message, "s3cret"));
}

void test_host_name(void **) {
    auto strict = open(url(wrong_name, ca_param()));
    std::string message;
    assert_int_equal(get_error(*strict, &message), CACHEKIT_EBACKEND);
    assert_true(contains(message, "certificate verify failed"));
    assert_true(contains(message, "mismatch"));

    auto loose = open(url(wrong_name, ca_param() + "&ssl_check_hostname=false"));
    assert_int_equal(get_error(*loose, nullptr), 0);
    // The good certificate names localhost too.
    auto by_name = open(url(main_server, ca_param(), "localhost", ":s3cret@"));
    assert_int_equal(get_error(*by_name, nullptr), 0);
}

void test_cert_reqs_none(void **) {
    auto b = open(url(main_server, "ssl_cert_reqs=none", "127.0.0.1", ":s3cret@"));
    assert_int_equal(get_error(*b, nullptr), 0);
    // Without our CA the system's roots do not know it.
    auto system = open(url(main_server, "", "127.0.0.1", ":s3cret@"));
    std::string message;
    assert_int_equal(get_error(*system, &message), CACHEKIT_EBACKEND);
    assert_true(contains(message, "certificate verify failed"));
}

void test_mutual_tls(void **) {
    auto anonymous = open(url(mutual_server, ca_param()));
    assert_int_equal(get_error(*anonymous, nullptr), CACHEKIT_EBACKEND);
    auto stranger = open(url(mutual_server, ca_param() + "&ssl_certfile=" + dir + "/stranger.crt&ssl_keyfile=" + dir +
                                                "/stranger.key"));
    assert_int_equal(get_error(*stranger, nullptr), CACHEKIT_EBACKEND);
    auto client = open(url(mutual_server, ca_param() + "&ssl_certfile=" + dir + "/client.crt&ssl_keyfile=" + dir +
                                              "/client.key"));
    assert_int_equal(get_error(*client, nullptr), 0);
}

void test_bad_files(void **) {
    std::string message;
    const std::string missing = dir + "/no-such-ca.pem";
    assert_int_equal(rt::error_of([&] { open(url(main_server, "ssl_ca_certs=" + missing)); }, &message),
                     CACHEKIT_EINVAL);
    assert_true(contains(message, missing.c_str()));
    assert_int_equal(rt::error_of([&] { open(url(main_server, "ssl_ca_path=" + dir + "/no-such-dir")); }, &message),
                     CACHEKIT_EINVAL);
    assert_true(contains(message, "no-such-dir"));
    assert_int_equal(rt::error_of([&] {
                         open(url(main_server, ca_param() + "&ssl_certfile=" + dir + "/client.crt&ssl_keyfile=" + dir +
                                                   "/server.key"));
                     }, &message),
                     CACHEKIT_EINVAL);
    assert_true(contains(message, "server.key"));
}

// A listener that accepts (in the kernel's backlog) and never speaks TLS.
void test_silent_handshake(void **) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(fd, reinterpret_cast<sockaddr *>(&addr), sizeof addr), 0);
    socklen_t len = sizeof addr;
    assert_int_equal(getsockname(fd, reinterpret_cast<sockaddr *>(&addr), &len), 0);
    assert_int_equal(listen(fd, 8), 0);
    const std::string u = "rediss://127.0.0.1:" + std::to_string(ntohs(addr.sin_port)) + "?" + ca_param();
    auto b = open(u, 300ms);
    std::string message;
    assert_int_equal(get_error(*b, &message), CACHEKIT_ETIMEOUT);
    assert_true(contains(message, "TLS handshake timed out"));
    close(fd);
}

void test_server_killed(void **) {
    auto b = open(main_url());
    b->set("survivor", "1", std::nullopt, rt::soon());
    main_server.server->kill();
    assert_int_not_equal(get_error(*b, nullptr), 0);
    main_server.server->restart();
    assert_true(rt::eventually([&] { return get_error(*b, nullptr) == 0; }));
    b->set("after", "2", std::nullopt, rt::soon());
    Buffer out;
    assert_true(b->get("after", out.get(), rt::soon()));
}

void test_fork(void **) {
    auto b = open(main_url());
    b->set("parent", "p", std::nullopt, rt::soon());
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        int rc = 0;
        try {
            Buffer out;
            b->set("child", "c", std::nullopt, rt::soon());
            if (!b->get("parent", out.get(), rt::soon())) rc = 2;
        } catch (...) {
            rc = 1;
        }
        _exit(rc);
    }
    // The parent keeps using its own (inherited-by-the-child) connection meanwhile.
    Buffer out;
    for (int i = 0; i < 50; ++i) assert_true(b->get("parent", out.get(), rt::soon()));
    int status = 0;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_true(b->get("child", out.get(), rt::soon()));
    assert_true(b->get("parent", out.get(), rt::soon()));
}

long long connections_received(cachekit::testing::RawRedis &raw) {
    const std::string info = raw.text({"INFO", "stats"});
    const std::string field = "total_connections_received:";
    const size_t at = info.find(field);
    assert_true(at != std::string::npos);
    return std::atoll(info.c_str() + at + field.size());
}

// An idle TLS connection past the probe age is probed and kept: the server
// sees no new connection. (Session tickets are usually consumed by the
// first reply's read already; tls::idle_ok covers the case they are not.)
void test_idle_probe(void **) {
    auto b = open(url(wrong_name, ca_param() + "&ssl_check_hostname=false"));
    Buffer out;
    b->set("idle", "1", std::nullopt, rt::soon());
    cachekit::testing::RawRedis raw(wrong_name.server->port());
    const long long before = connections_received(raw);
    std::this_thread::sleep_for(1200ms);  // past kProbeAfterIdleMs
    assert_true(b->get("idle", out.get(), rt::soon()));
    assert_true(b->get("idle", out.get(), rt::soon()));
    assert_int_equal(connections_received(raw), before);
}

// A reconnect resumes: the transport's context keeps the session (TLS 1.3
// ticket) the server gave the last connection and offers it on the next;
// a connection freed without close_notify (as every one of ours is) leaves
// it resumable. A context of its own starts with a full handshake.
void test_session_resumption(void **) {
    namespace tls = cachekit::l2::tls;
    cachekit::l2::RedisTls settings;
    settings.enabled = true;
    settings.ca_certs = dir + "/ca.crt";
    auto exchange = [&](const tls::Context &context) {
        const int fd = socket(AF_INET, SOCK_STREAM, 0);
        assert_true(fd >= 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_port = htons(static_cast<uint16_t>(main_server.tls_port));
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        assert_int_equal(connect(fd, reinterpret_cast<sockaddr *>(&addr), sizeof addr), 0);
        SSL *ssl = context.connect(fd, std::chrono::steady_clock::now() + 5s, "test");
        const bool resumed = tls::Context::resumed(ssl);
        const char ping[] = "PING\r\n";
        char reply[64];
        assert_true(tls::write(ssl, ping, sizeof ping - 1) > 0);
        assert_true(tls::read(ssl, reply, sizeof reply) > 0);  // -NOAUTH: a reply, and the tickets before it
        tls::forget(ssl);
        close(fd);
        return resumed;
    };
    const tls::Context context(settings, "127.0.0.1");
    assert_false(exchange(context));
    assert_true(exchange(context));
    assert_true(exchange(context));
    const tls::Context other(settings, "127.0.0.1");
    assert_false(exchange(other));
}

std::string client_cert_params() {
    return "&ssl_certfile=" + dir + "/client.crt&ssl_keyfile=" + dir + "/client.key";
}

struct Watch {
    cachekit::testing::FeedWatcher watcher;
    std::unique_ptr<cachekit::l2::InvalidationFeed> feed;
    Watch(Backend &b, std::vector<std::string> prefixes) {
        cachekit::l2::WatchRequest request;
        request.prefixes = std::move(prefixes);
        request.handler = &watcher;
        feed = b.watch(request);
        assert_non_null(feed.get());
    }
    bool live() {
        return rt::eventually([&] { return watcher.is_live.load(); }, 10000ms);
    }
};

// Tracking over TLS, against the server that requires client certificates:
// the feed's session presents the URL's certificate, is subscribed, and
// reports a raw write. (It dials the TLS port: a plain session there would
// never get past its first command.)
void test_coherence_feed_over_tls(void **) {
    auto b = open(url(mutual_server, ca_param() + client_cert_params() + "&l1_coherence=tracking"));
    Watch w(*b, {"tc:"});
    assert_true(w.live());
    assert_string_equal(w.feed->mode(), "tracking");
    cachekit::testing::RawRedis raw(mutual_server.server->port());
    raw.text({"SET", "tc:k", "v"});
    assert_true(rt::eventually([&] { return w.watcher.saw("tc:k"); }, 10000ms));
}

// The reference SDK's channel over TLS: one feed's publisher announces, the
// other feed's session hears it (AUTH on both connections).
void test_sdk_channel_over_tls(void **) {
    auto writer = open(main_url("&l1_coherence=pubsub"));
    auto reader = open(main_url("&l1_coherence=pubsub"));
    Watch from(*writer, {}), to(*reader, {});
    assert_true(from.live() && to.live());
    assert_string_equal(to.feed->mode(), "pubsub");
    from.feed->announce("tls-announced");
    assert_true(rt::eventually([&] { return to.watcher.heard("tls-announced"); }, 10000ms));
}

// A feed whose server's certificate no trusted CA signed never goes live
// (the L1 stays shut): nothing is read from that server in clear.
void test_feed_refuses_untrusted_server(void **) {
    auto b = open(url(main_server, "ssl_ca_certs=" + dir + "/other-ca.crt&l1_coherence=tracking", "127.0.0.1",
                      ":s3cret@"));
    Watch w(*b, {"tu:"});
    assert_false(rt::eventually([&] { return w.watcher.is_live.load(); }, 1500ms));
}

}  // namespace

int main() {
    cachekit::testing::RedisServer::require_or_skip("test_redis_tls");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_and_batch),
        cmocka_unit_test(test_big_value),
        cmocka_unit_test(test_auth_and_select),
        cmocka_unit_test(test_wrong_ca),
        cmocka_unit_test(test_host_name),
        cmocka_unit_test(test_cert_reqs_none),
        cmocka_unit_test(test_mutual_tls),
        cmocka_unit_test(test_bad_files),
        cmocka_unit_test(test_silent_handshake),
        cmocka_unit_test(test_idle_probe),
        cmocka_unit_test(test_fork),
        cmocka_unit_test(test_session_resumption),
        cmocka_unit_test(test_coherence_feed_over_tls),
        cmocka_unit_test(test_sdk_channel_over_tls),
        cmocka_unit_test(test_feed_refuses_untrusted_server),
        cmocka_unit_test(test_server_killed),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
