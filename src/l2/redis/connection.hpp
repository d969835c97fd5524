// The one place that owns a Redis socket (issue 26): connect (blocking for
// the pool and the publisher, stepped for the feed's poll loop), the TLS
// handshake, the commands a new connection sends first, the transport every
// read and write goes through (plain socket or TLS session), and the
// backend's pool with its deadline-bounded wire (wire.cpp). Keeping them
// here means one set of rules (MSG_NOSIGNAL, no close_notify after fork,
// the RespGuard before hiredis's reader) for every user of a connection:
// the backend, the cluster and sentinel nodes, the coherence feed.
// hiredis 0.14 is the connect helper and the reply parser, nothing more.
#pragma once

#include <hiredis/hiredis.h>
#include <sys/time.h>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "l2/backend.hpp"
#include "l2/redis/redis_backend.hpp"
#include "l2/redis/redis_replies.hpp"
#include "l2/redis/resp_guard.hpp"
#include "l2/redis/transport.hpp"
#include "util/fork_hooks.hpp"

struct iovec;

namespace cachekit::l2::redis_conn {

// One connected socket: hiredis's context (the fd, and the reader replies
// are parsed with), over TLS the session on it, and the guard every byte
// read passes before that reader. Closing writes nothing (no QUIT, no
// close_notify), so dropping a copy inherited over fork() leaves the
// parent's connection alone.
struct Link {
    redisContext *ctx = nullptr;
    SSL *ssl = nullptr;       // rediss://: the TLS session over ctx->fd
    size_t tls_inflight = 0;  // a TLS write that would block: retried with this length
    RespGuard guard;

    explicit Link(uint64_t max_reply_bytes) : guard(max_reply_bytes) {}
    ~Link() { close(); }
    Link(const Link &) = delete;
    Link &operator=(const Link &) = delete;

    int fd() const noexcept { return ctx ? ctx->fd : -1; }
    void close() noexcept;
};

// ---- Transport: every read and write, plain socket or TLS session.
// Results: > 0 bytes, or one of these (the values of tls::).
inline constexpr long kWouldBlock = tls::kWouldBlock;  // EAGAIN (a socket timeout, a non-blocking socket)
inline constexpr long kClosed = tls::kClosed;          // the peer closed the connection
inline constexpr long kFailed = tls::kFailed;          // an I/O or TLS error: io_why() says which

long recv_some(Link &link, char *buf, size_t len);
// Never raises SIGPIPE. Over TLS a write that returned kWouldBlock must be
// retried with the same bytes: the next call writes link.tls_inflight bytes.
long send_some(Link &link, const char *buf, size_t len);
// The plain socket only: a gathered write (sendmsg) of up to `count` pieces.
long sendv_some(Link &link, const iovec *iov, int count);
// Why a recv_some/send_some/sendv_some result below zero happened.
std::string io_why(long result);
// Whether OpenSSL holds decrypted bytes that poll cannot see.
bool tls_pending(const Link &link);
// Readable within wait_ms (or TLS bytes pending); false on a timeout or error.
bool wait_readable(Link &link, int wait_ms);
// SO_RCVTIMEO and SO_SNDTIMEO (at least 1 us). False when the socket refused.
bool set_io_timeout(Link &link, long long us);
// Wakes a thread blocked in this link's read (another thread may call it).
void shut(Link &link) noexcept;
// A socket timeout of `us` (at least 1 us: {0, 0} would mean none).
timeval to_timeval(long long us);

// ---- Connect.
// Blocking: a TCP (keepalive on) or unix connection within connect_us.
// Throws cachekit::Error naming `where`: CACHEKIT_ETIMEOUT for a timeout
// (or once `deadline` passed), CACHEKIT_EBACKEND otherwise.
void connect_socket(Link &link, const RedisConfig &config, long long connect_us, SteadyClock::time_point deadline,
                    const std::string &where);
// Blocking: the TLS handshake on the connected link, ended by `until`.
// Throws as tls::Context::connect.
void start_tls(Link &link, const tls::Context &tls, SteadyClock::time_point until, const std::string &where);

// Non-blocking, for an event loop (the feed): the TCP or unix connect in
// progress, then over TLS the handshake, each step taken when poll says
// the socket is ready. The loop owns the time limit.
class Dial {
public:
    enum class Phase { Connecting, Tls, Done };
    // Throws cachekit::Error (CACHEKIT_EBACKEND) when the connect cannot start.
    void start(Link &link, const RedisConfig &config);
    // After poll gave `revents` for link.fd(): true once connected (and
    // over TLS handshaken, through `tls`, which must outlive the link).
    // Throws cachekit::Error (CACHEKIT_EBACKEND) saying why it failed.
    bool step(Link &link, short revents, const RedisConfig &config, const tls::Context *tls);
    short events() const noexcept;
    Phase phase() const noexcept { return phase_; }

private:
    Phase phase_ = Phase::Done;
    long tls_want_ = 0;  // what the handshake waits for
};

// What a new connection sends before anything else, in order: AUTH (when a
// password is set), SELECT (when `select_db` and the db is not 0), CLIENT
// SETNAME (when `client_name` is given). A refused `required` one ends the
// connection; a refused SETNAME does not (the name is for operators only).
struct HandshakeCommand {
    const char *name;
    std::vector<std::string> args;
    bool required;
};
std::vector<HandshakeCommand> handshake_commands(const RedisConfig &config, bool select_db,
                                                 std::string_view client_name = {});

// ---- The pool's connections and their wire (wire.cpp).
inline constexpr size_t kReadChunk = 64 * 1024;  // bytes per recv: a value of up to ~64 KB arrives in one call

// The requests of one round trip, RESP-framed. Small arguments are copied
// next to the framing; large ones (values) are referenced and sent from the
// caller's memory with sendmsg, so a 1 MiB SET is not copied. Reused per
// connection: no allocation on the hot path once warm.
class Outbox {
public:
    static constexpr size_t kInline = 512;

