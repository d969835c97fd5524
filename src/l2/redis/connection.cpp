// Connections to a Redis server (connection.hpp): the transport calls, the
// connects (blocking, and the feed's stepped dial), the first commands, the
// pool and the RedisNode/RedisSession face it shows the cluster and
// sentinel backends. The wire that runs commands on a pooled connection is
// wire.cpp.
#include "l2/redis/connection.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <new>

#include "l2/redis/redis_node.hpp"
#include "util/error.hpp"

namespace cachekit::l2::redis_conn {
namespace {

using std::chrono::duration_cast;
using std::chrono::microseconds;
using std::chrono::milliseconds;

constexpr size_t kReaderKeepBytes = 1 << 20;  // a connection's read buffer kept between replies
// An idle connection unused for this long is probed (MSG_PEEK) before reuse,
// so one closed by the server (restart, idle timeout) is dropped silently.
constexpr int64_t kProbeAfterIdleMs = 1000;
constexpr uint64_t kDefaultMaxReplyBytes = kRedisDefaultMaxReplyBytes;

// The reason of the last kFailed on this thread.
thread_local std::string t_why;

// Coarse monotonic time (a few ns to read) for idle bookkeeping only.
inline int64_t coarse_ms() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

bool is_timeout_errno(int e) { return e == EAGAIN || e == EWOULDBLOCK || e == ETIMEDOUT || e == EINPROGRESS; }

bool is_timeout(int saved_errno, const redisContext *ctx) {
    if (is_timeout_errno(saved_errno)) return true;
    // hiredis formats the error from errno; trust the text if errno moved.
    return std::strstr(ctx->errstr, std::strerror(EAGAIN)) != nullptr ||
           std::strstr(ctx->errstr, "timed out") != nullptr;
}

// A plain socket call's result: EINTR is the caller's to retry.
long plain_result(ssize_t n) {
    if (n >= 0) return static_cast<long>(n);
    const int err = errno;
    if (err == EAGAIN || err == EWOULDBLOCK || err == EINTR) return kWouldBlock;
    t_why = std::strerror(err);
    return kFailed;
}

// A TLS call's result, its reason kept for io_why().
long tls_result(long n) {
    if (n == kFailed) t_why = tls::why();
    return n;
}

}  // namespace

timeval to_timeval(long long us) {
    if (us < 1) us = 1;  // {0, 0} would mean "no timeout"
    timeval tv;
    tv.tv_sec = static_cast<time_t>(us / 1000000);
    tv.tv_usec = static_cast<suseconds_t>(us % 1000000);
    return tv;
}

void Link::close() noexcept {
    if (ssl) tls::forget(ssl);  // before the socket closes; no close_notify
    ssl = nullptr;
    tls_inflight = 0;
    // redisFree closes the fd and frees memory; it writes nothing (no QUIT).
    if (ctx) redisFree(ctx);
    ctx = nullptr;
}

// ---- Transport.

long recv_some(Link &link, char *buf, size_t len) {
    if (link.ssl) [[unlikely]]
        return tls_result(tls::read(link.ssl, buf, len));
    for (;;) {
        const ssize_t n = ::recv(link.ctx->fd, buf, len, 0);
        if (n == 0) return kClosed;
        if (n < 0 && errno == EINTR) continue;
        return plain_result(n);
    }
}

long send_some(Link &link, const char *buf, size_t len) {
    if (link.ssl) {
        if (link.tls_inflight) len = link.tls_inflight;  // OpenSSL wants the same write again
        const long put = tls_result(tls::write(link.ssl, buf, len));
        link.tls_inflight = put == kWouldBlock ? len : 0;
        return put;
    }
    for (;;) {
        const ssize_t n = ::send(link.ctx->fd, buf, len, MSG_NOSIGNAL);  // never SIGPIPE
        if (n < 0 && errno == EINTR) continue;
        return plain_result(n);
    }
}

long sendv_some(Link &link, const iovec *iov, int count) {
    msghdr msg{};
    msg.msg_iov = const_cast<iovec *>(iov);
    msg.msg_iovlen = static_cast<size_t>(count);
    return plain_result(sendmsg(link.ctx->fd, &msg, MSG_NOSIGNAL));  // never SIGPIPE
}

std::string io_why(long result) {
    return result == kClosed ? std::string("the server closed the connection") : t_why;
}

bool tls_pending(const Link &link) { return link.ssl && tls::pending(link.ssl); }

bool wait_readable(Link &link, int wait_ms) {
    if (tls_pending(link)) return true;  // poll cannot see what OpenSSL holds
    for (;;) {
        pollfd p{link.ctx->fd, POLLIN, 0};
        const int ready = ::poll(&p, 1, wait_ms);
        if (ready < 0 && errno == EINTR) continue;
        return ready > 0;
    }
}

bool set_io_timeout(Link &link, long long us) {
    const timeval tv = to_timeval(us);
    return setsockopt(link.ctx->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) == 0 &&
           setsockopt(link.ctx->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) == 0;
}

void shut(Link &link) noexcept {
    if (link.ctx) ::shutdown(link.ctx->fd, SHUT_RDWR);
}

// ---- Connect.

void connect_socket(Link &link, const RedisConfig &config, long long connect_us, SteadyClock::time_point deadline,
                    const std::string &where) {
    const timeval tv = to_timeval(connect_us);
    errno = 0;
    link.ctx = config.unix_path.empty() ? redisConnectWithTimeout(config.host.c_str(), config.port, tv)
                                        : redisConnectUnixWithTimeout(config.unix_path.c_str(), tv);
    const int saved = errno;
    if (link.ctx == nullptr) throw std::bad_alloc();
    if (link.ctx->err) {
        const bool timeout = is_timeout(saved, link.ctx) || SteadyClock::now() >= deadline;
        fail(timeout ? CACHEKIT_ETIMEOUT : CACHEKIT_EBACKEND,
             where + ": " + (timeout ? "connect timed out: " : "connect failed: ") + link.ctx->errstr);
    }
    if (config.unix_path.empty() && redisEnableKeepAlive(link.ctx) != REDIS_OK)
        fail(CACHEKIT_EBACKEND, where + ": cannot enable TCP keepalive: " + link.ctx->errstr);
}

void start_tls(Link &link, const tls::Context &tls, SteadyClock::time_point until, const std::string &where) {
    link.ssl = tls.connect(link.ctx->fd, until, where);
}

void Dial::start(Link &link, const RedisConfig &config) {
    link.close();
    tls_want_ = 0;
    phase_ = Phase::Connecting;
    link.ctx = config.unix_path.empty() ? redisConnectNonBlock(config.host.c_str(), config.port)
                                        : redisConnectUnixNonBlock(config.unix_path.c_str());
    if (link.ctx == nullptr) throw std::bad_alloc();
    if (link.ctx->err) fail(CACHEKIT_EBACKEND, std::string("connect failed: ") + link.ctx->errstr);
}

bool Dial::step(Link &link, short revents, const RedisConfig &config, const tls::Context *tls) {
    if (phase_ == Phase::Connecting) {
        if ((revents & (POLLOUT | POLLERR | POLLHUP)) == 0) return false;
        int err = 0;
        socklen_t len = sizeof err;
        if (::getsockopt(link.ctx->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
        if (err != 0) fail(CACHEKIT_EBACKEND, std::string("connect: ") + std::strerror(err));
        if (config.unix_path.empty()) redisEnableKeepAlive(link.ctx);
        if (tls == nullptr) {
            phase_ = Phase::Done;
            return true;
        }
        link.ssl = tls->session(link.ctx->fd, config.host);
        phase_ = Phase::Tls;
    }
    if (phase_ == Phase::Tls) {
        const long step = tls::handshake(link.ssl);
        if (step == tls::kFailed) fail(CACHEKIT_EBACKEND, "TLS handshake failed: " + tls::why());
        tls_want_ = step;
        if (step == 0) phase_ = Phase::Done;
    }
    return phase_ == Phase::Done;
}

short Dial::events() const noexcept {
    if (phase_ == Phase::Connecting) return short(POLLIN | POLLOUT);
    if (phase_ == Phase::Tls) return tls_want_ == tls::kWantWrite ? POLLOUT : POLLIN;
    return 0;
}

std::vector<HandshakeCommand> handshake_commands(const RedisConfig &config, bool select_db,
                                                 std::string_view client_name) {
    std::vector<HandshakeCommand> commands;
    if (!config.password.empty()) {
        HandshakeCommand auth{"AUTH", {"AUTH"}, true};
        if (!config.username.empty()) auth.args.push_back(config.username);  // Redis 6 ACL
        auth.args.push_back(config.password);
        commands.push_back(std::move(auth));
    }
    if (select_db && config.db != 0) commands.push_back({"SELECT", {"SELECT", std::to_string(config.db)}, true});
    if (!client_name.empty())
        commands.push_back({"CLIENT SETNAME", {"CLIENT", "SETNAME", std::string(client_name)}, false});
    return commands;
}

// ---- The pool.

Pool::Pool(const RedisConfig &config, std::string where)
    : config_(config),
      where_(where),
      wire_(std::move(where), duration_cast<microseconds>(config.command_timeout).count()),
      max_reply_bytes_(config.max_reply_bytes ? config.max_reply_bytes : kDefaultMaxReplyBytes),
      tls_(config.tls.enabled ? std::make_unique<tls::Context>(config.tls, config.host) : nullptr),
      pid_(fork_hooks::pid()) {
    idle_.reserve(config_.pool_size);
    all_.reserve(config_.pool_size);
    fork_hooks::join(this);
}

Pool::~Pool() {
    fork_hooks::leave(this);
    // No lease is alive now; in a child that never called, all_ also holds
    // connections the parent's threads had checked out: close them too.
    for (Conn *conn : all_) delete conn;
}

Conn *Pool::acquire(Deadline deadline) {
    if (pid_.load(std::memory_order_relaxed) != fork_hooks::pid()) [[unlikely]]
        forget_inherited();
    for (;;) {
        Conn *conn = take(deadline);
        if (conn->ctx != nullptr) {
            if (coarse_ms() - conn->last_used_ms < kProbeAfterIdleMs || alive(conn)) return conn;
            discard(conn);  // closed while idle: drop it quietly and take another
            continue;
        }
        // A reserved slot: connect outside the lock.
        try {
            connect(*conn, deadline);
        } catch (...) {
            drop_slot(conn);
            throw;
        }
        return conn;
    }
}

void Pool::release(Conn *conn) noexcept {
    if (!conn->reusable()) {
        discard(conn);
        return;
    }
    conn->last_used_ms = coarse_ms();
    std::lock_guard<std::mutex> lock(mu_);
    idle_.push_back(conn);  // capacity reserved: never allocates
    if (waiters_) cv_.notify_one();
}

void Pool::discard(Conn *conn) noexcept {
    std::vector<Conn *> stale;
    {
        std::lock_guard<std::mutex> lock(mu_);
        --open_;
        forget(conn);
        if (conn->server_gone) {
            stale.swap(idle_);
            idle_.reserve(config_.pool_size);
            open_ -= static_cast<unsigned>(stale.size());
            for (Conn *old : stale) forget(old);
        }
        if (waiters_) cv_.notify_all();
    }
    delete conn;
    for (Conn *old : stale) delete old;
}

void Pool::after_fork_child() noexcept {
    waiters_ = 0;                          // they were the parent's threads
    new (&cv_) std::condition_variable();  // the old one is abandoned, not destroyed
    mu_.unlock();
}

// First checkout in a forked child: every connection so far belongs to
// the parent. Close our copies (no QUIT, no shutdown) and start empty.
void Pool::forget_inherited() {
    std::vector<Conn *> inherited;
    {
        std::lock_guard<std::mutex> lock(mu_);
        const pid_t now = fork_hooks::pid();
        if (pid_.load(std::memory_order_relaxed) == now) return;  // another thread did it
        inherited.swap(all_);
        all_.reserve(config_.pool_size);
        idle_.clear();
        open_ = 0;
        backoff_ = milliseconds(0);
        retry_at_ = SteadyClock::time_point{};
        pid_.store(now, std::memory_order_relaxed);
    }
    for (Conn *conn : inherited) delete conn;
}

// Under mu_: conn leaves the list of live connections.
void Pool::forget(Conn *conn) noexcept {
    auto it = std::find(all_.begin(), all_.end(), conn);
    if (it != all_.end()) all_.erase(it);
}

// An idle connection, or a new Conn with ctx == nullptr holding a slot.
Conn *Pool::take(Deadline deadline) {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
        if (!idle_.empty()) {
            Conn *conn = idle_.back();  // LIFO: the warmest connection
            idle_.pop_back();
            return conn;
        }
        if (open_ < config_.pool_size) {
            auto now = SteadyClock::now();
            if (now < retry_at_) {
                auto left = duration_cast<milliseconds>(retry_at_ - now).count() + 1;
                std::string last = last_connect_error_;
                lock.unlock();
                fail(CACHEKIT_EBACKEND, where_ + ": not reconnecting for another " + std::to_string(left) +
                                            " ms after a failed connect (" + last + ")");
            }
            Conn *fresh = new Conn(max_reply_bytes_);
            all_.push_back(fresh);  // capacity reserved: never reallocates
            ++open_;
            return fresh;
        }
        ++waiters_;
        bool ready =
            cv_.wait_until(lock, deadline.at, [&] { return !idle_.empty() || open_ < config_.pool_size; });
        --waiters_;
        if (!ready)
            fail(CACHEKIT_ETIMEOUT, where_ + ": timed out waiting for a free connection (pool of " +
                                        std::to_string(config_.pool_size) + ")");
    }
}

void Pool::drop_slot(Conn *conn) noexcept {
    {
        std::lock_guard<std::mutex> lock(mu_);
        --open_;
        forget(conn);
        if (waiters_) cv_.notify_one();
    }
    delete conn;
}

bool Pool::alive(Conn *conn) {
    char byte;
    ssize_t n = ::recv(conn->ctx->fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    if (n > 0 && conn->ssl) {
        // TLS 1.3 session tickets arrive after the handshake: not stray data.
        bool gone = false;
        if (tls::idle_ok(conn->ssl, conn->ctx->fd, &gone)) return true;
        conn->server_gone = gone;
        return false;
    }
    conn->server_gone = n <= 0;  // EOF or reset; n > 0 is stray data: drop just this one
    return false;
}

void Pool::connect_failed(std::string message) {
    if (message.compare(0, where_.size() + 2, where_ + ": ") == 0) message.erase(0, where_.size() + 2);
    std::lock_guard<std::mutex> lock(mu_);
    backoff_ = backoff_.count() == 0 ? config_.reconnect_backoff_min
                                     : std::min(backoff_ * 2, config_.reconnect_backoff_max);
    retry_at_ = SteadyClock::now() + backoff_;
    last_connect_error_ = message;
}

void Pool::connect_succeeded() {
    std::lock_guard<std::mutex> lock(mu_);
    backoff_ = milliseconds(0);
    retry_at_ = SteadyClock::time_point{};
}

// Fails with ETIMEOUT (no backoff: a timeout already paced the caller)
// or EBACKEND (backoff armed).
void Pool::connect_error(const std::string &what, bool timeout) {
    std::string message = where_ + ": " + what;
    if (timeout) fail(CACHEKIT_ETIMEOUT, message);
    connect_failed(what);
    fail(CACHEKIT_EBACKEND, message);
}

// The socket (and TLS) within min(connect_timeout, deadline), then the
// handshake commands as ordinary round trips.
void Pool::connect(Conn &conn, Deadline deadline) {
    auto now = SteadyClock::now();
    const auto started = now;
    if (now >= deadline.at) fail(CACHEKIT_ETIMEOUT, where_ + ": deadline passed before connecting");
    long long left_us = duration_cast<microseconds>(deadline.at - now).count();
    long long connect_us = std::min<long long>(duration_cast<microseconds>(config_.connect_timeout).count(), left_us);
    try {
        connect_socket(conn, config_, connect_us, deadline.at, where_);
        // hiredis frees its read buffer after any reply that left it over
        // 16 KB and grows it again for the next: for values of tens of KB that
        // is a large malloc, free and realloc per read. Kept up to this size.
        conn.ctx->reader->maxbuf = kReaderKeepBytes;
        if (tls_) start_tls(conn, *tls_, started + microseconds(connect_us), where_);
    } catch (const Error &e) {
        if (e.code() != CACHEKIT_ETIMEOUT) connect_failed(e.what());  // no backoff for a timeout
        throw;
    }

    now = SteadyClock::now();
    left_us = duration_cast<microseconds>(deadline.at - now).count();
    if (left_us <= 0) fail(CACHEKIT_ETIMEOUT, where_ + ": deadline passed while connecting");
    long long command_us = duration_cast<microseconds>(config_.command_timeout).count();
    long long want = std::min(command_us, left_us);
    conn.timeout_us = want - want / 64;  // as Wire::arm does
    if (redisSetTimeout(conn.ctx, to_timeval(conn.timeout_us)) != REDIS_OK)
        connect_error(std::string("cannot set the socket timeout: ") + conn.ctx->errstr, false);

    for (const HandshakeCommand &command : handshake_commands(config_, true)) {
        const char *argv[3];
        size_t lens[3];
        const int argc = static_cast<int>(command.args.size());
        for (int i = 0; i < argc; ++i) {
            argv[i] = command.args[i].data();
            lens[i] = command.args[i].size();
        }
        redis_replies::Reply reply;
        try {
            reply = wire_.run(conn, argc, argv, lens, command.name, deadline);
        } catch (const Error &e) {
            if (e.code() == CACHEKIT_ETIMEOUT) throw;  // no backoff for a timeout
            connect_failed(e.what());
            throw;
        }
        if (redis_replies::is_error(*reply))
            connect_error(std::string(command.name) + " refused: " + std::string(redis_replies::text(*reply)), false);
    }
    conn.last_used_ms = coarse_ms();
    connect_succeeded();
}

std::string tcp_where(const RedisConfig &config) {
    const std::string host = config.host.find(':') != std::string::npos ? "[" + config.host + "]" : config.host;
    return (config.tls.enabled ? "redis (TLS) " : "redis ") + host + ":" + std::to_string(config.port);
}

}  // namespace cachekit::l2::redis_conn

namespace cachekit::l2 {

// RedisNode / RedisSession (redis_node.hpp): the pool, one connection at a time.
struct RedisNode::Impl {
    explicit Impl(const RedisConfig &config) : pool(config, redis_conn::tcp_where(config)) {}
    redis_conn::Pool pool;
};

using redis_conn::Conn;

RedisNode::RedisNode(const RedisConfig &config) : impl_(std::make_unique<Impl>(config)) {}
RedisNode::~RedisNode() = default;
const std::string &RedisNode::where() const { return impl_->pool.where(); }

RedisSession::RedisSession(RedisNode &node, Deadline deadline)
    : node_(*node.impl_), conn_(node_.pool.acquire(deadline)) {}
RedisSession::~RedisSession() { node_.pool.release(static_cast<Conn *>(conn_)); }
void RedisSession::append(int argc, const char *const *argv, const size_t *lens, ReplyShape shape) {
    node_.pool.wire().append(*static_cast<Conn *>(conn_), argc, argv, lens, shape);
}
void RedisSession::flush(const char *what, Deadline deadline) {
    node_.pool.wire().flush(*static_cast<Conn *>(conn_), what, deadline);
}
redis_replies::Reply RedisSession::next(const char *what, Deadline deadline) {
    return node_.pool.wire().next(*static_cast<Conn *>(conn_), what, deadline);
}
const std::string &RedisSession::where() const { return node_.pool.where(); }

}  // namespace cachekit::l2
