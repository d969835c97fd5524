// A hostile or broken cluster node (issue 25), played by scripted fake nodes
// on loopback (no redis-server): what one node's answers may make the
// client spend or do is bounded.
//  - a refresh whose new primary's feed thread cannot be created (every
//    pthread_create refused) neither ends the process nor opens the L1; the
//    feed starts at a later refresh once threads can be had again;
//  - a slot map naming one address under many spellings, or more nodes than
//    a cluster can have, is refused (no threads, no connections spent; the
//    previous map stays); replicas past the per-shard bound are left out;
//  - MOVED to other spellings of a node does not make nodes (open fds stay
//    bounded); MOVED / ASK to an address the map does not name is not
//    followed, so the password never goes there; one a fresh map confirms
//    (a new owner, a spare node importing a slot) is;
//  - a node that accepts the feed's connection and never answers, beside a
//    real redis-server: the real node's invalidations still arrive, and the
//    hung node's session times out and is retried.
#include <dirent.h>
#include <dlfcn.h>
#include <hiredis/hiredis.h>
#include <poll.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "fake_server.hpp"
#include "redis_server.hpp"
#include "l2/cluster/cluster_slots.hpp"
#include "l2/cluster/cluster_topology.hpp"
#include "l2/cluster/redis_cluster_backend.hpp"
#include "util/buffer.hpp"
#include "util/error.hpp"

#include <csetjmp>
#include <cstdarg>
#include <cstddef>

extern "C" {
#include <cmocka.h>
}

// ---- thread creation that can be refused --------------------------------

// While set, every pthread_create of this process fails with EAGAIN (as at
// RLIMIT_NPROC or under memory pressure). std::thread goes through here:
// the executable's definition comes before libc's.
static std::atomic<bool> g_refuse_threads{false};
static std::atomic<int> g_threads_refused{0};

extern "C" int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *), void *arg) noexcept {
    using Real = int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
    static const Real real = reinterpret_cast<Real>(dlsym(RTLD_NEXT, "pthread_create"));
    if (g_refuse_threads.load()) {
        g_threads_refused.fetch_add(1);
        return EAGAIN;
    }
    return real(thread, attr, start, arg);
}

namespace {

using cachekit::Buffer;
using cachekit::l2::Deadline;
using cachekit::testing::FakeServer;
using namespace std::chrono_literals;
namespace cluster = cachekit::l2::cluster;

std::string bulk(const std::string &s) { return "$" + std::to_string(s.size()) + "\r\n" + s + "\r\n"; }
std::string num(long long n) { return ":" + std::to_string(n) + "\r\n"; }
bool has(const std::string &text, const std::string &part) { return text.find(part) != std::string::npos; }

// CLUSTER SLOTS entries: [first, last, [host, port, id], replicas...]. A
// node's port is RESP as given (":7000\r\n", or a bulk "07000").
struct SlotsNode {
    std::string host;
    std::string port;  // RESP
};
struct SlotsRange {
    int first, last;
    std::vector<SlotsNode> nodes;  // primary first
};
std::string slots_map(const std::vector<SlotsRange> &ranges) {
    std::string out = "*" + std::to_string(ranges.size()) + "\r\n";
    for (const SlotsRange &r : ranges) {
        out += "*" + std::to_string(2 + r.nodes.size()) + "\r\n" + num(r.first) + num(r.last);
        for (const SlotsNode &n : r.nodes) out += "*3\r\n" + bulk(n.host) + n.port + bulk("id");
    }
    return out;
}
std::string one_node_map(int port) { return slots_map({{0, 16383, {{"127.0.0.1", num(port)}}}}); }

// CLUSTER SHARDS: shards of (slot ranges, primary port); an empty range list is a spare.
std::string shards_map(const std::vector<std::pair<std::vector<std::pair<int, int>>, int>> &shards) {
    std::string out = "*" + std::to_string(shards.size()) + "\r\n";
    for (const auto &[ranges, port] : shards) {
        out += "*4\r\n" + bulk("slots") + "*" + std::to_string(ranges.size() * 2) + "\r\n";
        for (auto [first, last] : ranges) out += num(first) + num(last);
        out += bulk("nodes") + "*1\r\n*10\r\n" + bulk("id") + bulk("n" + std::to_string(port)) + bulk("port") + num(port) +
               bulk("ip") + bulk("127.0.0.1") + bulk("role") + bulk("master") + bulk("health") + bulk("online");
    }
    return out;
}

// A scripted node: the slot map it serves (changeable at any time), its
// answer to GET, and enough of the invalidation feed's handshake (CLIENT
// ID, SUBSCRIBE) for a feed to go live. Records what reaches it.
struct ScriptedNode {
    // The reply to the nth GET (from 0) of `request`, given the node's own port.
    using GetReply = std::function<std::string(const std::string &request, int nth, int own_port)>;
    explicit ScriptedNode(GetReply get = nullptr) : on_get(std::move(get)), server([this](int fd, int) { serve(fd); }) {}

