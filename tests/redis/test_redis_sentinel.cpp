// redis-sentinel:// (issue 26, part 3): the URL parser, then a private
// primary, its replica and three sentinels on loopback: discovery, a dead
// first sentinel, an unknown master, a fake sentinel naming a replica
// (refused by the ROLE check), forged +switch-master messages (not followed),
// fork() (the child runs a watcher of its own), read_from_replicas (reads
// on the replica, the feed on both, announcements on the primary), and
// last a failover (the
// primary SIGKILLed) ridden through fail-open with no error and no wrong
// value, while a second backend that makes no call at all is moved to the
// new primary by its +switch-master watcher and its L1 coherence feed
// follows it there.
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "fake_server.hpp"
#include "feed_watcher.hpp"
#include "l2/backend_label.hpp"
#include "l2/open_backend.hpp"
#include "l2/sentinel/redis_sentinel_backend.hpp"
#include "l2/sentinel/switch_watcher.hpp"
#include "sentinel_harness.hpp"
#include "tls_certs.hpp"
// Last: they need cmocka.h.
#include "redis_test_support.hpp"
#include "raw_redis.hpp"

namespace {

using cachekit::Buffer;
using cachekit::l2::SentinelConfig;
using cachekit::testing::RawRedis;
using cachekit::testing::RedisServer;
using cachekit::testing::RedisServerOptions;
using cachekit::testing::SentinelProcess;
using namespace std::chrono_literals;

bool contains(const std::string &text, const char *part) { return text.find(part) != std::string::npos; }

// The value of an unlabelled series in a metrics text (-1: absent).
long long series(const std::string &text, const std::string &name) {
    const size_t at = text.find("\n" + name + " ");
    if (at == std::string::npos) return -1;
    return std::atoll(text.c_str() + at + name.size() + 2);
}

std::string primary_series(int port) {
    return "cachekit_redis_sentinel_primary{address=\"127.0.0.1:" + std::to_string(port) + "\"} 1";
}

int parse_error(const std::string &url, std::string *message = nullptr) {
    return rt::error_of([&] { (void)cachekit::l2::parse_sentinel_url(url); }, message);
}

// --- the URL, no server -----------------------------------------------------

void test_url_forms(void **) {
    SentinelConfig c = cachekit::l2::parse_sentinel_url("redis-sentinel://s1,s2:26380,[::1]:7000/mymaster");
    assert_int_equal(c.sentinels.size(), 3);
    assert_string_equal(c.sentinels[0].host.c_str(), "s1");
    assert_int_equal(c.sentinels[0].port, 26379);  // the default
    assert_int_equal(c.sentinels[1].port, 26380);
    assert_string_equal(c.sentinels[2].host.c_str(), "::1");
    assert_int_equal(c.sentinels[2].port, 7000);
    assert_string_equal(c.master_name.c_str(), "mymaster");
    assert_int_equal(c.data.db, 0);
    assert_false(c.data.tls.enabled);

    c = cachekit::l2::parse_sentinel_url(
        "REDIS-SENTINEL://alice:p%40ss@h:1/m/5?sentinel_password=sp&sentinel_username=su&l1_coherence=off");
    assert_string_equal(c.data.username.c_str(), "alice");
    assert_string_equal(c.data.password.c_str(), "p@ss");  // for the data nodes
    assert_string_equal(c.sentinel_username.c_str(), "su");
    assert_string_equal(c.sentinel_password.c_str(), "sp");
    assert_int_equal(c.data.db, 5);

    c = cachekit::l2::parse_sentinel_url("rediss-sentinel://h/m?ssl_cert_reqs=none&ssl_ca_certs=/tmp/ca.pem");
    assert_true(c.data.tls.enabled);
    assert_true(c.data.tls.cert_reqs == cachekit::l2::RedisTls::CertReqs::None);
    assert_string_equal(c.data.tls.ca_certs.c_str(), "/tmp/ca.pem");
    assert_int_equal(c.sentinels[0].port, 26379);
}

void test_url_errors(void **) {
    struct Case {
        const char *url;
        const char *says;
    };
    const Case cases[] = {
        {"redis-sentinel:///m", "no sentinel host"},
        {"redis-sentinel://@/m", "no sentinel host"},
        {"redis-sentinel://h1,,h2/m", "empty host"},
        {"redis-sentinel://h1", "no master name"},
        {"redis-sentinel://h1/", "no master name"},
        {"redis-sentinel://h1:0/m", "port"},
        {"redis-sentinel://h1:99999/m", "port"},
        {"redis-sentinel://h1:x/m", "port"},
        {"redis-sentinel://h1/m/x", "database"},
        {"redis-sentinel://h1/m/1/2", "more segments"},
        {"redis-sentinel://h1/m?foo=1", "unknown query parameter \"foo\""},
        {"redis-sentinel://h1/m?sentinel_password", "no value"},
        {"redis-sentinel://h1/m?l1_coherence=bogus", "l1_coherence"},
        {"redis-sentinel://h1/m?read_from_replicas=maybe", "takes yes or no"},
        {"redis-sentinel://h1/m?ssl_cert_reqs=none", "needs TLS"},
        {"rediss-sentinel://h1/m?ssl_cert_reqs=maybe", "ssl_cert_reqs"},
        {"redis-sentinel://h1/m?sentinel_username=u", "needs sentinel_password"},
        {"redis-sentinel://h 1/m", "space"},
        {"redis-sentinel://h1/m#x", "fragment"},
        {"redis-sentinel://bad!host/m", "not a valid host"},
        {"redis-sentinel://h1/m%zz", "percent"},
    };
    for (const Case &c : cases) {
        std::string message;
        const int code = parse_error(c.url, &message);
        if (code != CACHEKIT_EINVAL || !contains(message, c.says))
            fail_msg("%s: code %d, message \"%s\" (want EINVAL saying \"%s\")", c.url, code, message.c_str(), c.says);
        assert_true(contains(message, "Redis Sentinel URL"));
    }
    std::string many = "redis-sentinel://";
    for (int i = 0; i < 65; ++i) many += (i ? ",h" : "h") + std::to_string(i);
    std::string message;
    assert_int_equal(parse_error(many + "/m", &message), CACHEKIT_EINVAL);
    assert_true(contains(message, "more than 64"));
    // The password is never shown: not in messages, not in the log label.
    assert_int_equal(parse_error("redis-sentinel://u:hunter2@h1:0/m", &message), CACHEKIT_EINVAL);
    assert_false(contains(message, "hunter2"));
    assert_string_equal(
        cachekit::l2::backend_label("redis-sentinel://u:hunter2@h1,h2:1/m/2?sentinel_password=sp").c_str(),
        "redis-sentinel://u@h1,h2:1/m/2");
    // The dispatch knows the scheme and says it among the others.
    cachekit::l2::OpenOptions options;
    assert_int_equal(rt::error_of([&] { (void)cachekit::l2::open_backend_raw("nope://x", options); }, &message),
                     CACHEKIT_EINVAL);
    assert_true(contains(message, "redis-sentinel://"));
    // l1_coherence is the data connections' (the feed on the current primary).
    SentinelConfig c = cachekit::l2::parse_sentinel_url("redis-sentinel://h/m/2?l1_coherence=tracking");
    assert_true(c.data.l1_coherence == cachekit::l2::CoherenceMode::Tracking);
    assert_int_equal(c.data.db, 2);
    c = cachekit::l2::parse_sentinel_url("rediss-sentinel://h/m?l1_coherence=pubsub&ssl_cert_reqs=none");
    assert_true(c.data.l1_coherence == cachekit::l2::CoherenceMode::Pubsub);
    assert_true(c.data.tls.cert_reqs == cachekit::l2::RedisTls::CertReqs::None);
    assert_true(cachekit::l2::parse_sentinel_url("redis-sentinel://h/m").data.l1_coherence ==
                cachekit::l2::CoherenceMode::Off);
    assert_true(cachekit::l2::parse_sentinel_url("redis-sentinel://h/m?read_from_replicas=yes").read_from_replicas);
    assert_false(cachekit::l2::parse_sentinel_url("redis-sentinel://h/m?read_from_replicas=no").read_from_replicas);
    assert_false(cachekit::l2::parse_sentinel_url("redis-sentinel://h/m").read_from_replicas);
    // Replica reads with pub/sub coherence cannot be coherent: refused at open.
    assert_int_equal(rt::error_of(
                         [&] {
                             (void)cachekit::l2::open_backend_raw(
                                 "redis-sentinel://127.0.0.1:1/m?read_from_replicas=yes&l1_coherence=pubsub", options);
                         },
                         &message),
                     CACHEKIT_EINVAL);
    assert_true(contains(message, "read_from_replicas"));
}

// +switch-master parsing: five fields, our master, a port in range.
void test_switch_payload(void **) {
    std::string host;
    int port = 0;
    assert_true(cachekit::l2::parse_switch_master("m 127.0.0.1 6379 10.0.0.2 6380", "m", &host, &port));
    assert_string_equal(host.c_str(), "10.0.0.2");
    assert_int_equal(port, 6380);
    for (const char *bad : {"other 127.0.0.1 6379 10.0.0.2 6380", "m 127.0.0.1 6379 10.0.0.2", "m 1 2 3 4 5",
                            "m 127.0.0.1 6379 10.0.0.2 0", "m 127.0.0.1 6379 10.0.0.2 65536", "m a b c x", "",
                            "m 127.0.0.1 6379  6380"})
        assert_false(cachekit::l2::parse_switch_master(bad, "m", &host, &port));
}

// --- a primary, a replica, three sentinels -----------------------------------

struct World {
    std::string dir;
    std::unique_ptr<RedisServer> primary;
    std::unique_ptr<RedisServer> replica;
    std::vector<std::unique_ptr<SentinelProcess>> sentinels;
};
World *world = nullptr;

std::string sentinel_hosts() {
    std::string out;
    for (auto &s : world->sentinels) out += (out.empty() ? "" : ",") + ("127.0.0.1:" + std::to_string(s->port()));
    return out;
}

// Until the sentinels know the replica and each other (hello messages
// every 2 s): a failover needs both.
bool sentinels_ready() {
    for (auto &s : world->sentinels)
        if (s->master_field("num-slaves") != "1" || s->master_field("num-other-sentinels") != "2") return false;
    return true;
}

int setup(void **) {
    world = new World;
    char tmpl[] = "/tmp/cachekit-sentinel-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) return -1;
    world->dir = tmpl;
    world->primary = std::make_unique<RedisServer>();
    RedisServerOptions replica;
    replica.extra_args = {"--replicaof", "127.0.0.1", std::to_string(world->primary->port())};
    world->replica = std::make_unique<RedisServer>(replica);
    for (int i = 0; i < 3; ++i)
        world->sentinels.push_back(std::make_unique<SentinelProcess>(world->dir, world->primary->port()));
    if (!rt::eventually(sentinels_ready, 20000ms)) {
        std::fprintf(stderr, "the sentinels did not see the replica and each other (logs in %s)\n", world->dir.c_str());
        return -1;
    }
    return 0;
}

int teardown(void **) {
    world->sentinels.clear();
    world->replica.reset();
    world->primary.reset();
    std::error_code ignored;
    if (!std::getenv("CACHEKIT_KEEP_SENTINEL_LOGS")) std::filesystem::remove_all(world->dir, ignored);
    delete world;
    return 0;
}

std::unique_ptr<cachekit::l2::ResilientBackend> open(const std::string &url, bool fail_open = false) {
    cachekit::l2::OpenOptions options;
    options.connect_timeout = 1000ms;
    options.resilience.command_timeout = 1000ms;
    options.resilience.fail_open = fail_open;
    options.resilience.breaker_enabled = false;
    return cachekit::l2::open_backend(url, options);
}

void test_discovery_set_get(void **) {
    auto b = open("redis-sentinel://" + sentinel_hosts() + "/m/3");
    assert_string_equal(b->kind(), "redis");
    b->set("disc", "v1", std::nullopt, rt::soon());
    Buffer out;
    assert_true(b->get("disc", out.get(), rt::soon()));
    assert_true(out.view() == "v1");
    RawRedis raw(world->primary->port());
    raw.text({"SELECT", "3"});
    assert_true(raw.has("disc"));  // on the primary, in db 3
    auto h = b->health(rt::soon());
    assert_true(h.ok);
    assert_true(contains(h.detail, "sentinel master \"m\""));
    assert_true(contains(h.detail, std::to_string(world->primary->port()).c_str()));
    assert_true(b->del("disc", rt::soon()));
}

// incr/add/touch/delete_many go to the primary the sentinels name.
void test_counter_ops_on_the_primary(void **) {
    auto b = open("redis-sentinel://" + sentinel_hosts() + "/m/4");
    RawRedis raw(world->primary->port());
    raw.text({"SELECT", "4"});
    assert_false(b->incr("ops:n", 1, rt::soon()).has_value());
    b->set("ops:n", "41", std::nullopt, rt::soon());
    assert_int_equal(*b->incr("ops:n", 1, rt::soon()), 42);
    assert_true(raw.text({"GET", "ops:n"}) == "42");
    assert_true(b->add("ops:a", "v", std::nullopt, rt::soon()));
    assert_false(b->add("ops:a", "w", std::nullopt, rt::soon()));
    assert_true(b->touch("ops:a", cachekit::l2::Ttl{60000ms}, rt::soon()));
    assert_true(raw.integer({"PTTL", "ops:a"}) > 0);
    assert_true(b->touch("ops:a", std::nullopt, rt::soon()));
    assert_int_equal(raw.integer({"PTTL", "ops:a"}), -1);
    const std::vector<std::string_view> keys = {"ops:n", "ops:a", "ops:none"};
    assert_int_equal(b->delete_many(keys, rt::soon()), 2);
    assert_false(raw.has("ops:n"));
}

void test_first_sentinel_down(void **) {
    const int dead = cachekit::testing::free_port();  // nothing listens there
    auto b = open("redis-sentinel://127.0.0.1:" + std::to_string(dead) + "," + sentinel_hosts() + "/m");
    b->set("first-down", "v", std::nullopt, rt::soon());
    Buffer out;
    assert_true(b->get("first-down", out.get(), rt::soon()));
    assert_true(out.view() == "v");
}

void test_unknown_master(void **) {
    auto b = open("redis-sentinel://" + sentinel_hosts() + "/nosuch");
    std::string message;
    Buffer out;
    assert_int_equal(rt::error_of([&] { b->get("k", out.get(), rt::soon()); }, &message), CACHEKIT_EBACKEND);
    assert_true(contains(message, "does not know master \"nosuch\""));
    // Fail-open (the default): a miss, no error.
    auto open_b = open("redis-sentinel://" + sentinel_hosts() + "/nosuch", true);
    assert_false(open_b->get("k", out.get(), rt::soon()));
}

// A READONLY reply (the primary demoted under us) makes the backend ask
// again and swap: a fake sentinel names A, then, once A is made a replica
// of B, names B. Neither server is the real sentinels' business.
void test_readonly_rediscovers(void **) {
    RedisServer a, b_server;
    std::atomic<int> named{a.port()};
    cachekit::testing::FakeServer fake([&](int fd, int) {
        while (fake.read_some(fd)) {
            const std::string port = std::to_string(named.load());
            const std::string answer =
                "*2\r\n$9\r\n127.0.0.1\r\n$" + std::to_string(port.size()) + "\r\n" + port + "\r\n";
            if (!cachekit::testing::FakeServer::write_all(fd, answer)) return;
        }
    });
    auto b = open("redis-sentinel://127.0.0.1:" + std::to_string(fake.port()) + "/m");
    b->set("ro", "on-a", std::nullopt, rt::soon());
    RawRedis raw_a(a.port()), raw_b(b_server.port());
    assert_true(raw_a.has("ro"));
    raw_a.text({"REPLICAOF", "127.0.0.1", std::to_string(b_server.port())});
    named = b_server.port();
    std::string message;
    assert_true(rt::eventually([&] {
        if (rt::error_of([&] { b->set("ro", "on-b", std::nullopt, rt::soon()); }, &message) != 0) return false;
        return raw_b.has("ro");
    }));
    print_message("while demoted: %s\n", message.c_str());
    auto h = b->health(rt::soon());
    assert_true(contains(h.detail, std::to_string(b_server.port()).c_str()));
}

// fork(): the child drops the sentinel and data connections it inherited
// (RedisNode and open_redis pools) and opens its own; the parent's stay in step.
void test_fork(void **) {
    auto b = open("redis-sentinel://" + sentinel_hosts() + "/m");
    b->set("parent", "p", std::nullopt, rt::soon());
    assert_true(rt::eventually(
        [&] { return series(b->metrics_text(), "cachekit_redis_sentinel_watcher_subscribed") == 1; }));
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        int rc = 0;
        try {
            Buffer out;
            // The parent's watcher (its thread is not here) is not reported as ours.
            if (series(b->metrics_text(), "cachekit_redis_sentinel_watcher_subscribed") != 0) rc = 3;
            b->set("child", "c", std::nullopt, rt::soon());
            if (!b->get("parent", out.get(), rt::soon())) rc = 2;
            // The first call started the child's own watcher, on its own connection.
            if (rc == 0 && !rt::eventually([&] {
                    return series(b->metrics_text(), "cachekit_redis_sentinel_watcher_subscribed") == 1;
                }))
                rc = 4;
        } catch (...) {
            rc = 1;
        }
        _exit(rc);
    }
    Buffer out;
    for (int i = 0; i < 50; ++i) assert_true(b->get("parent", out.get(), rt::soon()));
    int status = 0;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_true(b->get("child", out.get(), rt::soon()));
    assert_true(out.view() == "c");
    // The parent's watcher is still its own and still subscribed.
    assert_int_equal(series(b->metrics_text(), "cachekit_redis_sentinel_watcher_subscribed"), 1);
}

