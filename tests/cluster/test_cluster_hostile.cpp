// A hostile or broken cluster node (issue 25), played by scripted fake nodes
// on loopback (no redis-server): what one node's answers may make the
// client spend or do is bounded.
//  - a refresh whose new primary's feed thread cannot be created (every
//    pthread_create refused) neither ends the process nor opens the L1; the
//    feed starts at a later refresh once threads can be had again.
#include <dirent.h>
#include <dlfcn.h>
#include <hiredis/hiredis.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "fake_server.hpp"
#include "l2/cluster_slots.hpp"
#include "l2/cluster_topology.hpp"
#include "l2/redis_cluster_backend.hpp"
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
    void suspend() noexcept override { live_now = false; }
    void live() noexcept override { live_now = true; }
    void session_ended() noexcept override {}
    std::atomic<bool> live_now{false};
};

// A reply tree of RESP bytes, as hiredis builds it for the parsers.
// ---- 1: a feed thread that cannot be created ------------------------------

// In a child process (an abort there is this test's failure, not the
// runner's end), with l1_coherence=tracking: the map grows a primary while
// no thread can be created. The refresh survives, the L1 stays shut (the
// new primary is unwatched), every later refresh tries the feed again, and
// once threads can be had it starts and the L1 opens.
void test_feed_thread_refused_at_a_refresh(void **) {
    ScriptedNode a, c;
    std::atomic<bool> grown{false};
    const std::string before = one_node_map(a.port());
    const std::string after = slots_map({{0, 8191, {{"127.0.0.1", num(a.port())}}}, {8192, 16383, {{"127.0.0.1", num(c.port())}}}});
    a.set_maps("", before);
    c.set_maps("", after);
    const pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        // The child: nothing of cmocka here, an exit code per failed step.
        auto backend = cachekit::l2::open_redis_cluster(config_for(url_of(a.port(), "?l1_coherence=tracking")));
        GateHandler gate;
        cachekit::l2::WatchRequest request;
        request.handler = &gate;
        auto feed = backend->watch(request);
        if (!feed) _exit(10);
        if (!eventually([&] { return gate.live_now.load(); })) _exit(11);
        g_refuse_threads = true;
        Buffer out;
        backend->get("grow", out.get(), Deadline::after(2000ms));  // the parent's node A serves the 2-shard map now
        if (!eventually([&] { return g_threads_refused.load() >= 3; })) _exit(12);  // refused at three refreshes
        if (gate.live_now.load()) _exit(13);                                        // the new primary is unwatched
        g_refuse_threads = false;
        if (!eventually([&] { return gate.live_now.load(); })) _exit(14);  // its feed started at a later refresh
        feed.reset();
        backend.reset();
        _exit(0);
    }
    // The parent: node A grows the map once the child asks for "grow".
    std::thread watcher([&] {
        while (!grown.load()) {
            if (has(a.seen(), "grow")) {
                a.set_maps("", after);
                grown = true;
            }
            std::this_thread::sleep_for(5ms);
        }
    });
    int status = 0;
    assert_int_equal(waitpid(child, &status, 0), child);
    grown = true;
    watcher.join();
    if (WIFSIGNALED(status)) fail_msg("the child died of signal %d (an exception left a library thread)", WTERMSIG(status));
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_true(c.connections.load() >= 1);  // the new primary's feed did connect in the end
}

}  // namespace

// An argument: run only the cases matching that pattern (cmocka's filter).
int main(int argc, char **argv) {
    if (argc > 1) cmocka_set_test_filter(argv[1]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_feed_thread_refused_at_a_refresh),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