    void set_maps(std::string shards_reply, std::string slots_reply) {
        std::lock_guard lock(mu);
        shards = std::move(shards_reply);
        slots = std::move(slots_reply);
    }
    std::string seen() {
        std::lock_guard lock(mu);
        return received;
    }
    int port() const { return server.port(); }

    void serve(int fd) {
        connections.fetch_add(1);
        std::vector<char> buf(1 << 16);
        for (;;) {
            const ssize_t n = recv(fd, buf.data(), buf.size(), 0);
            if (n <= 0) return;
            const std::string request(buf.data(), size_t(n));
            std::string reply;
            {
                std::lock_guard lock(mu);
                received += request;
                if (has(request, "$6\r\nSHARDS\r\n")) {
                    map_requests.fetch_add(1);
                    reply = shards.empty() ? "-ERR unknown subcommand 'SHARDS'\r\n" : shards;
                } else if (has(request, "$5\r\nSLOTS\r\n")) {
                    map_requests.fetch_add(1);
                    reply = slots;
                }
            }
            if (!reply.empty()) {
            } else if (has(request, "$2\r\nID\r\n")) {
                reply = num(7);
            } else if (has(request, "SUBSCRIBE")) {  // "*N": N-1 channels, each confirmed
                const int channels = std::atoi(request.c_str() + 1) - 1;
                for (int c = 0; c < channels; ++c) reply += "*3\r\n" + bulk("subscribe") + bulk("ch") + num(c + 1);
            } else if (has(request, "$3\r\nGET\r\n")) {
                const int nth = gets.fetch_add(1);
                reply = on_get ? on_get(request, nth, server.port()) : "$-1\r\n";
            } else {
                reply = "+OK\r\n";  // AUTH, CLIENT SETNAME / TRACKING, ASKING, PING
            }
            if (!FakeServer::write_all(fd, reply)) return;
        }
    }

