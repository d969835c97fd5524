// B8-TLS: Backend::get over rediss:// vs a raw client on the same TLS link
// (OpenSSL's SSL_write of the RESP GET, SSL_read into hiredis's reader, the
// reply copied out), for 100 B and 14 KiB values: the library's overhead
// over TLS. Beside them the same get over redis:// on the same server (one
// process, both ports), whose ratio to the TLS get is the price of TLS.
// B8TLS-connect: what a reconnect costs, one connection's life (connect,
// handshake, PING, close) over TLS with a full handshake and with the
// session the transport keeps resumed, beside the same over plain TCP.
// Makes throwaway certificates (tests/redis/tls_certs.hpp) and its server.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "l2/redis/redis_backend.hpp"
#include "l2/redis/transport.hpp"
#include "redis_bench_main.hpp"
#include "tls_certs.hpp"

namespace {

using cachekit::Buffer;
using cachekit::l2::Deadline;
using namespace std::chrono_literals;

constexpr int kWarmup = 200;

std::unique_ptr<cachekit::l2::Backend> plain, secure;

// The anchor: what a minimal client does over TLS, with nothing of ours.
class RawTls {
public:
    RawTls(int port, const std::string &ca_file) {
        ctx_ = SSL_CTX_new(TLS_client_method());
        if (ctx_ == nullptr || SSL_CTX_load_verify_locations(ctx_, ca_file.c_str(), nullptr) != 1)
            throw std::runtime_error("anchor: cannot load the CA");
        SSL_CTX_set_verify(ctx_, SSL_VERIFY_PEER, nullptr);
        fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_port = htons(static_cast<uint16_t>(port));
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (fd_ < 0 || ::connect(fd_, reinterpret_cast<sockaddr *>(&addr), sizeof addr) != 0)
            throw std::runtime_error("anchor: cannot connect");
        int one = 1;
        setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);  // as hiredis does
        ssl_ = SSL_new(ctx_);
        SSL_set_fd(ssl_, fd_);
        if (SSL_connect(ssl_) != 1) throw std::runtime_error("anchor: TLS handshake failed");
        reader_ = redisReaderCreate();
    }
    ~RawTls() {
        redisReaderFree(reader_);
        SSL_free(ssl_);
        ::close(fd_);
        SSL_CTX_free(ctx_);
    }
    RawTls(const RawTls &) = delete;
    RawTls &operator=(const RawTls &) = delete;

    void get(std::string_view key, Buffer &out) {
        cmd_ = "*2\r\n$3\r\nGET\r\n$" + std::to_string(key.size()) + "\r\n";
        cmd_.append(key).append("\r\n");
        if (SSL_write(ssl_, cmd_.data(), static_cast<int>(cmd_.size())) <= 0) die("write");
        void *reply = nullptr;
        while (reply == nullptr) {
            const int n = SSL_read(ssl_, chunk_, sizeof chunk_);
            if (n <= 0) die("read");
            redisReaderFeed(reader_, chunk_, static_cast<size_t>(n));
            if (redisReaderGetReply(reader_, &reply) != REDIS_OK) die("parse");
        }
        auto *r = static_cast<redisReply *>(reply);
        if (r->type != REDIS_REPLY_STRING) die("reply");
        cachekit::buf_assign(out.get(), r->str, r->len);
        freeReplyObject(r);
    }

private:
    [[noreturn]] static void die(const char *what) {
        std::fprintf(stderr, "anchor GET failed: %s\n", what);
        std::abort();
    }
    SSL_CTX *ctx_ = nullptr;
    SSL *ssl_ = nullptr;
    int fd_ = -1;
    redisReader *reader_ = nullptr;
    std::string cmd_;
    char chunk_[64 * 1024];
};

std::unique_ptr<RawTls> raw;

