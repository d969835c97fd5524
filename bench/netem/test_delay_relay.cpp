// B9's userspace delay line (delay_line.hpp): each direction held for the delay, delays
// overlapping like a link's, bytes in order under backpressure (partial sends), EOF
// forwarded each way after the delay, an unreachable target and stop() closing clients.
// Only lower bounds on times are asserted, plus one upper bound with a wide margin
// (overlapping delays against delays that add up).
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "delay_line.hpp"

// cmocka last: it defines macros that clash with the standard library.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

using cachekit::bench::DelayOptions;
using cachekit::bench::DelayRelay;
using namespace std::chrono_literals;

namespace {

constexpr int kWaitMs = 5000;  // every blocking step of a test is bounded by this

int64_t now_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// A relay to 127.0.0.1:target_port on a free port. Relays live until the process exits:
// a failed assertion longjmps past destructors, and a relay left running on a reused
// stack slot would corrupt the next test's.
DelayRelay &relay_to(uint16_t target_port, std::chrono::microseconds one_way) {
    static std::deque<std::unique_ptr<DelayRelay>> relays;
    DelayOptions o;
    o.one_way = one_way;
    relays.push_back(std::make_unique<DelayRelay>("127.0.0.1", 0, "127.0.0.1", target_port, o));
    return *relays.back();
}

// The relay's target: a loopback listener the test accepts from.
struct Upstream {
    int fd = -1;
    uint16_t port = 0;
    explicit Upstream(int rcvbuf = 0) {
        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (rcvbuf > 0) setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);  // inherited by accept
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        assert_int_equal(bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a), 0);
        assert_int_equal(listen(fd, 16), 0);
        socklen_t len = sizeof a;
        getsockname(fd, reinterpret_cast<sockaddr *>(&a), &len);
        port = ntohs(a.sin_port);
    }
    ~Upstream() { close(fd); }
    int accept_one() const {
        pollfd p{fd, POLLIN, 0};
        assert_int_equal(poll(&p, 1, kWaitMs), 1);
        const int c = accept4(fd, nullptr, nullptr, SOCK_CLOEXEC);
        assert_true(c >= 0);
        return c;
    }
};

int connect_local(uint16_t port) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    assert_int_equal(connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof a), 0);
    return fd;
}

// One recv, waiting at most kWaitMs: bytes read, 0 at EOF, -1 on an error or a reset.
ssize_t recv_some(int fd, char *buf, size_t n) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, kWaitMs) != 1) fail_msg("no data nor EOF within %d ms", kWaitMs);
    return recv(fd, buf, n, 0);
}

std::string recv_exact(int fd, size_t n) {
    std::string out(n, '\0');
    size_t got = 0;
    while (got < n) {
        const ssize_t r = recv_some(fd, out.data() + got, n - got);
        if (r <= 0) fail_msg("the stream ended after %zu of %zu bytes", got, n);
        got += static_cast<size_t>(r);
    }
    return out;
}

void expect_eof(int fd) {
    char c;
    assert_true(recv_some(fd, &c, 1) <= 0);
}

void send_all(int fd, const char *p, size_t n) {
    while (n > 0) {
        const ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        assert_true(w > 0);
        p += w;
        n -= static_cast<size_t>(w);
    }
}

void wait_for_no_connections(const DelayRelay &relay) {
    for (int i = 0; i < kWaitMs && relay.open_connections() != 0; ++i) std::this_thread::sleep_for(1ms);
    assert_int_equal(relay.open_connections(), 0);
}