    const GetReply on_get;
    std::mutex mu;
    std::string shards, slots, received;  // under mu
    std::atomic<int> map_requests{0}, gets{0}, connections{0};
    FakeServer server;  // last: destroyed (its threads joined) first
};

size_t entries_of(const char *dir) {
    size_t n = 0;
    if (DIR *d = opendir(dir)) {
        while (dirent *e = readdir(d)) n += e->d_name[0] != '.';
        closedir(d);
    }
    return n;
}
size_t threads_now() { return entries_of("/proc/self/task"); }
// Threads of this process named `name` (the feed loop names its own).
size_t threads_named(const std::string &name) {
    size_t n = 0;
    if (DIR *d = opendir("/proc/self/task")) {
        while (dirent *e = readdir(d)) {
            if (e->d_name[0] == '.') continue;
            char comm[64] = {};
            if (FILE *f = fopen(("/proc/self/task/" + std::string(e->d_name) + "/comm").c_str(), "r")) {
                if (fgets(comm, sizeof comm, f) != nullptr && std::string(comm) == name + "\n") ++n;
                fclose(f);
            }
        }
        closedir(d);
    }
    return n;
}
size_t fds_now() { return entries_of("/proc/self/fd"); }

template <class Pred>
bool eventually(Pred &&pred, std::chrono::milliseconds within = 5000ms) {
    const auto until = std::chrono::steady_clock::now() + within;
    while (!pred()) {
        if (std::chrono::steady_clock::now() > until) return false;
        std::this_thread::sleep_for(10ms);
    }
    return true;
}

cachekit::l2::ClusterConfig config_for(const std::string &url) {
    cachekit::l2::ClusterConfig config = cachekit::l2::parse_cluster_url(url);
    config.node.command_timeout = 1000ms;
    config.node.connect_timeout = 500ms;
    config.node.pool_size = 2;
    config.refresh_interval = 50ms;  // the background refresh, often
    config.refresh_min_gap = 10ms;
    return config;
}
std::string url_of(int port, const std::string &query = "", const std::string &auth = "") {
    return "redis-cluster://" + auth + "127.0.0.1:" + std::to_string(port) + query;
}

// Records whether the cache's L1 would be open (live) or shut (suspended).
struct GateHandler final : cachekit::l2::InvalidationHandler {
    void keys_changed(const std::vector<std::string_view> &) noexcept override {}
    void cache_key_changed(std::string_view) noexcept override {}
    void namespace_changed(std::string_view) noexcept override {}
    void suspend() noexcept override {
        live_now = false;
        suspends.fetch_add(1);
    }
    void live() noexcept override { live_now = true; }
    void session_ended() noexcept override {}
    std::atomic<bool> live_now{false};
    std::atomic<int> suspends{0};
};

// A reply tree of RESP bytes, as hiredis builds it for the parsers.
struct ParsedReply {
    explicit ParsedReply(const std::string &bytes) {
        redisReader *reader = redisReaderCreate();
        redisReaderFeed(reader, bytes.data(), bytes.size());
        void *out = nullptr;
        assert_int_equal(redisReaderGetReply(reader, &out), REDIS_OK);
        redisReaderFree(reader);
        assert_non_null(out);
        reply = static_cast<redisReply *>(out);
    }
    ~ParsedReply() { freeReplyObject(reply); }
    redisReply *reply;
};

// ---- 1: a feed thread that cannot be created ------------------------------

// In a child process (an abort there is this test's failure, not the
// runner's end), with l1_coherence=tracking. One thread serves every
// node's session, started with the first node to watch:
//  - watch() while no thread can be created returns the error (no abort);
//  - a map that grows later needs no further thread: the new primary is
//    watched by the running loop, and the L1 opens again;
//  - a feed opened before any map was had (no loop yet): the map arrives
//    while no thread can be created, the refresh survives, the L1 stays
//    shut, every later refresh tries again, and once threads can be had
//    the loop starts and the L1 opens.
void test_feed_thread_refused_at_a_refresh(void **) {
    ScriptedNode a, c, late;
    std::atomic<bool> grown{false};
    const std::string before = one_node_map(a.port());
    const std::string after = slots_map({{0, 8191, {{"127.0.0.1", num(a.port())}}}, {8192, 16383, {{"127.0.0.1", num(c.port())}}}});
    a.set_maps("", before);
    c.set_maps("", after);
    late.set_maps("", "");  // no map yet: CLUSTER SLOTS answered +OK, refused
    int ready[2];
    assert_int_equal(pipe(ready), 0);
    const pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        // The child: nothing of cmocka here, an exit code per failed step.
        close(ready[0]);
        auto backend = cachekit::l2::open_redis_cluster(config_for(url_of(a.port(), "?l1_coherence=tracking")));
        GateHandler gate;
        cachekit::l2::WatchRequest request;
        request.handler = &gate;
        g_refuse_threads = true;
        try {
            auto refused = backend->watch(request);
            _exit(20);  // started without a thread?
        } catch (...) {
        }
        g_refuse_threads = false;
        if (g_threads_refused.load() < 1) _exit(21);
        auto feed = backend->watch(request);
        if (!feed) _exit(10);
        if (!eventually([&] { return gate.live_now.load(); })) _exit(11);
        g_refuse_threads = true;
        const int refused_before = g_threads_refused.load();
        const int suspends = gate.suspends.load();
        Buffer out;
        backend->get("grow", out.get(), Deadline::after(2000ms));  // the parent's node A serves the 2-shard map now
        // Shut when C joined (unwatched until then), open again once C's session is subscribed.
        if (!eventually([&] { return gate.suspends.load() > suspends && gate.live_now.load(); }, 10000ms)) {
            fprintf(stderr, "after the grow: suspends %d->%d, live %d, threads refused %d\n", suspends, gate.suspends.load(), int(gate.live_now.load()), g_threads_refused.load());
            _exit(12);
        }
        if (g_threads_refused.load() != refused_before) _exit(13);  // no thread asked for
        g_refuse_threads = false;
        feed.reset();
        backend.reset();

        auto empty = cachekit::l2::open_redis_cluster(config_for(url_of(late.port(), "?l1_coherence=tracking")));
        GateHandler late_gate;
        request.handler = &late_gate;
        auto late_feed = empty->watch(request);  // no map: no node to watch yet
        if (!late_feed) _exit(30);
        g_refuse_threads = true;
        const int refused_now = g_threads_refused.load();
        if (write(ready[1], "m", 1) != 1) _exit(31);  // the parent gives `late` its map
        if (!eventually([&] { return g_threads_refused.load() >= refused_now + 3; })) _exit(32);  // refused at three refreshes
        if (late_gate.live_now.load()) _exit(33);  // the new primary is unwatched
        g_refuse_threads = false;
        if (!eventually([&] { return late_gate.live_now.load(); })) _exit(34);  // the loop started at a later refresh
        late_feed.reset();
        empty.reset();
        _exit(0);
    }
    close(ready[1]);
    // The parent: node A grows the map once the child asks for "grow"; `late`
    // gets one when the child says so.
    std::thread watcher([&] {
        while (!grown.load()) {
            if (has(a.seen(), "grow")) {
                a.set_maps("", after);
                grown = true;
            }
            std::this_thread::sleep_for(5ms);
        }
    });
    std::thread giver([&] {
        char byte;
        if (read(ready[0], &byte, 1) == 1) late.set_maps("", one_node_map(late.port()));
    });
    int status = 0;
    assert_int_equal(waitpid(child, &status, 0), child);
    grown = true;
    watcher.join();
    giver.join();  // the child's end closed: read returned
    close(ready[0]);
    if (WIFSIGNALED(status)) fail_msg("the child died of signal %d (an exception left a library thread)", WTERMSIG(status));
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_true(c.connections.load() >= 1);     // the new primary's session did connect
    assert_true(late.connections.load() >= 1);  // and the late map's
}

