// Hostile and oversized replies (fake servers on loopback, and a real
// redis-server): each call is refused within about its deadline, and
// without allocating what the reply declared (bounded_child.hpp runs it
// under an address-space cap and checks the peak RSS).
#include <hiredis/hiredis.h>

#include <chrono>
#include <cstring>
#include <string>

#include "bounded_child.hpp"
#include "fake_server.hpp"
#include "l2/open_backend.hpp"
#include "redis_test_support.hpp"

namespace {

using cachekit::Buffer;
using cachekit::testing::FakeServer;
using cachekit::testing::RedisServer;
using cachekit::testing::run_bounded;
using Clock = std::chrono::steady_clock;

long long ms_since(Clock::time_point t0) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count();
}

// In a bounded child: GET through a backend with a 250 ms command timeout;
// passes when it fails with `code`, a message holding `reason`, within 2 s.
bool get_is_refused(const std::string &url, int code, const char *reason,
                    std::chrono::milliseconds command_timeout = std::chrono::milliseconds(250),
                    rt::Deadline deadline = rt::soon(), uint64_t max_reply_bytes = 0) {
    cachekit::l2::RedisConfig config = cachekit::l2::parse_redis_url(url);
    config.command_timeout = command_timeout;
    config.pool_size = 1;
    config.max_reply_bytes = max_reply_bytes;
    auto backend = cachekit::l2::open_redis(config);
    Buffer out;
    std::string message;
    const auto t0 = Clock::now();
    const int got = rt::error_of([&] { backend->get("k", out.get(), deadline); }, &message);
    const long long ms = ms_since(t0);
    std::fprintf(stderr, "  -> code %d after %lld ms: %s\n", got, ms, message.c_str());
    return got == code && message.find(reason) != std::string::npos && message.find("127.0.0.1") != std::string::npos &&
           ms < 2000;
}

// Answers every request with `first`, then streams `chunk` until the peer leaves.
FakeServer::Handler streaming(std::string first, std::string chunk) {
    return [first, chunk](int fd, int) {
        char buf[4096];
        if (recv(fd, buf, sizeof buf, 0) <= 0) return;
        if (!FakeServer::write_all(fd, first)) return;
        while (FakeServer::write_all(fd, chunk)) {
        }
    };
}

void test_huge_bulk_refused_from_its_header(void **) {
    // Declares 2 GB and streams it: refused (ETOOBIG) from the length line.
    FakeServer fake(streaming("$2000000000\r\n", std::string(64 * 1024, 'x')));
    assert_int_equal(run_bounded([&] { return get_is_refused(fake.url(), CACHEKIT_ETOOBIG, "bulk string of 2000000000 bytes"); }), 0);
}

void test_status_line_without_end_refused(void **) {
    FakeServer fake(streaming("+", std::string(64 * 1024, 'a')));
    assert_int_equal(run_bounded([&] { return get_is_refused(fake.url(), CACHEKIT_EBACKEND, "status line longer"); }), 0);
}

void test_huge_array_header_refused(void **) {
    // hiredis 0.14 would calloc 16 GiB of element pointers for this header.
    FakeServer fake([&](int fd, int) {
        if (!fake.read_some(fd)) return;
        FakeServer::write_all(fd, "*2147483647\r\n");
        fake.pause(std::chrono::seconds(5));
    });
    assert_int_equal(run_bounded([&] { return get_is_refused(fake.url(), CACHEKIT_EBACKEND, "an array where the command answers none"); }), 0);
}

// One byte per 100 ms of a well-formed reply: the call ends at its deadline,
// although no single read waits longer than the timeout.
FakeServer::Handler trickle(const FakeServer &fake) {
    return [&fake](int fd, int) {
        if (!fake.read_some(fd)) return;
        const std::string reply = "$50\r\n" + std::string(50, 'v') + "\r\n";
        for (char c : reply)
            if (!FakeServer::write_all(fd, std::string_view(&c, 1)) || !fake.pause(std::chrono::milliseconds(100))) return;
    };
}

void test_trickle_ends_at_the_command_timeout(void **) {
    FakeServer fake([&](int fd, int i) { trickle(fake)(fd, i); });
    assert_int_equal(run_bounded([&] { return get_is_refused(fake.url(), CACHEKIT_ETIMEOUT, "timed out"); }), 0);
}