// read_from_replicas=yes: a key that only the replica holds (written there
// while it takes writes) is read, so reads go there; writes still land on
// the primary; with l1_coherence the feed watches the replica too (its own
// tracking connection there), and auto means tracking.
void test_read_from_replicas(void **) {
    // Only a replica that says it is connected to the primary is read from.
    RawRedis syncing(world->replica->port());
    assert_true(rt::eventually(
        [&] { return contains(syncing.text({"INFO", "replication"}), "master_link_status:up"); }, 20000ms));
    auto b = open("redis-sentinel://" + sentinel_hosts() + "/m?read_from_replicas=yes&l1_coherence=auto");
    b->set("rr:written", "w", std::nullopt, rt::soon());
    RawRedis primary(world->primary->port()), replica(world->replica->port());
    assert_true(primary.has("rr:written"));
    assert_int_equal(series(b->metrics_text(), "cachekit_redis_sentinel_replicas"), 1);
    replica.text({"CONFIG", "SET", "replica-read-only", "no"});
    replica.text({"SET", "rr:replica-only", "r"});
    Buffer out;
    int on_replica = 0;
    for (int i = 0; i < 4; ++i) on_replica += b->get("rr:replica-only", out.get(), rt::soon());
    assert_int_equal(on_replica, 4);  // one replica: every read goes there
    assert_true(out.view() == "r");
    assert_true(b->exists("rr:replica-only", rt::soon()));
    replica.text({"DEL", "rr:replica-only"});
    replica.text({"CONFIG", "SET", "replica-read-only", "yes"});
    assert_false(primary.has("rr:replica-only"));

    cachekit::testing::FeedWatcher watcher;
    cachekit::l2::WatchRequest request;
    request.prefixes = {"coh:"};
    request.handler = &watcher;
    auto feed = b->watch(request);
    assert_non_null(feed.get());
    assert_true(rt::eventually([&] { return watcher.is_live.load(); }));
    assert_string_equal(feed->mode(), "tracking");
    assert_false(primary.feed_client_id().empty());
    assert_false(replica.feed_client_id().empty());
    primary.text({"SET", "coh:rr", "1"});
    assert_true(rt::eventually([&] { return watcher.saw("coh:rr"); }));
    primary.text({"DEL", "coh:rr", "rr:written"});
    // Announcements go to the primary (a PUBLISH on a replica would reach
    // that replica's subscribers only).
    RawRedis sub(world->primary->port());
    timeval tv{10, 0};
    redisSetTimeout(sub.c, tv);
    freeReplyObject(redisCommand(sub.c, "SUBSCRIBE cachekit:py:invalidate:v1"));
    feed->announce("rr:announced");
    void *reply = nullptr;
    assert_int_equal(redisGetReply(sub.c, &reply), REDIS_OK);
    auto *m = static_cast<redisReply *>(reply);
    assert_int_equal(m->type, REDIS_REPLY_ARRAY);
    assert_true(contains(std::string(m->element[2]->str, m->element[2]->len), "rr:announced"));
    freeReplyObject(m);
}

