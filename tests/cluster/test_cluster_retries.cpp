// TRYAGAIN and CLUSTERDOWN against a fake one-node cluster (no redis-server):
// retried with backoff inside the call's deadline, then the value; a server
// that never stops answering TRYAGAIN ends the call at its deadline with
// CACHEKIT_ETIMEOUT quoting the server. Also: the slot map falls back to
// CLUSTER SLOTS when CLUSTER SHARDS is unknown (a Redis 6 server); a MOVED
// answering the second command of a GET + PTTL pair is followed; redirects
// that bounce for a while are waited out.
#include <atomic>
#include <chrono>
#include <cstring>
#include <string>

#include "fake_server.hpp"
#include "l2/cluster/cluster_slots.hpp"
#include "l2/cluster/redis_cluster_backend.hpp"
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
using cachekit::testing::FakeServer;
using namespace std::chrono_literals;

std::string bulk(const std::string &s) { return "$" + std::to_string(s.size()) + "\r\n" + s + "\r\n"; }

// CLUSTER SHARDS: one shard, every slot, this node as its primary.
std::string shards_reply(int port) {
    return "*1\r\n*4\r\n" + bulk("slots") + "*2\r\n:0\r\n:16383\r\n" + bulk("nodes") + "*1\r\n*10\r\n" + bulk("id") +
           bulk("n1") + bulk("port") + ":" + std::to_string(port) + "\r\n" + bulk("ip") + bulk("127.0.0.1") +
           bulk("role") + bulk("master") + bulk("health") + bulk("online");
}

// CLUSTER SLOTS: the same map, the pre-7 way.
std::string slots_reply(int port) {
    return "*1\r\n*3\r\n:0\r\n:16383\r\n*3\r\n" + bulk("127.0.0.1") + ":" + std::to_string(port) + "\r\n" + bulk("n1");
}

// A fake node: answers the slot map, then `busy` error replies to GETs, then
// the value (to a GET + PTTL pair: the value, and the errors to the PTTL).
// With `busy_for`: the errors for that long after the first GET instead.
struct FakeNode {
    FakeNode(std::string busy_error, int busy, bool knows_shards, std::chrono::milliseconds busy_window = {})
        : busy_for(busy_window), server([this](int fd, int) { serve(fd); }), error(std::move(busy_error)),
          left(busy), shards(knows_shards) {}

    bool busy_now() {
        if (busy_for.count() == 0) return left.fetch_sub(1) > 0;
        const int64_t now = std::chrono::steady_clock::now().time_since_epoch().count();
        int64_t first = 0;
        if (!first_get.compare_exchange_strong(first, now)) return now - first < busy_ticks();  // each connection has its thread
        return true;
    }

    void serve(int fd) {
        char buf[4096];
        for (;;) {
            ssize_t n = recv(fd, buf, sizeof buf, 0);
            if (n <= 0) return;
            const std::string request(buf, size_t(n));
            std::string reply;
            if (request.find("$6\r\nSHARDS\r\n") != std::string::npos) {  // the exact argument, length included
                reply = shards ? shards_reply(server.port()) : "-ERR unknown subcommand 'SHARDS'\r\n";
            } else if (request.find("$5\r\nSLOTS\r\n") != std::string::npos) {
                reply = slots_reply(server.port());
            } else if (request.find("GET") != std::string::npos) {
                gets.fetch_add(1);
                std::string busy_reply = busy_now() ? "-" + error + "\r\n" : "";
                if (size_t at = busy_reply.find("$PORT"); at != std::string::npos)  // a redirect to this node itself
                    busy_reply.replace(at, 5, std::to_string(server.port()));
                if (request.find("PTTL") != std::string::npos)  // get_with_ttl's pair: the GET answers, the PTTL is refused
                    reply = bulk("value") + (busy_reply.empty() ? ":-1\r\n" : busy_reply);
                else
                    reply = busy_reply.empty() ? bulk("value") : busy_reply;
            } else {
                reply = "+OK\r\n";
            }
            if (!FakeServer::write_all(fd, reply)) return;
        }
    }

    std::string url() const { return "redis-cluster://127.0.0.1:" + std::to_string(server.port()); }