// B9's setting: 125 us each way, so a round trip takes at least 250 us.
void test_each_direction_is_delayed(void **) {
    Upstream up;
    DelayRelay &relay = relay_to(up.port, 125us);
    const int client = connect_local(relay.port());
    const int server = up.accept_one();
    for (int round = 0; round < 20; ++round) {
        const char out = static_cast<char>('a' + round);
        const int64_t t0 = now_ns();
        send_all(client, &out, 1);
        assert_int_equal(recv_exact(server, 1)[0], out);
        const int64_t t1 = now_ns();
        send_all(server, &out, 1);
        assert_int_equal(recv_exact(client, 1)[0], out);
        const int64_t t2 = now_ns();
        assert_true(t1 - t0 >= 125'000);
        assert_true(t2 - t0 >= 250'000);
    }
    close(client);
    close(server);
    wait_for_no_connections(relay);
}

// Chunks sent 5 ms apart through a 50 ms line arrive about 5 ms apart, not 50: 8 of them
// take about 85 ms, where delays that add up would take 400 ms or more.
void test_delays_overlap_like_a_link(void **) {
    Upstream up;
    DelayRelay &relay = relay_to(up.port, 50ms);
    const int client = connect_local(relay.port());
    const int server = up.accept_one();
    std::vector<int64_t> sent;
    for (int i = 0; i < 8; ++i) {
        const char c = static_cast<char>('0' + i);
        sent.push_back(now_ns());
        send_all(client, &c, 1);
        std::this_thread::sleep_for(5ms);
    }
    for (int i = 0; i < 8; ++i) {
        assert_int_equal(recv_exact(server, 1)[0], '0' + i);
        assert_true(now_ns() - sent[static_cast<size_t>(i)] >= 50'000'000);
    }
    assert_true(now_ns() - sent[0] < 300'000'000);
    close(client);
    close(server);
    wait_for_no_connections(relay);
}

// 4 MiB into a target that reads slowly through a small receive buffer: the relay's
// sends come up short and it finishes them later; every byte arrives, in order.
void test_order_and_bytes_survive_backpressure(void **) {
    Upstream up(4096);
    DelayRelay &relay = relay_to(up.port, 125us);
    const int client = connect_local(relay.port());
    const int server = up.accept_one();
    constexpr size_t kTotal = 4 << 20;
    std::string pattern(kTotal, '\0');
    for (size_t i = 0; i < kTotal; ++i) pattern[i] = static_cast<char>((i * 7919 + i / 251) & 0xff);
    std::atomic<bool> write_failed{false};
    std::thread writer([&] {  // no cmocka assertion off the main thread
        size_t off = 0, step = 1;
        while (off < kTotal) {
            const size_t n = std::min(kTotal - off, step);
            const ssize_t w = send(client, pattern.data() + off, n, MSG_NOSIGNAL);
            if (w <= 0) {
                write_failed = true;
                break;
            }
            off += static_cast<size_t>(w);
            step = step * 3 % 200'003 + 1;  // write sizes from 1 B to ~200 KB
        }
        shutdown(client, SHUT_WR);
    });
    std::string got;
    got.reserve(kTotal);
    std::vector<char> buf(4096);
    for (int reads = 0;; ++reads) {
        if (reads < 200) std::this_thread::sleep_for(200us);  // slow at first: the relay's buffer fills
        const ssize_t r = recv_some(server, buf.data(), buf.size());
        if (r <= 0) break;
        got.append(buf.data(), static_cast<size_t>(r));
    }
    writer.join();
    assert_false(write_failed.load());
    assert_int_equal(got.size(), kTotal);
    assert_true(got == pattern);
    assert_true(relay.partial_sends() > 0);
    close(client);
    close(server);
    wait_for_no_connections(relay);
}

// A half-close travels like data: the far side sees EOF no sooner than the delay after
// it, can still answer, and its close reaches the client after the delay too.
void test_eof_is_forwarded_after_the_delay_both_ways(void **) {
    Upstream up;
    DelayRelay &relay = relay_to(up.port, 20ms);
    const int client = connect_local(relay.port());
    const int server = up.accept_one();
    send_all(client, "ping", 4);
    const int64_t t0 = now_ns();
    shutdown(client, SHUT_WR);
    assert_true(recv_exact(server, 4) == "ping");
    expect_eof(server);
    assert_true(now_ns() - t0 >= 20'000'000);
    send_all(server, "pong", 4);
    const int64_t t1 = now_ns();
    close(server);
    assert_true(recv_exact(client, 4) == "pong");
    expect_eof(client);
    assert_true(now_ns() - t1 >= 20'000'000);
    close(client);
    wait_for_no_connections(relay);
}

void test_unreachable_target_closes_the_client(void **) {
    uint16_t dead_port;
    {
        Upstream gone;  // a port that nothing listens on once this closes
        dead_port = gone.port;
    }
    DelayRelay &relay = relay_to(dead_port, 125us);
    const int client = connect_local(relay.port());
    expect_eof(client);
    close(client);
    assert_int_equal(relay.open_connections(), 0);
}

void test_stop_closes_open_connections(void **) {
    Upstream up;
    DelayRelay &relay = relay_to(up.port, 125us);
    const int client = connect_local(relay.port());
    const int server = up.accept_one();
    send_all(client, "x", 1);
    assert_true(recv_exact(server, 1) == "x");
    relay.stop();
    assert_int_equal(relay.open_connections(), 0);
    expect_eof(client);
    expect_eof(server);
    relay.stop();  // idempotent
    close(client);
    close(server);
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_direction_is_delayed),
        cmocka_unit_test(test_delays_overlap_like_a_link),
        cmocka_unit_test(test_order_and_bytes_survive_backpressure),
        cmocka_unit_test(test_eof_is_forwarded_after_the_delay_both_ways),
        cmocka_unit_test(test_unreachable_target_closes_the_client),
        cmocka_unit_test(test_stop_closes_open_connections),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