// A hostile sentinel, listed first (so the watcher subscribes to it and
// discovery asks it first): it answers get-master-addr-by-name with
// whatever `named` says and, on demand, publishes a forged +switch-master
// naming the same address. Neither the read-only replica (ROLE slave) nor
// a dead port is followed: the backend asks again, refuses what the fake
// names, and the real sentinels still name the primary.
void test_forged_switch_not_followed(void **) {
    std::atomic<int> named{world->replica->port()};
    std::atomic<int> forge{0};  // messages wanted
    std::atomic<int> asked{0};  // get-master-addr-by-name requests seen
    std::atomic<bool> subscribed{false};
    cachekit::testing::FakeServer fake([&](int fd, int) {
        std::string in;
        int sent = 0;
        bool subscriber = false;
        while (!fake.stopping()) {
            pollfd p{fd, POLLIN, 0};
            if (::poll(&p, 1, 20) <= 0) {
                if (subscriber && sent < forge.load()) {
                    ++sent;
                    const std::string port = std::to_string(named.load());
                    const std::string payload = "m 127.0.0.1 " + std::to_string(world->primary->port()) + " 127.0.0.1 " + port;
                    const std::string msg = "*3\r\n$7\r\nmessage\r\n$14\r\n+switch-master\r\n$" +
                                            std::to_string(payload.size()) + "\r\n" + payload + "\r\n";
                    if (!cachekit::testing::FakeServer::write_all(fd, msg)) return;
                }
                continue;
            }
            char buf[4096];
            const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
            if (n <= 0) return;
            in.append(buf, size_t(n));
            std::string reply;
            if (contains(in, "get-master-addr-by-name")) {
                ++asked;
                const std::string port = std::to_string(named.load());
                reply = "*2\r\n$9\r\n127.0.0.1\r\n$" + std::to_string(port.size()) + "\r\n" + port + "\r\n";
            } else if (contains(in, "SETNAME")) {
                reply = "+OK\r\n";
            } else if (contains(in, "SUBSCRIBE")) {
                reply = "*3\r\n$9\r\nsubscribe\r\n$14\r\n+switch-master\r\n:1\r\n";
                subscriber = true;
                subscribed = true;
            } else if (contains(in, "PING")) {
                reply = "*2\r\n$4\r\npong\r\n$0\r\n\r\n";
            } else {
                continue;  // the rest of a command
            }
            in.clear();
            if (!cachekit::testing::FakeServer::write_all(fd, reply)) return;
        }
    });
    auto b = open("redis-sentinel://127.0.0.1:" + std::to_string(fake.port()) + "," + sentinel_hosts() + "/m");
    b->set("forged", "1", std::nullopt, rt::soon());  // the fake's replica refused, the real primary found
    assert_true(rt::eventually([&] { return subscribed.load(); }));
    const std::string primary = primary_series(world->primary->port());
    for (int dead : {0, 1}) {
        if (dead) named = cachekit::testing::free_port();  // nothing listens there
        const int before = asked.load();
        ++forge;
        // Heard, and acted on: the fake (the announcing sentinel) is asked again.
        assert_true(rt::eventually([&] {
            return series(b->metrics_text(), "cachekit_redis_sentinel_switch_announcements_total") == dead + 1 &&
                   asked.load() > before;
        }));
        const std::string m = b->metrics_text();
        assert_true(contains(m, primary.c_str()));
        assert_int_equal(series(m, "cachekit_redis_sentinel_primary_switches_total"), 0);
    }
    b->set("forged", "2", std::nullopt, rt::soon());
    RawRedis raw(world->primary->port());
    assert_string_equal(raw.text({"GET", "forged"}).c_str(), "2");  // the writes stayed on the primary
    assert_true(b->del("forged", rt::soon()));
}