void test_trickle_ends_at_the_deadline(void **) {
    // The call's deadline (300 ms) is the shorter bound here.
    FakeServer fake([&](int fd, int i) { trickle(fake)(fd, i); });
    assert_int_equal(run_bounded([&] {
                         return get_is_refused(fake.url(), CACHEKIT_ETIMEOUT, "timed out", std::chrono::seconds(5),
                                               rt::Deadline::after(std::chrono::milliseconds(300)));
                     }),
                     0);
}

void test_connect_handshake_bounded(void **) {
    // Accepts, reads AUTH, never answers: the connect is part of the call.
    FakeServer fake([&](int fd, int) {
        while (fake.read_some(fd)) {
        }
    });
    const std::string url = "redis://:secret@127.0.0.1:" + std::to_string(fake.port());
    assert_int_equal(run_bounded([&] { return get_is_refused(url, CACHEKIT_ETIMEOUT, "timed out"); }), 0);
}

void test_real_400mb_value_refused_quickly(void **) {
    RedisServer server;
    redisContext *admin = redisConnect("127.0.0.1", server.port());
    assert_true(admin != nullptr && admin->err == 0);
    // A 400 MB string made on the server (SETRANGE zero-fills up to the offset).
    auto *reply = static_cast<redisReply *>(redisCommand(admin, "SETRANGE big 399999999 x"));
    assert_non_null(reply);
    assert_int_equal(reply->type, REDIS_REPLY_INTEGER);
    freeReplyObject(reply);
    reply = static_cast<redisReply *>(redisCommand(admin, "SET small v"));
    freeReplyObject(reply);
    redisFree(admin);

    const uint64_t limit = (100ULL << 20) + (2ULL << 20);  // a cache with max_value_bytes 100 MiB
    assert_int_equal(run_bounded([&] {
                         cachekit::l2::RedisConfig config = cachekit::l2::parse_redis_url(server.url());
                         config.command_timeout = std::chrono::milliseconds(5000);  // Redis copies 400 MB first
                         config.pool_size = 1;
                         config.max_reply_bytes = limit;
                         auto backend = cachekit::l2::open_redis(config);
                         Buffer out;
                         std::string message;
                         const auto t0 = Clock::now();
                         int code = rt::error_of([&] { backend->get("big", out.get(), rt::soon()); }, &message);
                         const long long ms = ms_since(t0);
                         std::fprintf(stderr, "  -> code %d after %lld ms: %s\n", code, ms, message.c_str());
                         if (code != CACHEKIT_ETOOBIG || message.find("400000000") == std::string::npos || ms > 4000)
                             return false;
                         // The refused connection was dropped: the next call runs on a fresh one.
                         return backend->get("small", out.get(), rt::soon()) && out.view() == "v";
                     }),
                     0);
}

void test_get_with_ttl_is_one_round_trip(void **) {
    // Answers the first chunk it reads, and only that: GET and PTTL must come together.
    FakeServer fake([&](int fd, int) {
        char buf[4096];
        ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n <= 0) return;
        const bool both = std::string_view(buf, size_t(n)).find("PTTL") != std::string_view::npos;
        FakeServer::write_all(fd, both ? "$5\r\nvalue\r\n:4000\r\n" : "$5\r\nvalue\r\n");
        fake.pause(std::chrono::seconds(5));
    });
    cachekit::l2::OpenOptions options;
    options.resilience.command_timeout = std::chrono::milliseconds(500);
    auto backend = cachekit::l2::open_backend(fake.url(), options);
    Buffer out;
    cachekit::l2::Ttl remaining;
    assert_true(backend->get_with_ttl("k", out.get(), &remaining, rt::soon()));
    assert_true(out.view() == "value");
    assert_true(remaining.has_value());
    assert_int_equal(remaining->count(), 4000);
    assert_int_equal(backend->stats().calls, 1);  // one call through the resilience layer, one breaker ticket
}

}  // namespace

int main() {
    RedisServer::require_or_skip("test_redis_limits");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_huge_bulk_refused_from_its_header),
        cmocka_unit_test(test_status_line_without_end_refused),
        cmocka_unit_test(test_huge_array_header_refused),
        cmocka_unit_test(test_trickle_ends_at_the_command_timeout),
        cmocka_unit_test(test_trickle_ends_at_the_deadline),
        cmocka_unit_test(test_connect_handshake_bounded),
        cmocka_unit_test(test_real_400mb_value_refused_quickly),
        cmocka_unit_test(test_get_with_ttl_is_one_round_trip),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