// ---- 2: what one slot map may cost -----------------------------------------

// 1000 spellings of 127.0.0.1 (leading zeros, short and hex forms,
// IPv4-mapped IPv6) with the port, some ports with leading zeros: one node.
std::vector<SlotsRange> spellings_map(int port) {
    std::vector<SlotsRange> ranges;
    const char *odd[] = {"::ffff:127.0.0.1", "0:0:0:0:0:ffff:7f00:1", "::FFFF:127.0.0.1", "127.1", "0x7f.0.0.1",
                         "2130706433", "0177.0.0.1", "127.0.1"};
    for (int i = 0; i < 1000; ++i) {
        std::string host = i < 8 ? odd[i]
                                 : "127." + std::string(size_t(i / 100 + 1), '0') + "." +
                                       std::string(size_t(i / 10 % 10 + 1), '0') + "." + std::string(size_t(i % 10), '0') + "1";
        const std::string port_resp = i % 3 == 0 ? bulk("0" + std::to_string(port)) : num(port);
        ranges.push_back({i * 16, i * 16 + 15, {{host, port_resp}}});
    }
    return ranges;
}

void test_canonical_names(void **) {
    auto same = [](const char *a, const char *b) {
        return cluster::canonical_name({a, 7000}) == cluster::canonical_name({b, 7000});
    };
    for (const char *spelling : {"127.000.000.001", "127.1", "0x7f.0.0.1", "2130706433", "::ffff:127.0.0.1",
                                 "::FFFF:7f00:1", "0:0:0:0:0:ffff:127.0.0.1"})
        assert_true(same("127.0.0.1", spelling));
    assert_true(same("LocalHost", "localhost."));
    assert_true(same("::1", "0:0:0:0:0:0:0:1"));
    assert_false(same("127.0.0.1", "127.0.0.2"));
    assert_false(same("localhost", "127.0.0.1"));  // no name resolution: a hostname is its own node
    assert_true(cluster::canonical_name({"127.0.0.1", 7000}) != cluster::canonical_name({"127.0.0.1", 7001}));
    assert_string_equal(cluster::canonical_name({"::FFFF:127.0.0.1", 7000}).c_str(), "127.0.0.1:7000");
}