    bool empty() const { return head_.empty() && segs_.empty(); }
    void command(int argc, const char *const *argv, const size_t *lens);
    // Send everything: 0 on success, else a result below zero (io_why()).
    // before_retry() re-arms the socket timeout to the time left, or throws
    // when none is left: on the plain socket it runs before every sendmsg
    // but the first, over TLS after every write that would block.
    template <class F>
    long send_all(Link &link, F &&before_retry);
    // After a failed send: nothing queued, nothing staged.
    void discard();

private:
    struct Seg {
        const char *ptr;  // external bytes, or nullptr: head_[off, off + len)
        size_t off;
        size_t len;
    };
    template <class F>
    long send_plain(Link &link, F &&before_retry);
    template <class F>
    long send_tls(Link &link, F &&before_retry);
    void clear();
    void frame(char kind, size_t n);
    void close_run();

    std::string head_;
    std::vector<Seg> segs_;
    size_t run_ = 0;     // head_ bytes before this are already in segs_
    std::string stage_;  // TLS only: small pieces gathered into one record
};

// A pooled connection.
struct Conn : Link {
    long long timeout_us = -1;  // the socket timeout last set; -1 unknown
    int pending = 0;            // requests written or queued whose replies are not read yet
    bool broken = false;        // a send failed or timed out, a reply was refused: never reuse
    bool server_gone = false;   // an I/O error other than a timeout
    int64_t last_used_ms = 0;   // coarse_ms() at the last check-in
    Outbox out;
    std::unique_ptr<char[]> inbox{new char[kReadChunk]};  // what one recv fills (too big for every caller's stack)

    explicit Conn(uint64_t max_reply_bytes) : Link(max_reply_bytes) {}
    bool reusable() const { return !broken && ctx->err == 0 && pending == 0; }
};

// The I/O of one connection: queue requests, send them, read the replies
// (each chunk checked by the connection's RespGuard, then fed to hiredis's
// reader). Every round trip ends by its own time limit,
// min(deadline, now + command_timeout). Errors throw cachekit::Error and
// leave the connection marked so the pool discards it.
class Wire {
public:
    Wire(std::string where, long long command_us) : where_(std::move(where)), command_us_(command_us) {}

    const std::string &where() const { return where_; }