// A fake sentinel naming a writable replica: the ROLE check refuses it, so
// nothing is written there (without the check the SET would land). The
// replica's primary is not the one the real sentinels watch: they must not
// learn of a replica that this test stops.
void test_sentinel_names_a_replica(void **) {
    RedisServer other_primary;
    RedisServerOptions o;
    o.extra_args = {"--replicaof", "127.0.0.1", std::to_string(other_primary.port()), "--replica-read-only", "no"};
    RedisServer writable_replica(o);
    const std::string port = std::to_string(writable_replica.port());
    const std::string answer = "*2\r\n$9\r\n127.0.0.1\r\n$" + std::to_string(port.size()) + "\r\n" + port + "\r\n";
    cachekit::testing::FakeServer fake([&](int fd, int) {
        while (fake.read_some(fd))
            if (!cachekit::testing::FakeServer::write_all(fd, answer)) return;
    });
    auto b = open("redis-sentinel://127.0.0.1:" + std::to_string(fake.port()) + "/m");
    std::string message;
    assert_int_equal(rt::error_of([&] { b->set("hostile", "x", std::nullopt, rt::soon()); }, &message),
                     CACHEKIT_EBACKEND);
    assert_true(contains(message, "does not say ROLE master"));
    RawRedis raw(writable_replica.port());
    assert_false(raw.has("hostile"));
}