void test_parser_refuses_spellings_and_too_many_nodes(void **) {
    std::string why;
    ParsedReply spelled(slots_map(spellings_map(7000)));
    assert_false(cluster::parse_cluster_slots(*spelled.reply, &why).has_value());
    assert_non_null(std::strstr(why.c_str(), "two spellings"));

    std::vector<SlotsRange> many;  // 1001 distinct primaries, one slot each
    for (int i = 0; i < 1001; ++i) many.push_back({i, i, {{"127.0.0.1", num(20000 + i)}}});
    ParsedReply crowd(slots_map(many));
    why.clear();
    assert_false(cluster::parse_cluster_slots(*crowd.reply, &why).has_value());
    assert_non_null(std::strstr(why.c_str(), "at most 1000"));
    many.pop_back();  // 1000: Redis's own bound, accepted
    ParsedReply thousand(slots_map(many));
    assert_true(cluster::parse_cluster_slots(*thousand.reply, &why).has_value());

    // One shard listing 5000 replicas: truncated (the first ones kept), not refused.
    SlotsRange wide{0, 16383, {{"127.0.0.1", num(7000)}}};
    for (int i = 0; i < 5000; ++i) wide.nodes.push_back({"10.0." + std::to_string(i / 250) + "." + std::to_string(i % 250 + 1), num(6379)});
    ParsedReply replicas(slots_map({wide}));
    std::optional<cluster::Topology> t = cluster::parse_cluster_slots(*replicas.reply, &why);
    assert_true(t.has_value());
    assert_int_equal(t->shards.size(), 1);
    assert_int_equal(t->shards[0].replicas.size(), cluster::kMaxReplicasPerShard);
    assert_string_equal(t->shards[0].replicas[0].host.c_str(), "10.0.0.1");
}

// A node whose map turns into 1000 spellings of itself (with L1 coherence
// on: a feed thread and connection per primary): refused at every refresh,
// the previous map kept, no threads or descriptors spent. A fresh client
// whose only seed answers that map says why it has no map.
void test_map_of_one_address_spelled_1000_ways_is_refused(void **) {
    ScriptedNode a([](const std::string &, int, int) { return bulk("value"); });
    const std::string hostile = slots_map(spellings_map(a.port()));
    a.set_maps("", one_node_map(a.port()));
    auto backend = cachekit::l2::open_redis_cluster(config_for(url_of(a.port(), "?l1_coherence=tracking")));
    GateHandler gate;
    cachekit::l2::WatchRequest request;
    request.handler = &gate;
    auto feed = backend->watch(request);
    assert_true(eventually([&] { return gate.live_now.load(); }));
    const size_t threads = threads_now(), fds = fds_now();
    a.set_maps("", hostile);
    const int served = a.map_requests.load();
    assert_true(eventually([&] { return a.map_requests.load() >= served + 3; }));  // three refreshes read it
    assert_true(threads_now() <= threads + 2);
    assert_true(fds_now() <= fds + 2);
    Buffer out;
    assert_true(backend->get("k", out.get(), Deadline::after(2000ms)));  // the previous map routes
    assert_true(out.view() == "value");
    assert_true(gate.live_now.load());
    feed.reset();
    backend.reset();

    ScriptedNode b;
    b.set_maps("", slots_map(spellings_map(b.port())));
    auto fresh = cachekit::l2::open_redis_cluster(config_for(url_of(b.port())));
    const cachekit::l2::Health health = fresh->health(Deadline::after(2000ms));
    assert_false(health.ok);
    assert_non_null(std::strstr(health.detail.c_str(), "under two spellings"));
}