    std::chrono::milliseconds busy_for;
    std::atomic<int64_t> first_get{0};  // steady_clock ticks of the first GET
    int64_t busy_ticks() const {
        return std::chrono::duration_cast<std::chrono::steady_clock::duration>(busy_for).count();
    }
    FakeServer server;
    std::string error;
    std::atomic<int> left;
    bool shards;
    std::atomic<int> gets{0};
};

std::unique_ptr<cachekit::l2::Backend> open(const std::string &url) {
    cachekit::l2::ClusterConfig config = cachekit::l2::parse_cluster_url(url);
    config.node.command_timeout = 1000ms;
    return cachekit::l2::open_redis_cluster(config);
}

void test_tryagain_is_retried(void **) {
    FakeNode node("TRYAGAIN Multiple keys request during rehashing of slot", 3, true);
    auto backend = open(node.url());
    Buffer out;
    assert_true(backend->get("k", out.get(), Deadline::after(5000ms)));
    assert_true(out.view() == "value");
    assert_int_equal(node.gets.load(), 4);
}

void test_clusterdown_is_retried_and_slots_fallback(void **) {
    FakeNode node("CLUSTERDOWN The cluster is down", 2, false);  // a Redis 6 node: CLUSTER SLOTS only
    auto backend = open(node.url());
    Buffer out;
    assert_true(backend->get("k", out.get(), Deadline::after(5000ms)));
    assert_true(out.view() == "value");
    assert_int_equal(node.gets.load(), 3);
}

// A slot moved between the two commands of one exchange (a live reshard:
// GET answered by the old owner, PTTL answered MOVED): the pair runs again
// where the key is now, never an error.
void test_redirect_on_the_second_reply_is_followed(void **) {
    FakeNode node("MOVED " + std::to_string(cachekit::l2::cluster::key_slot("k")) + " 127.0.0.1:$PORT", 2, true);
    auto backend = open(node.url());
    Buffer out;
    cachekit::l2::Ttl remaining;
    assert_true(backend->get_with_ttl("k", out.get(), &remaining, Deadline::after(5000ms)));
    assert_true(out.view() == "value");
    assert_false(remaining.has_value());  // PTTL -1: no expiry
    assert_int_equal(node.gets.load(), 3);
}

// Mid-reshard, two nodes can name each other for a moment (the source
// already says MOVED to the target, the target, still importing, MOVED back):
// here one node says MOVED to itself for 100 ms. 16 hops without a pause
// would be spent in well under that; the call waits from its third redirect
// on and gets the value.
void test_redirect_bounce_is_waited_out(void **) {
    FakeNode node("MOVED " + std::to_string(cachekit::l2::cluster::key_slot("k")) + " 127.0.0.1:$PORT", 0, true,
                  100ms);
    auto backend = open(node.url());
    Buffer out;
    assert_true(backend->get("k", out.get(), Deadline::after(5000ms)));
    assert_true(out.view() == "value");
    assert_true(node.gets.load() < 16);
}

void test_retries_end_at_the_deadline(void **) {
    FakeNode node("TRYAGAIN forever", 1 << 30, true);
    auto backend = open(node.url());
    Buffer out;
    const auto t0 = std::chrono::steady_clock::now();
    try {
        backend->get("k", out.get(), Deadline::after(300ms));
        fail_msg("expected a timeout");
    } catch (const cachekit::Error &e) {
        assert_int_equal(e.code(), CACHEKIT_ETIMEOUT);
        assert_non_null(std::strstr(e.what(), "TRYAGAIN"));
    }
    const auto spent = std::chrono::steady_clock::now() - t0;
    assert_true(spent < 2000ms);
    assert_true(node.gets.load() >= 3);  // 10, 20, 40, 80 ms... backoff: several tries, not hundreds
    assert_true(node.gets.load() < 30);
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tryagain_is_retried),
        cmocka_unit_test(test_clusterdown_is_retried_and_slots_fallback),
        cmocka_unit_test(test_redirect_on_the_second_reply_is_followed),
        cmocka_unit_test(test_redirect_bounce_is_waited_out),
        cmocka_unit_test(test_retries_end_at_the_deadline),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
