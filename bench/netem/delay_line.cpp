#include "delay_line.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <stdexcept>
#include <system_error>
#include <utility>

namespace cachekit::bench {

namespace {

int64_t now_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

// Sleeps to `spin` before the deadline, then spins: clock_nanosleep alone wakes tens of
// microseconds late, a fifth of the delay being simulated.
void wait_until(int64_t deadline, int64_t spin) {
    const int64_t wake = deadline - spin;
    if (now_ns() < wake) {
        timespec ts{static_cast<time_t>(wake / 1'000'000'000), static_cast<long>(wake % 1'000'000'000)};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
        }
    }
    while (now_ns() < deadline) cpu_relax();
}

struct Chunk {
    int64_t deadline = 0;
    std::string bytes;
    bool eof = false;  // the source closed (or failed): half-close the destination
};

void no_delay(int fd) {
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

struct AddrInfo {
    addrinfo *list = nullptr;
    AddrInfo(const std::string &host, uint16_t port, int flags) {
        addrinfo hints{};
        hints.ai_family = AF_UNSPEC;
        hints.ai_socktype = SOCK_STREAM;
        hints.ai_flags = flags | AI_NUMERICSERV;
        const int rc = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &list);
        if (rc != 0) throw std::runtime_error("delay relay: cannot resolve " + host + ": " + gai_strerror(rc));
    }
    ~AddrInfo() { freeaddrinfo(list); }
    AddrInfo(const AddrInfo &) = delete;
    AddrInfo &operator=(const AddrInfo &) = delete;
};

int connect_to(const std::string &host, uint16_t port) {
    AddrInfo ai(host, port, 0);
    for (addrinfo *a = ai.list; a != nullptr; a = a->ai_next) {
        int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) continue;
        int rc;
        do rc = connect(fd, a->ai_addr, a->ai_addrlen);
        while (rc != 0 && errno == EINTR);
        if (rc == 0) return fd;
        close(fd);
    }
    return -1;
}

}  // namespace

// One direction of a relayed connection: `from` is read, `to` is written.
struct Direction {
    int from = -1;
    int to = -1;
    std::mutex mu;
    std::condition_variable ready;
    std::deque<Chunk> fifo;
    bool stopped = false;

    void push(Chunk chunk) {
        {
            std::lock_guard lock(mu);
            fifo.push_back(std::move(chunk));
        }
        ready.notify_one();
    }

    void stop() {
        {
            std::lock_guard lock(mu);
            stopped = true;
        }
        ready.notify_one();
    }

    // Reads until EOF or an error, stamping each chunk with its deadline on arrival.
    void read_loop(int64_t delay, size_t chunk_bytes) {
        std::string buf(chunk_bytes, '\0');
        for (;;) {
            const ssize_t n = recv(from, buf.data(), buf.size(), 0);
            if (n < 0 && errno == EINTR) continue;
            const int64_t deadline = now_ns() + delay;
            if (n <= 0) {
                push(Chunk{deadline, {}, true});
                return;
            }
            push(Chunk{deadline, buf.substr(0, static_cast<size_t>(n)), false});
        }
    }

    // Writes every byte of `bytes`, waiting for room when the peer's buffer is full
    // (each such short send counted in `partial`). False when the destination failed.
    bool send_all(const std::string &bytes, std::atomic<uint64_t> &partial) {
        size_t off = 0;
        while (off < bytes.size()) {
            const ssize_t n = send(to, bytes.data() + off, bytes.size() - off, MSG_DONTWAIT | MSG_NOSIGNAL);
            if (n > 0) {
                off += static_cast<size_t>(n);
                if (off < bytes.size()) partial.fetch_add(1);
                continue;
            }
            if (n < 0 && errno == EINTR) continue;
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
                pollfd p{to, POLLOUT, 0};
                poll(&p, 1, -1);  // stop() shuts the socket down, which wakes this
                continue;
            }
            return false;
        }
        return true;
    }

    // Forwards the chunks in order, each at its deadline; half-closes `to` at EOF.
    void write_loop(int64_t spin, std::atomic<uint64_t> &partial) {
        prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);  // the sleep's precision, per thread
        for (;;) {
            Chunk chunk;
            {
                std::unique_lock lock(mu);
                ready.wait(lock, [&] { return stopped || !fifo.empty(); });
                if (stopped) return;
                chunk = std::move(fifo.front());
                fifo.pop_front();
            }
            wait_until(chunk.deadline, spin);
            if (chunk.eof) {
                shutdown(to, SHUT_WR);
                return;
            }
            if (!send_all(chunk.bytes, partial)) {
                shutdown(from, SHUT_RD);  // ends this direction's reader too
                return;
            }
        }
    }
};