int dial(int port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr *>(&addr), sizeof addr) != 0) {
        std::fprintf(stderr, "connect bench: cannot connect\n");
        std::abort();
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

constexpr char kPing[] = "*1\r\n$4\r\nPING\r\n";
constexpr size_t kPong = 7;  // "+PONG\r\n"

void connect_plain(benchmark::State &state, int port) {
    char reply[16];
    for (auto _ : state) {
        const int fd = dial(port);
        if (::send(fd, kPing, sizeof kPing - 1, MSG_NOSIGNAL) != ssize_t(sizeof kPing - 1) ||
            ::recv(fd, reply, kPong, MSG_WAITALL) != ssize_t(kPong))
            state.SkipWithError("plain PING failed");
        ::close(fd);
    }
}

// resume: one context for the whole run (each connection offers the last
// session); else a context of its own per connection, made untimed.
void connect_tls(benchmark::State &state, int port, cachekit::l2::RedisTls settings, bool resume) {
    namespace tls = cachekit::l2::tls;
    auto context = std::make_unique<tls::Context>(settings, "127.0.0.1");
    char reply[16];
    int64_t resumed = 0;
    for (auto _ : state) {
        if (!resume) {
            state.PauseTiming();
            context = std::make_unique<tls::Context>(settings, "127.0.0.1");
            state.ResumeTiming();
        }
        const int fd = dial(port);
        SSL *ssl = context->connect(fd, std::chrono::steady_clock::now() + 5s, "bench");
        resumed += tls::Context::resumed(ssl);
        // Reading the reply also takes the server's TLS 1.3 tickets in.
        if (tls::write(ssl, kPing, sizeof kPing - 1) <= 0 || tls::read(ssl, reply, sizeof reply) < long(kPong))
            state.SkipWithError("TLS PING failed");
        tls::forget(ssl);
        ::close(fd);
    }
    state.counters["resumed_share"] = state.iterations() ? double(resumed) / double(state.iterations()) : 0.0;
}
void hit(benchmark::State &state, cachekit::l2::Backend *b, std::string key, size_t size) {
    cachekit::bench::time_gets(state, size, kWarmup,
                               [&](Buffer &out) { b->get(key, out.get(), Deadline::after(5000ms)); });
}

void anchor(benchmark::State &state, std::string key, size_t size) {
    cachekit::bench::time_gets(state, size, kWarmup, [&](Buffer &out) { raw->get(key, out); });
}

}  // namespace

int main(int argc, char **argv) {
    return cachekit::bench::redis_bench_main(argc, argv, "redis_tls_bench", [] {
        const std::string dir = cachekit::testing::make_tls_certs();
        if (dir.empty()) throw std::runtime_error("cannot make certificates with the openssl CLI");
        {
            cachekit::testing::TlsServer server = cachekit::testing::start_tls_server(dir, "server", false);
            plain = cachekit::l2::open_redis(cachekit::l2::parse_redis_url(server.server->url()));
            secure = cachekit::l2::open_redis(cachekit::l2::parse_redis_url(
                "rediss://127.0.0.1:" + std::to_string(server.tls_port) + "?ssl_ca_certs=" + dir + "/ca.crt"));
            raw = std::make_unique<RawTls>(server.tls_port, dir + "/ca.crt");
            const std::string small = cachekit::bench::payload(100), large = cachekit::bench::payload(14 * 1024);
            plain->set("b8:100", small, std::nullopt, Deadline::after(5000ms));
            plain->set("b8:14k", large, std::nullopt, Deadline::after(5000ms));

            benchmark::RegisterBenchmark("B8TLS-100/plain", hit, plain.get(), std::string("b8:100"), small.size())
                ->UseRealTime();
            benchmark::RegisterBenchmark("B8TLS-100/tls", hit, secure.get(), std::string("b8:100"), small.size())
                ->UseRealTime();
            benchmark::RegisterBenchmark("B8TLS-100/anchor", anchor, std::string("b8:100"), small.size())
                ->UseRealTime();
            benchmark::RegisterBenchmark("B8TLS-14k/plain", hit, plain.get(), std::string("b8:14k"), large.size())
                ->UseRealTime();
            benchmark::RegisterBenchmark("B8TLS-14k/tls", hit, secure.get(), std::string("b8:14k"), large.size())
                ->UseRealTime();
            benchmark::RegisterBenchmark("B8TLS-14k/anchor", anchor, std::string("b8:14k"), large.size())
                ->UseRealTime();
            cachekit::l2::RedisTls settings;
            settings.enabled = true;
            settings.ca_certs = dir + "/ca.crt";
            benchmark::RegisterBenchmark("B8TLS-connect/plain", connect_plain, server.server->port())->UseRealTime();
            benchmark::RegisterBenchmark("B8TLS-connect/full", connect_tls, server.tls_port, settings, false)
                ->UseRealTime();
            benchmark::RegisterBenchmark("B8TLS-connect/resumed", connect_tls, server.tls_port, settings, true)
                ->UseRealTime();
            cachekit::bench::run_registered();
            raw.reset();
            secure.reset();
            plain.reset();
        }
        cachekit::testing::run_shell("rm -rf " + dir);
    });
}