// 5000 replicas for one shard: the map is installed with the first 16 of
// them (reads spread over those), not 5000 nodes.
void test_replicas_past_the_bound_are_left_out(void **) {
    ScriptedNode a;
    SlotsRange wide{0, 16383, {{"127.0.0.1", num(a.port())}}};
    for (int i = 0; i < 5000; ++i) wide.nodes.push_back({"10.1." + std::to_string(i / 250) + "." + std::to_string(i % 250 + 1), num(6379)});
    a.set_maps("", slots_map({wide}));
    auto backend = cachekit::l2::open_redis_cluster(config_for(url_of(a.port())));
    const std::string metrics = backend->metrics_text();
    size_t nodes = 0;
    for (size_t at = 0; (at = metrics.find("cachekit_redis_cluster_node_breaker_state{", at)) != std::string::npos; ++at) ++nodes;
    assert_int_equal(nodes, 1 + cluster::kMaxReplicasPerShard);
}

// ---- 3, 4: redirects --------------------------------------------------------

// Every GET answered MOVED to another spelling: numeric forms of the node
// itself (followed: the same node, so the call bounces to its deadline) and
// hostnames the map does not name (not followed). 60 gets keep the open
// descriptors within the pool's (both ends of the node's connections count
// here: the fake server lives in this process), and each get ends with a
// miss or an error.
void test_moved_to_respellings_makes_no_nodes(void **) {
    const uint16_t slot = cluster::key_slot("k");
    ScriptedNode a([slot](const std::string &, int nth, int port) {
        std::string host;
        switch (nth % 5) {
        case 0: host = "127.0.0." + std::string(size_t(nth / 5 % 40 + 1), '0') + "1"; break;
        case 1: host = "[::ffff:127.0.0.1]"; break;
        case 2: host = nth % 2 ? "LocalHost" : "LOCALHOST"; break;
        case 3: host = "0x7f.0.0.1"; break;
        default: host = "localhost."; break;
        }
        return "-MOVED " + std::to_string(slot) + " " + host + ":" + std::to_string(port) + "\r\n";
    });
    a.set_maps("", one_node_map(a.port()));
    cachekit::l2::ClusterConfig config = config_for(url_of(a.port()));
    auto backend = cachekit::l2::open_redis_cluster(config);
    const size_t fds = fds_now();
    std::vector<int> codes;  // 0: a miss
    for (int i = 0; i < 60; ++i) {
        Buffer out;
        try {
            assert_false(backend->get("k", out.get(), Deadline::after(150ms)));
            codes.push_back(0);
        } catch (const cachekit::Error &e) {
            codes.push_back(e.code());
        }
    }
    assert_true(a.gets.load() >= 60);
    const size_t open_now = fds_now();
    if (open_now > fds + 2 * config.node.pool_size + 4)
        fail_msg("%zu descriptors open after 60 gets, %zu before", open_now, fds);
    // Bounced to the deadline (the node itself), or refused (a name the map lacks): never another node's fault.
    for (int code : codes) assert_true(code == 0 || code == CACHEKIT_ETIMEOUT || code == CACHEKIT_EBACKEND);
}