struct DelayRelay::Connection {
    DelayRelay *relay;
    int client;
    int server;
    Direction up;    // client -> server
    Direction down;  // server -> client

    Connection(DelayRelay *r, int client_fd, int server_fd) : relay(r), client(client_fd), server(server_fd) {
        up.from = down.to = client;
        up.to = down.from = server;
        relay->open_.fetch_add(1);
    }
    ~Connection() {
        close(client);
        close(server);
        relay->open_.fetch_sub(1);
    }
    Connection(const Connection &) = delete;
    Connection &operator=(const Connection &) = delete;

    void shut() {
        shutdown(client, SHUT_RDWR);
        shutdown(server, SHUT_RDWR);
        up.stop();
        down.stop();
    }
};

DelayRelay::DelayRelay(const std::string &listen_host, uint16_t listen_port, std::string target_host,
                       uint16_t target_port, DelayOptions options)
    : target_host_(std::move(target_host)), target_port_(target_port), options_(options) {
    AddrInfo ai(listen_host, listen_port, AI_PASSIVE);
    std::string why = "no address";
    for (addrinfo *a = ai.list; a != nullptr && listen_fd_ < 0; a = a->ai_next) {
        int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) continue;
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, 128) == 0) {
            listen_fd_ = fd;
        } else {
            why = std::strerror(errno);
            close(fd);
        }
    }
    if (listen_fd_ < 0)
        throw std::runtime_error("delay relay: cannot listen on " + listen_host + ":" + std::to_string(listen_port) +
                                 ": " + why);
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    getsockname(listen_fd_, reinterpret_cast<sockaddr *>(&addr), &len);
    port_ = ntohs(addr.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6 *>(&addr)->sin6_port
                                             : reinterpret_cast<sockaddr_in *>(&addr)->sin_port);
    acceptor_ = std::thread([this] { accept_loop(); });
}

DelayRelay::~DelayRelay() { stop(); }

void DelayRelay::accept_loop() {
    for (;;) {
        const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (stopping_.load()) {
            if (fd >= 0) close(fd);
            return;
        }
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED) continue;
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                std::this_thread::sleep_for(std::chrono::milliseconds(10));  // let connections close
                continue;
            }
            return;
        }
        relay(fd);
    }
}

void DelayRelay::relay(int client_fd) {
    const int server_fd = connect_to(target_host_, target_port_);
    if (server_fd < 0) {
        close(client_fd);  // the client sees the connection closed, as with a refused one
        return;
    }
    no_delay(client_fd);
    no_delay(server_fd);
    auto conn = std::make_shared<Connection>(this, client_fd, server_fd);
    {
        std::lock_guard lock(mu_);
        std::erase_if(connections_, [](const auto &w) { return w.expired(); });
        connections_.push_back(conn);
    }
    const int64_t delay = options_.one_way.count();
    const int64_t spin = options_.spin.count();
    const size_t chunk = options_.chunk_bytes;
    auto spawn = [&](auto body) {
        {
            std::lock_guard lock(mu_);
            ++live_threads_;
        }
        try {
            std::thread([this, conn, body]() mutable {
                body(*conn);
                conn.reset();  // the last thread closes the sockets before the relay may go
                thread_done();
            }).detach();
        } catch (const std::system_error &) {
            conn->shut();
            thread_done();
        }
    };
    spawn([=](Connection &c) { c.up.read_loop(delay, chunk); });
    spawn([=, this](Connection &c) { c.up.write_loop(spin, partial_sends_); });
    spawn([=](Connection &c) { c.down.read_loop(delay, chunk); });
    spawn([=, this](Connection &c) { c.down.write_loop(spin, partial_sends_); });
}

void DelayRelay::thread_done() {
    std::lock_guard lock(mu_);
    --live_threads_;
    all_done_.notify_all();
}

void DelayRelay::stop() {
    if (stopping_.exchange(true)) return;
    shutdown(listen_fd_, SHUT_RDWR);  // wakes accept()
    if (acceptor_.joinable()) acceptor_.join();
    close(listen_fd_);
    std::unique_lock lock(mu_);
    for (auto &w : connections_)
        if (auto c = w.lock()) c->shut();
    all_done_.wait(lock, [&] { return live_threads_ == 0; });
}

}  // namespace cachekit::bench
