// The L1 coherence feed against a hostile server (issue 25): a fake Redis
// answers the feed's handshake (SETNAME, INFO, CLIENT ID, CLIENT TRACKING,
// SUBSCRIBE) and then pushes one hostile message on __redis__:invalidate:
// a bulk string declaring 1 GiB, or an array declaring 5 million keys, with
// 64 MiB of body behind it. The feed must refuse the message from its
// header: it stops reading (the server cannot hand it more than what the
// socket buffers hold), the L1 is shut (suspend) and the feed reconnects and
// is live again. No redis-server needed.
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "fake_server.hpp"
#include "l2/redis/redis_invalidation.hpp"

#include <csetjmp>
#include <cstdarg>
#include <cstddef>

extern "C" {
#include <cmocka.h>
}

namespace {

using cachekit::testing::FakeServer;
using namespace std::chrono_literals;
namespace l2 = cachekit::l2;

constexpr size_t kBody = 64u << 20;  // what the server tries to push behind the hostile header

// Counts what the feed reports.
struct Counting final : l2::InvalidationHandler {
    std::atomic<int> lives{0}, suspends{0}, key_lists{0};
    void keys_changed(const std::vector<std::string_view> &) noexcept override { ++key_lists; }
    void cache_key_changed(std::string_view) noexcept override {}
    void namespace_changed(std::string_view) noexcept override {}
    void suspend() noexcept override { ++suspends; }
    void live() noexcept override { ++lives; }
    void session_ended() noexcept override {}
};

std::string bulk(const std::string &s) { return "$" + std::to_string(s.size()) + "\r\n" + s + "\r\n"; }

// A fake server whose first feed connection gets `hostile` (and then as
// much of a 64 MiB body as the client takes); later connections get a
// plain subscription and stay quiet.
struct HostileFeedServer {
    HostileFeedServer(std::string hostile_header, std::string body_unit)
        : header(std::move(hostile_header)), unit(std::move(body_unit)) {}

    void serve(int fd, int index) {
        ++connections;
        std::string pending;
        char buf[4096];
        // No look at `server` here: reset() nulls it before the destructor joins
        // this thread; the shutdown it does ends recv() instead.
        for (;;) {
            ssize_t n = recv(fd, buf, sizeof buf, 0);
            if (n <= 0) return;
            pending.append(buf, size_t(n));
            // The feed sends one command and waits for its reply: answer by name.
            std::string reply;
            if (pending.find("SETNAME") != std::string::npos) reply = "+OK\r\n";
            else if (pending.find("INFO") != std::string::npos) reply = bulk("# Server\r\nredis_version:7.0.15\r\n");
            else if (pending.find("TRACKING") != std::string::npos) reply = "+OK\r\n";
            else if (pending.find("ID") != std::string::npos) reply = ":7\r\n";
            else if (pending.find("PING") != std::string::npos) reply = "*2\r\n" + bulk("pong") + bulk("");
            else if (pending.find("SUBSCRIBE") != std::string::npos) {
                reply = "*3\r\n" + bulk("subscribe") + bulk("cachekit:py:invalidate:v1") + ":1\r\n";
                reply += "*3\r\n" + bulk("subscribe") + bulk("__redis__:invalidate") + ":2\r\n";
                if (index == 0) {
                    FakeServer::write_all(fd, reply);
                    push_hostile(fd);
                    return;
                }
            } else {
                continue;  // a command still arriving
            }
            pending.clear();
            if (!FakeServer::write_all(fd, reply)) return;
        }
    }

    // The hostile message: a header and up to kBody bytes, counting what left.
    void push_hostile(int fd) {
        const std::string message = "*3\r\n" + bulk("message") + bulk("__redis__:invalidate") + header;
        if (!FakeServer::write_all(fd, message)) return;
        std::string block;
        while (block.size() < 65536) block += unit;
        timeval tv{0, 200 * 1000};  // a client that stopped reading makes send() time out
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
        while (body_sent < kBody) {  // ends at the client's close or the server's shutdown
            const ssize_t n = send(fd, block.data(), block.size(), MSG_NOSIGNAL);
            if (n <= 0) break;
            body_sent += size_t(n);
        }
        done = true;
    }

    std::string header, unit;  // the body repeats `unit`: bulk bytes, or well-formed elements
    std::atomic<size_t> body_sent{0};
    std::atomic<bool> done{false};
    std::atomic<int> connections{0};
    std::unique_ptr<FakeServer> server;
};

bool eventually(const std::function<bool()> &cond, std::chrono::milliseconds limit = 10s) {
    const auto until = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < until) {
        if (cond()) return true;
        std::this_thread::sleep_for(5ms);
    }
    return cond();
}

void check_refused(const std::string &hostile_header, const std::string &body_unit) {
    HostileFeedServer fake(hostile_header, body_unit);
    fake.server = std::make_unique<FakeServer>([&](int fd, int index) { fake.serve(fd, index); });
    l2::RedisConfig config;
    config.port = fake.server->port();
    config.l1_coherence = l2::CoherenceMode::Tracking;
    Counting handler;
    l2::WatchRequest request;
    request.prefixes = {"p:"};
    request.handler = &handler;
    {
        std::unique_ptr<l2::InvalidationFeed> feed = l2::start_redis_feed(config, request);
        assert_non_null(feed.get());
        // Refused on the first connection (which may not have gone live: the
        // message can share a read with the SUBSCRIBE replies), live on the second.
        const bool relived = eventually([&] { return fake.connections.load() >= 2 && handler.lives.load() >= 1; });
        if (!relived)
            print_error("lives %d, suspends %d, connections %d\n", handler.lives.load(), handler.suspends.load(),
                        fake.connections.load());
        assert_true(relived);
        assert_true(eventually([&] { return fake.done.load(); }));
        assert_int_equal(handler.key_lists.load(), 0);
        assert_true(handler.suspends.load() >= 2);  // at the start of each session and after the refusal
    }
    // The client stopped reading at the header: far less than the body reached it.
    print_message("hostile body accepted by the socket: %zu of %zu bytes\n", fake.body_sent.load(), kBody);
    assert_true(fake.body_sent.load() < kBody / 4);
    fake.server.reset();
}

void test_huge_bulk_is_refused(void **) { check_refused("$1073741824\r\n", "x"); }

void test_huge_array_is_refused(void **) { check_refused("*5000000\r\n", ":1\r\n"); }

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_huge_bulk_is_refused),
        cmocka_unit_test(test_huge_array_is_refused),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