// The password in the URL; the honest node answers MOVED, then ASK, naming
// an "attacker" listener in no map: the calls fail (EBACKEND, saying why),
// the attacker never sees a connection, the honest node did get AUTH.
void test_redirect_outside_the_map_gets_no_password(void **) {
    ScriptedNode attacker;
    const int to = attacker.port();
    const uint16_t slot = cluster::key_slot("k");
    ScriptedNode honest([slot, to](const std::string &, int nth, int) {
        return std::string(nth % 2 ? "-ASK " : "-MOVED ") + std::to_string(slot) + " 127.0.0.1:" + std::to_string(to) + "\r\n";
    });
    honest.set_maps("", one_node_map(honest.port()));
    auto backend = cachekit::l2::open_redis_cluster(config_for(url_of(honest.port(), "", ":s3cret-pw@")));
    for (const char *redirect : {"MOVED", "ASK"}) {
        Buffer out;
        try {
            backend->get("k", out.get(), Deadline::after(2000ms));
            fail_msg("a %s outside the map was followed", redirect);
        } catch (const cachekit::Error &e) {
            assert_int_equal(e.code(), CACHEKIT_EBACKEND);
            assert_non_null(std::strstr(e.what(), redirect));
            assert_non_null(std::strstr(e.what(), "not followed"));
            assert_null(std::strstr(e.what(), "s3cret-pw"));
        }
    }
    assert_int_equal(honest.gets.load(), 2);
    assert_true(has(honest.seen(), "AUTH") && has(honest.seen(), "s3cret-pw"));
    assert_int_equal(attacker.connections.load(), 0);
    assert_true(attacker.seen().empty());
}

// Honest redirects to new nodes still work: a MOVED to a node the map did
// not name is followed once the fresh map gives it the slot (a shard added,
// the slot moved to it), and an ASK to a spare (a CLUSTER SHARDS shard with
// no slots yet, importing one) is followed.
void test_redirects_the_fresh_map_confirms_are_followed(void **) {
    const uint16_t slot = cluster::key_slot("k");
    ScriptedNode b([](const std::string &request, int, int) {
        return has(request, "ASKING") ? "+OK\r\n" + bulk("asked") : bulk("moved");
    });
    std::atomic<bool> asked{false};
    ScriptedNode *a_ptr = nullptr;
    const int b_port = b.port();
    std::string moved_map;
    ScriptedNode a([&, slot, b_port](const std::string &request, int nth, int) {
        if (has(request, "$2\r\nk2\r\n")) {  // the ASK case: b is a spare of the map
            asked = true;
            return "-ASK " + std::to_string(cluster::key_slot("k2")) + " 127.0.0.1:" + std::to_string(b_port) + "\r\n";
        }
        if (nth == 0) a_ptr->set_maps(moved_map, "");  // the slot moves to b, then a says so
        return "-MOVED " + std::to_string(slot) + " 127.0.0.1:" + std::to_string(b_port) + "\r\n";
    });
    a_ptr = &a;
    const int a_port = a.port();
    auto ranges_without = [](uint16_t s) {
        std::vector<std::pair<int, int>> r;
        if (s > 0) r.push_back({0, s - 1});
        if (s < 16383) r.push_back({s + 1, 16383});
        return r;
    };
    moved_map = shards_map({{ranges_without(slot), a_port}, {{{slot, slot}}, b_port}});
    a.set_maps(shards_map({{{{0, 16383}}, a_port}}), "");
    b.set_maps(moved_map, "");
    auto backend = cachekit::l2::open_redis_cluster(config_for(url_of(a_port, "", ":pw@")));
    Buffer out;
    assert_true(backend->get("k", out.get(), Deadline::after(2000ms)));
    assert_true(out.view() == "moved");
    assert_true(has(b.seen(), "AUTH"));

    // k2's slot stays a's; b is listed as a spare (a shard with no slots).
    const std::string spare_map = shards_map({{{{0, 16383}}, a_port}, {{}, b_port}});
    a.set_maps(spare_map, "");
    b.set_maps(spare_map, "");
    const int served = a.map_requests.load();
    assert_true(eventually([&] { return a.map_requests.load() >= served + 2; }));  // installed by now
    assert_true(eventually([&] { return backend->get("k2", out.get(), Deadline::after(2000ms)) && out.view() == "asked"; }));
    assert_true(asked.load());
}

// ---- 5: a hung node beside a live one --------------------------------------

// Records the keys the feed reports.
struct KeyWatcher final : cachekit::l2::InvalidationHandler {
    void keys_changed(const std::vector<std::string_view> &changed) noexcept override {
        std::lock_guard lock(mu);
        for (std::string_view k : changed) keys.emplace_back(k);
    }
    void cache_key_changed(std::string_view) noexcept override {}
    void namespace_changed(std::string_view) noexcept override {}
    void suspend() noexcept override { live_now = false; }
    void live() noexcept override { live_now = true; }
    void session_ended() noexcept override { ended.fetch_add(1); }
    bool saw(const std::string &key) {
        std::lock_guard lock(mu);
        return std::find(keys.begin(), keys.end(), key) != keys.end();
    }
    std::mutex mu;
    std::vector<std::string> keys;
    std::atomic<bool> live_now{false};
    std::atomic<int> ended{0};
};