    void append(Conn &conn, int argc, const char *const *argv, const size_t *lens,
                ReplyShape shape = ReplyShape::scalar()) const {
        conn.out.command(argc, argv, lens);
        conn.guard.expect(shape);
        ++conn.pending;
    }
    // The next reply (never null: failures throw). Sends queued requests first.
    redis_replies::Reply next(Conn &conn, const char *what, Deadline deadline) const;
    // Send the queued requests without reading (the replies come with next()).
    void flush(Conn &conn, const char *what, Deadline deadline) const;
    // One command, one reply.
    redis_replies::Reply run(Conn &conn, int argc, const char *const *argv, const size_t *lens, const char *what,
                             Deadline deadline, ReplyShape shape = ReplyShape::scalar()) const {
        append(conn, argc, argv, lens, shape);
        return next(conn, what, deadline);
    }

private:
    struct RoundTrip {
        SteadyClock::time_point start, until;  // until = min(deadline, start + command timeout)
        const char *what;
    };
    RoundTrip begin(Conn &conn, Deadline deadline, const char *what) const;
    void arm(Conn &conn, const RoundTrip &trip, SteadyClock::time_point now) const;
    [[noreturn]] void timed_out(Conn &conn, const RoundTrip &trip) const;
    [[noreturn]] void lost(Conn &conn, const RoundTrip &trip, long result) const;
    void send(Conn &conn, const RoundTrip &trip) const;
    void receive(Conn &conn, const RoundTrip &trip, bool armed) const;

    std::string where_;
    long long command_us_;
};

// Up to pool_size connections to one server, opened lazily. A checkout
// waits on a condvar bounded by its deadline. After a failed connect,
// further connects wait an exponential backoff and checkouts fail fast
// meanwhile. An idle connection unused for a second is probed before reuse.
// Fork safety: before fork() the pool's mutex is taken (fork_hooks), so the
// child inherits consistent state; the child's first checkout sees the pid
// change (one compare of a cached value) and drops every inherited
// connection, idle or checked out by a parent thread, by closing its copy of
// the fd: nothing is sent on it, and the parent's socket stays open.
class Pool final : private fork_hooks::Participant {
public:
    Pool(const RedisConfig &config, std::string where);
    ~Pool();
    Pool(const Pool &) = delete;
    Pool &operator=(const Pool &) = delete;

    const std::string &where() const { return where_; }
    const Wire &wire() const { return wire_; }

    Conn *acquire(Deadline deadline);
    void release(Conn *conn) noexcept;
    // Close a broken connection; when the server went away, also close the
    // idle ones (they were opened to the same, now gone, server process).
    void discard(Conn *conn) noexcept;

private:
    void before_fork() noexcept override { mu_.lock(); }
    void after_fork_parent() noexcept override { mu_.unlock(); }
    void after_fork_child() noexcept override;
    void forget_inherited();
    void forget(Conn *conn) noexcept;
    Conn *take(Deadline deadline);
    void drop_slot(Conn *conn) noexcept;
    static bool alive(Conn *conn);
    void connect_failed(std::string message);
    void connect_succeeded();
    [[noreturn]] void connect_error(const std::string &what, bool timeout);
    void connect(Conn &conn, Deadline deadline);

    RedisConfig config_;
    std::string where_;
    Wire wire_;
    std::mutex mu_;
    std::condition_variable cv_;
    uint64_t max_reply_bytes_;
    std::unique_ptr<tls::Context> tls_;  // rediss://: one context for all connections
    std::atomic<pid_t> pid_;             // the process these connections belong to
    std::vector<Conn *> idle_;
    std::vector<Conn *> all_;  // every live connection, idle or checked out
    unsigned open_ = 0;        // connections alive or being opened
    unsigned waiters_ = 0;
    SteadyClock::time_point retry_at_{};
    std::chrono::milliseconds backoff_{0};
    std::string last_connect_error_;
};

// A checked-out connection, returned (or discarded when broken) on scope exit.
class Lease {
public:
    Lease(Pool &pool, Deadline deadline) : pool_(pool), conn_(pool.acquire(deadline)) {}
    ~Lease() { pool_.release(conn_); }
    Lease(const Lease &) = delete;
    Lease &operator=(const Lease &) = delete;
    Conn &operator*() const { return *conn_; }
    Conn *operator->() const { return conn_; }

private:
    Pool &pool_;
    Conn *conn_;
};

// "redis (TLS) host:port" (IPv6 in brackets), for messages.
std::string tcp_where(const RedisConfig &config);

}  // namespace cachekit::l2::redis_conn