// rediss-sentinel://: TLS to the sentinel and to the primary it names (its
// TLS port; the certificate holds IP:127.0.0.1), one CA for both; a wrong
// CA fails the sentinel's handshake.
void test_tls(void **) {
    const std::string certs = cachekit::testing::make_tls_certs();
    if (certs.empty()) {
        print_message("no openssl CLI: TLS case not run\n");
        return;
    }
    {
        cachekit::testing::TlsServer primary = cachekit::testing::start_tls_server(certs, "server", false);
        const int tls_port = cachekit::testing::free_port();
        const std::string tls = "tls-port " + std::to_string(tls_port) + "\ntls-cert-file " + certs +
                                "/server.crt\ntls-key-file " + certs + "/server.key\ntls-ca-cert-file " + certs +
                                "/ca.crt\ntls-auth-clients no\ntls-replication yes\n";
        SentinelProcess sentinel(world->dir, primary.tls_port, 1, tls);
        const std::string base = "rediss-sentinel://127.0.0.1:" + std::to_string(tls_port) + "/m?ssl_ca_certs=";
        auto b = open(base + certs + "/ca.crt");
        b->set("tls", "t", std::nullopt, rt::soon());
        Buffer out;
        assert_true(b->get("tls", out.get(), rt::soon()));
        assert_true(out.view() == "t");
        auto h = b->health(rt::soon());
        assert_true(contains(h.detail, "TLS"));
        // The +switch-master watcher speaks TLS to the sentinel too.
        assert_true(rt::eventually(
            [&] { return series(b->metrics_text(), "cachekit_redis_sentinel_watcher_subscribed") == 1; }));
        assert_true(contains(h.detail, std::to_string(primary.tls_port).c_str()));
        RawRedis raw(primary.server->port());  // the plain port: the write is there
        assert_true(raw.has("tls"));

        auto wrong = open(base + certs + "/other-ca.crt");
        std::string message;
        assert_int_equal(rt::error_of([&] { wrong->get("tls", out.get(), rt::soon()); }, &message), CACHEKIT_EBACKEND);
        assert_true(contains(message, "certificate verify failed"));
    }
    cachekit::testing::run_shell("rm -rf " + certs);
}