// The map (served by a scripted seed) names a real redis-server and a node
// that accepts and never answers a byte. The feed serves both from one
// thread: writes on the real node keep reaching the handler while the hung
// node's handshake waits out its deadline, again and again; the cache's
// gate stays shut (one node unwatched).
void test_hung_node_does_not_delay_a_live_one(void **) {
    if (cachekit::testing::RedisServer::find_binary().empty()) {
        print_message("redis-server not installed: case skipped\n");
        return;
    }
    cachekit::testing::RedisServer real;
    std::atomic<int> hung_feeds{0};  // connections that asked CLIENT SETNAME (the feed's; the refresher's ask for maps)
    FakeServer hung([&](int fd, int) {
        std::string seen;
        bool counted = false;
        char buf[4096];
        while (!hung.stopping()) {
            pollfd p{fd, POLLIN, 0};
            if (poll(&p, 1, 50) <= 0) continue;
            const ssize_t n = recv(fd, buf, sizeof buf, 0);
            if (n <= 0) return;
            if (seen.size() < 4096) seen.append(buf, size_t(n));
            if (!counted && has(seen, "cachekit-invalidation")) {
                hung_feeds.fetch_add(1);
                counted = true;
            }
        }
    });
    ScriptedNode seed;
    seed.set_maps("", slots_map({{0, 8191, {{"127.0.0.1", num(real.port())}}}, {8192, 16383, {{"127.0.0.1", num(hung.port())}}}}));
    auto backend = cachekit::l2::open_redis_cluster(config_for(url_of(seed.port(), "?l1_coherence=tracking")));
    KeyWatcher watcher;
    cachekit::l2::WatchRequest request;
    request.prefixes = {"hung:"};
    request.handler = &watcher;
    auto feed = backend->watch(request);
    assert_non_null(feed.get());
    redisContext *raw = redisConnect("127.0.0.1", real.port());
    assert_true(raw != nullptr && raw->err == 0);
    for (int i = 0; i < 6; ++i) {
        const std::string key = "hung:" + std::to_string(i);
        // Set until reported: the first writes may come before the real node's session is subscribed.
        assert_true(eventually([&] {
            freeReplyObject(redisCommand(raw, "SET %s v", key.c_str()));
            return eventually([&] { return watcher.saw(key); }, 200ms);
        }, 20000ms));
        std::this_thread::sleep_for(500ms);  // spread over the hung node's timeouts and retries
    }
    redisFree(raw);
    assert_int_equal(threads_named("ck-feed"), 1);  // both nodes' sessions, one thread
    assert_true(eventually([&] { return hung_feeds.load() >= 2; }, 20000ms));  // timed out, retried
    assert_true(watcher.ended.load() >= 1);
    assert_false(watcher.live_now.load());
    feed.reset();
    backend.reset();
}

}  // namespace

// An argument: run only the cases matching that pattern (cmocka's filter).
int main(int argc, char **argv) {
    if (argc > 1) cmocka_set_test_filter(argv[1]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_canonical_names),
        cmocka_unit_test(test_parser_refuses_spellings_and_too_many_nodes),
        cmocka_unit_test(test_feed_thread_refused_at_a_refresh),
        cmocka_unit_test(test_map_of_one_address_spelled_1000_ways_is_refused),
        cmocka_unit_test(test_replicas_past_the_bound_are_left_out),
        cmocka_unit_test(test_moved_to_respellings_makes_no_nodes),
        cmocka_unit_test(test_redirect_outside_the_map_gets_no_password),
        cmocka_unit_test(test_redirects_the_fresh_map_confirms_are_followed),
        cmocka_unit_test(test_hung_node_does_not_delay_a_live_one),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