// SIGKILL the primary while calling in a loop through fail-open: no caller
// error, a read gives what was written for its key or a miss, and once the
// sentinels promote the replica, writes land there.
void test_failover(void **) {
    cachekit::l2::OpenOptions options;
    options.connect_timeout = 200ms;
    options.resilience.command_timeout = 250ms;
    options.resilience.breaker.recovery = 200ms;  // so the half-open trials come soon after the switch
    auto b = cachekit::l2::open_backend("redis-sentinel://" + sentinel_hosts() + "/m", options);
    Buffer out;
    // The first call also discovers: give it more than one command timeout on a busy machine.
    assert_true(rt::eventually([&] {
        b->set("before", "b", std::nullopt, rt::soon());
        return b->get("before", out.get(), rt::soon());
    }));

    // A second backend, with L1 coherence on a feed the test watches, that
    // makes no call during the failover: only its +switch-master watcher can
    // move it, and its feed must follow the primary it moves to.
    cachekit::l2::OpenOptions quiet_options;
    quiet_options.connect_timeout = 1000ms;
    quiet_options.resilience.command_timeout = 1000ms;
    quiet_options.resilience.fail_open = false;
    auto quiet = cachekit::l2::open_backend("redis-sentinel://" + sentinel_hosts() + "/m?l1_coherence=tracking",
                                            quiet_options);
    cachekit::testing::FeedWatcher watcher;
    cachekit::l2::WatchRequest request;
    request.prefixes = {"coh:"};
    request.handler = &watcher;
    auto feed = quiet->watch(request);
    assert_non_null(feed.get());
    assert_true(rt::eventually([&] { return watcher.is_live.load(); }));
    assert_true(rt::eventually(
        [&] { return series(quiet->metrics_text(), "cachekit_redis_sentinel_watcher_subscribed") == 1; }));
    {
        RawRedis old_primary(world->primary->port());
        old_primary.text({"SET", "coh:before", "1"});
        assert_true(rt::eventually([&] { return watcher.saw("coh:before"); }));
    }

    const int new_port = world->replica->port();
    world->primary->kill();
    // Four callers on the one backend (thread safety, one discovery at a
    // time); each writes and reads back keys of its own. No cmocka check
    // runs off the main thread: they count.
    std::atomic<int> writes{0}, hits{0}, errors{0}, wrong{0};
    std::atomic<bool> landed{false};
    auto write_and_read = [&](const std::string &key, Buffer &buf) {
        const std::string value = "v-" + key;
        errors += rt::error_of([&] { b->set(key, value, std::nullopt, rt::Deadline::after(250ms)); }) != 0;
        ++writes;
        bool hit = false;
        errors += rt::error_of([&] { hit = b->get(key, buf.get(), rt::Deadline::after(250ms)); }) != 0;
        if (hit) {
            ++hits;
            if (buf.view() != value) ++wrong;
        }
    };
    // Bounded: the sentinels need down-after (1 s) plus an election and a promotion.
    const auto until = std::chrono::steady_clock::now() + 30s;
    std::vector<std::thread> others;
    for (int t = 1; t < 4; ++t)
        others.emplace_back([&, t] {
            Buffer buf;
            for (int i = 0; !landed && std::chrono::steady_clock::now() < until; ++i) {
                write_and_read("fo:" + std::to_string(t) + ":" + std::to_string(i), buf);
                std::this_thread::sleep_for(5ms);
            }
        });
    for (int i = 0; std::chrono::steady_clock::now() < until && !landed; ++i) {
        const std::string key = "fo:0:" + std::to_string(i);
        write_and_read(key, out);
        RawRedis raw(new_port);
        landed = raw.has_if_answered(key);  // the promotion may close this probe's connection
        if (!landed) std::this_thread::sleep_for(20ms);
    }
    for (auto &t : others) t.join();
    print_message("failover: %d writes, %d read back, landed on the promoted replica: %s\n", writes.load(),
                  hits.load(), landed ? "yes" : "no");
    if (!landed || errors != 0 || wrong != 0) {
        for (auto &s : world->sentinels)
            print_message("sentinel %d sees the primary at %s:%s, flags %s (logs in %s)\n", s->port(),
                          s->master_field("ip").c_str(), s->master_field("port").c_str(),
                          s->master_field("flags").c_str(), world->dir.c_str());
        auto h = rt::error_of([&] { print_message("health: %s\n", b->health(rt::soon()).detail.c_str()); });
        (void)h;
    }
    assert_int_equal(errors.load(), 0);
    assert_int_equal(wrong.load(), 0);  // a hit is always the value written for that key
    assert_true(landed);

    // The quiet backend moved on the announcement alone, before any call of
    // its own could fail, and once, to the primary the sentinels elected.
    const std::string moved = primary_series(new_port);
    if (!rt::eventually([&] { return contains(quiet->metrics_text(), moved.c_str()); }, 10000ms))
        fail_msg("the watcher did not move the quiet backend:\n%s", quiet->metrics_text().c_str());
    const std::string m = quiet->metrics_text();
    assert_int_equal(series(m, "cachekit_redis_sentinel_primary_switches_total"), 1);
    assert_true(series(m, "cachekit_redis_sentinel_switch_announcements_total") >= 1);
    // Its feed followed: live again on the new primary, where a write by
    // another client reaches it.
    assert_true(rt::eventually([&] { return watcher.is_live.load(); }, 10000ms));
    RawRedis writer(new_port);
    writer.text({"SET", "coh:after", "2"});
    assert_true(rt::eventually([&] { return watcher.saw("coh:after"); }));
    quiet->set("quiet", "q", std::nullopt, rt::soon());  // its first call: no error
    assert_true(writer.has("quiet"));
    RawRedis promoted(new_port);
    assert_true(contains(promoted.text({"INFO", "replication"}), "role:master"));
    // And the backend says where it writes now.
    assert_true(rt::eventually([&] {
        try {
            auto h = b->health(rt::soon());
            return h.ok && contains(h.detail, std::to_string(new_port).c_str());
        } catch (const cachekit::Error &) {
            return false;
        }
    }, 5000ms));
}

}  // namespace

int main() {
    const struct CMUnitTest parse_tests[] = {
        cmocka_unit_test(test_url_forms),
        cmocka_unit_test(test_url_errors),
        cmocka_unit_test(test_switch_payload),
    };
    int failed = cmocka_run_group_tests_name("sentinel_url", parse_tests, nullptr, nullptr);
    if (RedisServer::find_binary().empty()) {
        std::printf("test_redis_sentinel: redis-server is not installed; skipping the server cases\n");
        return failed;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_discovery_set_get),
        cmocka_unit_test(test_counter_ops_on_the_primary),
        cmocka_unit_test(test_first_sentinel_down),
        cmocka_unit_test(test_unknown_master),
        cmocka_unit_test(test_sentinel_names_a_replica),
        cmocka_unit_test(test_fork),
        cmocka_unit_test(test_forged_switch_not_followed),
        cmocka_unit_test(test_readonly_rediscovers),
        cmocka_unit_test(test_tls),
        cmocka_unit_test(test_read_from_replicas),  // late: the replica's first sync is over by then
        cmocka_unit_test(test_failover),  // last: it moves the primary
    };
    failed += cmocka_run_group_tests_name("sentinel_servers", tests, setup, teardown);
    return failed;
}
