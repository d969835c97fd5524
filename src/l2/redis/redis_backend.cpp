// The Redis backend on hiredis 0.14 (blocking contexts, RESP2, no TLS).
//
// A pool of up to pool_size connections, opened lazily. A call checks one out
// (waiting on a condvar bounded by its deadline), runs its command(s) and
// checks the connection back in. Each round trip must end by
// min(deadline, start + command_timeout): the socket timeout is armed to the
// time left before every send and read, so a trickling server cannot stretch
// it. Replies are read here (not by redisGetReply) and pass a RespGuard
// before hiredis's reader sees a byte. A connection that saw an I/O error, a
// timeout or a refused reply is discarded (its protocol state is unknown); an
// error reply is not an I/O error and leaves the connection usable. After a
// failed connect, further connects wait an exponential backoff and calls fail
// fast meanwhile. Fork-safe: a child drops the connections it inherited
// (closing its copies of the fds, sending nothing) and opens its own.
#include "l2/redis/redis_backend.hpp"
#include "l2/redis/redis_args.hpp"
#include "l2/redis/redis_node.hpp"

#include <hiredis/hiredis.h>
#include <hiredis/read.h>
#include <sodium.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "codec/crypto.hpp"
#include "l2/redis/redis_invalidation.hpp"
#include "l2/redis/redis_replies.hpp"
#include "l2/redis/resp_guard.hpp"
#include "l2/redis/transport.hpp"
#include "util/buffer.hpp"
#include "util/error.hpp"
#include "util/fork_hooks.hpp"

namespace cachekit::l2 {
namespace {

using std::chrono::duration_cast;
using std::chrono::microseconds;
using std::chrono::milliseconds;

constexpr std::string_view kUnlockScript =
    "if redis.call(\"get\",KEYS[1]) == ARGV[1] then return redis.call(\"del\",KEYS[1]) else return 0 end";
// SHA-1 of kUnlockScript, as SCRIPT LOAD answers it (checked by the tests).
constexpr std::string_view kUnlockSha = "b70c2384248f88e6b75b9f89241a180f856ad852";
constexpr size_t kMgetChunk = 1000;      // keys per MGET
constexpr size_t kPipelineChunk = 1000;  // commands written before reading their replies
constexpr std::string_view kScanCount = "1000";
// SCAN's COUNT is a hint: a page may hold more keys (a whole hash bucket).
constexpr uint32_t kScanMaxKeys = 100000;
constexpr size_t kReadChunk = 64 * 1024;  // bytes per recv: a value of up to ~64 KB arrives in one call
constexpr size_t kReaderKeepBytes = 1 << 20;  // a connection's read buffer kept between replies
// An idle connection unused for this long is probed (MSG_PEEK) before reuse,
// so one closed by the server (restart, idle timeout) is dropped silently.
constexpr int64_t kProbeAfterIdleMs = 1000;

using redis_replies::Reply;

inline const char *data_or_empty(std::string_view text) { return text.data() ? text.data() : ""; }

// Coarse monotonic time (a few ns to read) for idle bookkeeping only.
inline int64_t coarse_ms() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

// The requests of one round trip, RESP-framed. Small arguments are copied
// next to the framing; large ones (values) are referenced and sent from the
// caller's memory with sendmsg, so a 1 MiB SET is not copied. Reused per
// connection: no allocation on the hot path once warm.
class Outbox {
public:
    static constexpr size_t kInline = 512;

    bool empty() const { return head_.empty() && segs_.empty(); }
    void clear() {
        head_.clear();
        segs_.clear();
        run_ = 0;
    }

    void command(int argc, const char *const *argv, const size_t *lens) {
        frame('*', static_cast<size_t>(argc));
        for (int i = 0; i < argc; ++i) {
            frame('$', lens[i]);
            if (lens[i] <= kInline) {
                head_.append(argv[i], lens[i]);
            } else {
                close_run();
                segs_.push_back({argv[i], 0, lens[i]});
            }
            head_.append("\r\n", 2);
        }
    }

    // Send everything: 0 on success, else the errno of the failed send.
    // before_retry() runs before every sendmsg but the first (it re-arms the
    // socket timeout to the time left, or throws when none is left).
    template <class F>
    int send_all(int fd, F &&before_retry) {
        close_run();
        bool first = true;
        size_t seg = 0, skip = 0;  // progress: segments done, bytes of segs_[seg] already sent
        while (seg < segs_.size()) {
            iovec iov[64];
            int n = 0;
            for (size_t i = seg; i < segs_.size() && n < 64; ++i, ++n) {
                const Seg &s = segs_[i];
                const char *base = s.ptr ? s.ptr : head_.data() + s.off;
                size_t offset = i == seg ? skip : 0;
                iov[n].iov_base = const_cast<char *>(base + offset);
                iov[n].iov_len = s.len - offset;
            }
            msghdr msg{};
            msg.msg_iov = iov;
            msg.msg_iovlen = static_cast<size_t>(n);
            if (!first) before_retry();
            first = false;
            ssize_t sent = sendmsg(fd, &msg, MSG_NOSIGNAL);  // never SIGPIPE
            if (sent < 0) {
                if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;  // before_retry decides
                return errno;
            }
            size_t left = static_cast<size_t>(sent);
            while (seg < segs_.size() && left >= segs_[seg].len - skip) {
                left -= segs_[seg].len - skip;
                ++seg;
                skip = 0;
            }
            skip += left;
        }
        clear();
        return 0;
    }

    // The same over TLS: small pieces are gathered into records of up to
    // kTlsRecord bytes (one SSL_write each), big values written from the
    // caller's memory. 0, or a tls:: result (kFailed, kClosed).
    template <class F>
    long send_all_tls(SSL *ssl, F &&on_timeout) {
        close_run();
        static constexpr size_t kTlsRecord = 16 * 1024;
        auto write_all = [&](const char *p, size_t n) -> long {
            while (n > 0) {
                const long put = tls::write(ssl, p, n);
                if (put == tls::kWouldBlock) {
                    on_timeout();  // re-arms, or throws when the trip's time is up
                    continue;
                }
                if (put < 0) return put;
                p += put;
                n -= static_cast<size_t>(put);
            }
            return 0;
        };
        for (const Seg &seg : segs_) {
            const char *base = seg.ptr ? seg.ptr : head_.data() + seg.off;
            if (seg.len >= kTlsRecord) {
                if (!stage_.empty()) {
                    if (long e = write_all(stage_.data(), stage_.size())) return e;
                    stage_.clear();
                }
                if (long e = write_all(base, seg.len)) return e;
                continue;
            }
            stage_.append(base, seg.len);
            if (stage_.size() >= kTlsRecord) {
                if (long e = write_all(stage_.data(), stage_.size())) return e;
                stage_.clear();
            }
        }
        if (!stage_.empty()) {
            if (long e = write_all(stage_.data(), stage_.size())) return e;
            stage_.clear();
        }
        clear();
        return 0;
    }
    // After a failed send: nothing queued, nothing staged.
    void discard() {
        clear();
        stage_.clear();
    }

private:
    struct Seg {
        const char *ptr;  // external bytes, or nullptr: head_[off, off + len)
        size_t off;
        size_t len;
    };

    void frame(char kind, size_t n) {
        char text[24];
        text[0] = kind;
        auto res = std::to_chars(text + 1, text + sizeof text - 2, n);
        *res.ptr++ = '\r';
        *res.ptr++ = '\n';
        head_.append(text, static_cast<size_t>(res.ptr - text));
    }
    void close_run() {
        if (head_.size() > run_) segs_.push_back({nullptr, run_, head_.size() - run_});
        run_ = head_.size();
    }

    std::string head_;
    std::vector<Seg> segs_;
    size_t run_ = 0;  // head_ bytes before this are already in segs_
    std::string stage_;  // TLS only: small pieces gathered into one record
};

struct Conn {
    redisContext *ctx = nullptr;
    SSL *ssl = nullptr;         // rediss://: the TLS session over ctx->fd
    long long timeout_us = -1;  // the socket timeout last set; -1 unknown
    int pending = 0;            // requests written or queued whose replies are not read yet
    bool broken = false;        // a send failed or timed out, a reply was refused: never reuse
    bool server_gone = false;   // an I/O error other than a timeout
    int64_t last_used_ms = 0;   // coarse_ms() at the last check-in
    Outbox out;
    RespGuard guard;            // every byte read passes it before hiredis's reader
    std::unique_ptr<char[]> inbox{new char[kReadChunk]};  // what one recv fills (too big for every caller's stack)

    explicit Conn(uint64_t max_reply_bytes) : guard(max_reply_bytes) {}
    Conn(const Conn &) = delete;
    Conn &operator=(const Conn &) = delete;
    // redisFree closes the fd and frees memory; it writes nothing (no QUIT),
    // so dropping a connection inherited over fork() leaves the parent's alone.
    // The TLS session is freed without close_notify for the same reason.
    ~Conn() {
        if (ssl) tls::forget(ssl);
        if (ctx) redisFree(ctx);
    }
    bool reusable() const { return !broken && ctx->err == 0 && pending == 0; }
};

timeval to_timeval(long long us) {
    if (us < 1) us = 1;  // {0, 0} would mean "no timeout"
    timeval tv;
    tv.tv_sec = static_cast<time_t>(us / 1000000);
    tv.tv_usec = static_cast<suseconds_t>(us % 1000000);
    return tv;
}

// Why a TLS read or write failed (a tls:: result below zero).
std::string tls_reason(long result) {
    return result == tls::kClosed ? std::string("the server closed the connection") : tls::why();
}

bool is_timeout_errno(int e) { return e == EAGAIN || e == EWOULDBLOCK || e == ETIMEDOUT || e == EINPROGRESS; }

bool is_timeout(int saved_errno, const redisContext *ctx) {
    if (is_timeout_errno(saved_errno)) return true;
    // hiredis formats the error from errno; trust the text if errno moved.
    return std::strstr(ctx->errstr, std::strerror(EAGAIN)) != nullptr ||
           std::strstr(ctx->errstr, "timed out") != nullptr;
}

// The I/O of one connection: queue requests, send them (sendmsg,
// MSG_NOSIGNAL: hiredis 0.14 would write(2) and risk SIGPIPE), read the
// replies (recv, each chunk checked by the connection's RespGuard, then fed
// to hiredis's reader). Every round trip ends by its own time limit,
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
    Reply next(Conn &conn, const char *what, Deadline deadline) const {
        const auto now = SteadyClock::now();
        if (now >= deadline.at) fail(CACHEKIT_ETIMEOUT, where_ + ": deadline passed before the command was sent");
        const RoundTrip trip{now, std::min(deadline.at, now + microseconds(command_us_)), what};
        arm(conn, trip, now);
        if (!conn.out.empty()) send(conn, trip);
        bool armed = true;  // for the first read: arm() just ran
        for (;;) {
            void *raw = nullptr;
            if (redisReaderGetReply(conn.ctx->reader, &raw) != REDIS_OK) {
                conn.broken = true;
                fail(CACHEKIT_EBACKEND, where_ + ": " + what + ": protocol error: " + conn.ctx->reader->errstr);
            }
            if (raw != nullptr) {
                --conn.pending;
                return Reply(static_cast<redisReply *>(raw));
            }
            receive(conn, trip, armed);
            armed = false;
        }
    }

    // Send the queued requests without reading (the replies come with next()).
    void flush(Conn &conn, const char *what, Deadline deadline) const {
        const auto now = SteadyClock::now();
        if (now >= deadline.at) fail(CACHEKIT_ETIMEOUT, where_ + ": deadline passed before the command was sent");
        const RoundTrip trip{now, std::min(deadline.at, now + microseconds(command_us_)), what};
        arm(conn, trip, now);
        if (!conn.out.empty()) send(conn, trip);
    }

    // One command, one reply.
    Reply run(Conn &conn, int argc, const char *const *argv, const size_t *lens, const char *what,
              Deadline deadline, ReplyShape shape = ReplyShape::scalar()) const {
        append(conn, argc, argv, lens, shape);
        return next(conn, what, deadline);
    }

private:
    struct RoundTrip {
        SteadyClock::time_point start, until;  // until = min(deadline, start + command timeout)
        const char *what;
    };

    // Set the socket timeout (SO_RCVTIMEO/SO_SNDTIMEO) to the time left. The
    // setting is kept while it lies within [left - left/16, left], and a new
    // one is set 1/64 below it, so back-to-back calls with fresh budgets
    // usually make no setsockopt call. A wait that ends early is resumed
    // with the rest (receive/send), so the trip ends at `until`, not before.
    void arm(Conn &conn, const RoundTrip &trip, SteadyClock::time_point now) const {
        const long long left = duration_cast<microseconds>(trip.until - now).count();
        if (left <= 0) timed_out(conn, trip);
        if (conn.timeout_us > left || conn.timeout_us < left - left / 16) {
            const long long set = left - left / 64;
            if (redisSetTimeout(conn.ctx, to_timeval(set)) != REDIS_OK) {
                conn.broken = true;
                conn.server_gone = true;
                fail(CACHEKIT_EBACKEND, where_ + ": cannot set the socket timeout: " + conn.ctx->errstr);
            }
            conn.timeout_us = set;
        }
    }

    [[noreturn]] void timed_out(Conn &conn, const RoundTrip &trip) const {
        conn.broken = true;
        const long long budget = duration_cast<milliseconds>(trip.until - trip.start).count();
        fail(CACHEKIT_ETIMEOUT, where_ + ": " + trip.what + " timed out after " + std::to_string(budget) + " ms (" +
                                    (budget * 1000 < command_us_ ? "the call's deadline" : "the command timeout") + ")");
    }

    void send(Conn &conn, const RoundTrip &trip) const {
        const auto rearm = [&] { arm(conn, trip, SteadyClock::now()); };
        long err;
        try {
            err = conn.ssl ? conn.out.send_all_tls(conn.ssl, rearm) : conn.out.send_all(conn.ctx->fd, rearm);
        } catch (...) {
            conn.broken = true;
            conn.out.discard();
            throw;
        }
        if (err != 0) {
            conn.broken = true;
            conn.server_gone = true;
            conn.out.discard();
            fail(CACHEKIT_EBACKEND, where_ + ": " + trip.what + " failed: " +
                                        (conn.ssl ? tls_reason(err) : std::string(std::strerror(static_cast<int>(err)))));
        }
    }

    // recv's counterpart over TLS: a timeout re-arms like EAGAIN does.
    ssize_t receive_tls(Conn &conn, const RoundTrip &trip, char *chunk) const {
        for (;;) {
            const long n = tls::read(conn.ssl, chunk, kReadChunk);
            if (n > 0) return n;
            if (n == tls::kWouldBlock) {
                arm(conn, trip, SteadyClock::now());  // throws once the trip's time is up
                continue;
            }
            conn.broken = true;
            conn.server_gone = true;
            fail(CACHEKIT_EBACKEND, where_ + ": " + trip.what + " failed: " + tls_reason(n));
        }
    }

    // One chunk from the socket, checked, then handed to hiredis's reader.
    void receive(Conn &conn, const RoundTrip &trip, bool armed) const {
        if (!armed) arm(conn, trip, SteadyClock::now());
        char *chunk = conn.inbox.get();
        ssize_t n;
        if (conn.ssl) [[unlikely]] {
            n = receive_tls(conn, trip, chunk);
        } else {
            for (;;) {
                n = recv(conn.ctx->fd, chunk, kReadChunk, 0);
                if (n > 0) break;
                if (n == 0) {
                    conn.broken = true;
                    conn.server_gone = true;
                    fail(CACHEKIT_EBACKEND, where_ + ": " + trip.what + " failed: the server closed the connection");
                }
                const int err = errno;
                if (err == EINTR) continue;
                if (is_timeout_errno(err)) {
                    arm(conn, trip, SteadyClock::now());  // throws once the trip's time is up
                    continue;
                }
                conn.broken = true;
                conn.server_gone = true;
                fail(CACHEKIT_EBACKEND, where_ + ": " + trip.what + " failed: " + std::strerror(err));
            }
        }
        if (!conn.guard.feed(chunk, static_cast<size_t>(n))) {
            conn.broken = true;
            const int code = conn.guard.refusal() == RespGuard::Refusal::TooBig ? CACHEKIT_ETOOBIG : CACHEKIT_EBACKEND;
            fail(code, where_ + ": " + trip.what + " reply refused: " + conn.guard.why());
        }
        if (redisReaderFeed(conn.ctx->reader, chunk, static_cast<size_t>(n)) != REDIS_OK) {
            conn.broken = true;
            throw std::bad_alloc();
        }
    }

    std::string where_;
    long long command_us_;
};

// Fork safety: before fork() the pool's mutex is taken (fork_hooks), so the
// child inherits consistent state; the child's first checkout sees the pid
// change (one compare of a cached value) and drops every inherited
// connection, idle or checked out by a parent thread, by closing its copy of
// the fd: nothing is sent on it, and the parent's socket stays open.
class Pool final : private fork_hooks::Participant {
public:
    Pool(const RedisConfig &config, std::string where)
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
    ~Pool() {
        fork_hooks::leave(this);
        // No lease is alive now; in a child that never called, all_ also holds
        // connections the parent's threads had checked out: close them too.
        for (Conn *conn : all_) delete conn;
    }
    Pool(const Pool &) = delete;
    Pool &operator=(const Pool &) = delete;

    const std::string &where() const { return where_; }
    const Wire &wire() const { return wire_; }

    Conn *acquire(Deadline deadline) {
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

    void release(Conn *conn) noexcept {
        if (!conn->reusable()) {
            discard(conn);
            return;
        }
        conn->last_used_ms = coarse_ms();
        std::lock_guard<std::mutex> lock(mu_);
        idle_.push_back(conn);  // capacity reserved: never allocates
        if (waiters_) cv_.notify_one();
    }

    // Close a broken connection; when the server went away, also close the
    // idle ones (they were opened to the same, now gone, server process).
    void discard(Conn *conn) noexcept {
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

private:
    static constexpr uint64_t kDefaultMaxReplyBytes = kRedisDefaultMaxReplyBytes;

    void before_fork() noexcept override { mu_.lock(); }
    void after_fork_parent() noexcept override { mu_.unlock(); }
    void after_fork_child() noexcept override {
        waiters_ = 0;  // they were the parent's threads
        new (&cv_) std::condition_variable();  // the old one is abandoned, not destroyed
        mu_.unlock();
    }

    // First checkout in a forked child: every connection so far belongs to
    // the parent. Close our copies (no QUIT, no shutdown) and start empty.
    void forget_inherited() {
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
    void forget(Conn *conn) noexcept {
        auto it = std::find(all_.begin(), all_.end(), conn);
        if (it != all_.end()) all_.erase(it);
    }

    // An idle connection, or a new Conn with ctx == nullptr holding a slot.
    Conn *take(Deadline deadline) {
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
            bool ready = cv_.wait_until(lock, deadline.at,
                                        [&] { return !idle_.empty() || open_ < config_.pool_size; });
            --waiters_;
            if (!ready)
                fail(CACHEKIT_ETIMEOUT, where_ + ": timed out waiting for a free connection (pool of " +
                                            std::to_string(config_.pool_size) + ")");
        }
    }

    void drop_slot(Conn *conn) noexcept {
        {
            std::lock_guard<std::mutex> lock(mu_);
            --open_;
            forget(conn);
            if (waiters_) cv_.notify_one();
        }
        delete conn;
    }

    static bool alive(Conn *conn) {
        char byte;
        ssize_t n = recv(conn->ctx->fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
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

    void connect_failed(std::string message) {
        if (message.compare(0, where_.size() + 2, where_ + ": ") == 0) message.erase(0, where_.size() + 2);
        std::lock_guard<std::mutex> lock(mu_);
        backoff_ = backoff_.count() == 0 ? config_.reconnect_backoff_min
                                         : std::min(backoff_ * 2, config_.reconnect_backoff_max);
        retry_at_ = SteadyClock::now() + backoff_;
        last_connect_error_ = message;
    }

    void connect_succeeded() {
        std::lock_guard<std::mutex> lock(mu_);
        backoff_ = milliseconds(0);
        retry_at_ = SteadyClock::time_point{};
    }

    // Fails with ETIMEOUT (no backoff: a timeout already paced the caller)
    // or EBACKEND (backoff armed).
    [[noreturn]] void connect_error(const std::string &what, bool timeout) {
        std::string message = where_ + ": " + what;
        if (timeout) fail(CACHEKIT_ETIMEOUT, message);
        connect_failed(what);
        fail(CACHEKIT_EBACKEND, message);
    }

    void connect(Conn &conn, Deadline deadline) {
        auto now = SteadyClock::now();
        const auto started = now;
        if (now >= deadline.at) fail(CACHEKIT_ETIMEOUT, where_ + ": deadline passed before connecting");
        long long left_us = duration_cast<microseconds>(deadline.at - now).count();
        long long connect_us = std::min<long long>(duration_cast<microseconds>(config_.connect_timeout).count(), left_us);
        timeval tv = to_timeval(connect_us);
        errno = 0;
        conn.ctx = config_.unix_path.empty() ? redisConnectWithTimeout(config_.host.c_str(), config_.port, tv)
                                             : redisConnectUnixWithTimeout(config_.unix_path.c_str(), tv);
        int saved = errno;
        if (conn.ctx == nullptr) throw std::bad_alloc();
        if (conn.ctx->err) {
            bool timeout = is_timeout(saved, conn.ctx) || SteadyClock::now() >= deadline.at;
            connect_error(std::string(timeout ? "connect timed out: " : "connect failed: ") + conn.ctx->errstr, timeout);
        }
        // hiredis frees its read buffer after any reply that left it over
        // 16 KB and grows it again for the next: for values of tens of KB that
        // is a large malloc, free and realloc per read. Kept up to this size.
        conn.ctx->reader->maxbuf = kReaderKeepBytes;
        if (config_.unix_path.empty() && redisEnableKeepAlive(conn.ctx) != REDIS_OK)
            connect_error(std::string("cannot enable TCP keepalive: ") + conn.ctx->errstr, false);
        if (tls_) {
            try {
                conn.ssl = tls_->connect(conn.ctx->fd, started + microseconds(connect_us), where_);
            } catch (const Error &e) {
                if (e.code() != CACHEKIT_ETIMEOUT) connect_failed(e.what());  // no backoff for a timeout
                throw;
            }
        }

        now = SteadyClock::now();
        left_us = duration_cast<microseconds>(deadline.at - now).count();
        if (left_us <= 0) fail(CACHEKIT_ETIMEOUT, where_ + ": deadline passed while connecting");
        long long command_us = duration_cast<microseconds>(config_.command_timeout).count();
        long long want = std::min(command_us, left_us);
        conn.timeout_us = want - want / 64;  // as Wire::arm does
        if (redisSetTimeout(conn.ctx, to_timeval(conn.timeout_us)) != REDIS_OK)
            connect_error(std::string("cannot set the socket timeout: ") + conn.ctx->errstr, false);

        if (!config_.password.empty()) {
            if (config_.username.empty()) {
                const char *argv[] = {"AUTH", config_.password.data()};
                size_t lens[] = {4, config_.password.size()};
                handshake(conn, 2, argv, lens, "AUTH", deadline);
            } else {
                const char *argv[] = {"AUTH", config_.username.data(), config_.password.data()};
                size_t lens[] = {4, config_.username.size(), config_.password.size()};
                handshake(conn, 3, argv, lens, "AUTH", deadline);
            }
        }
        if (config_.db != 0) {
            char db[16];
            auto res = std::to_chars(db, db + sizeof db, config_.db);
            const char *argv[] = {"SELECT", db};
            size_t lens[] = {6, static_cast<size_t>(res.ptr - db)};
            handshake(conn, 2, argv, lens, "SELECT", deadline);
        }
        conn.last_used_ms = coarse_ms();
        connect_succeeded();
    }

    void handshake(Conn &conn, int argc, const char **argv, const size_t *lens, const char *name,
                   Deadline deadline) {
        Reply reply;
        try {
            reply = wire_.run(conn, argc, argv, lens, name, deadline);
        } catch (const Error &e) {
            if (e.code() == CACHEKIT_ETIMEOUT) throw;  // no backoff for a timeout
            connect_failed(e.what());
            throw;
        }
        if (redis_replies::is_error(*reply))
            connect_error(std::string(name) + " refused: " + std::string(redis_replies::text(*reply)), false);
    }

    RedisConfig config_;
    std::string where_;
    Wire wire_;
    std::mutex mu_;
    std::condition_variable cv_;
    uint64_t max_reply_bytes_;
    std::unique_ptr<tls::Context> tls_;  // rediss://: one context for all connections
    std::atomic<pid_t> pid_;  // the process these connections belong to
    std::vector<Conn *> idle_;
    std::vector<Conn *> all_;  // every live connection, idle or checked out
    unsigned open_ = 0;        // connections alive or being opened
    unsigned waiters_ = 0;
    SteadyClock::time_point retry_at_{};
    milliseconds backoff_{0};
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
std::string tcp_where(const RedisConfig &config) {
    const std::string host = config.host.find(':') != std::string::npos ? "[" + config.host + "]" : config.host;
    return (config.tls.enabled ? "redis (TLS) " : "redis ") + host + ":" + std::to_string(config.port);
}

class RedisBackend final : public Backend {
public:
    explicit RedisBackend(const RedisConfig &config)
        : pool_(config, describe(config)), wire_(pool_.wire()), config_(config) {}

    const char *kind() const noexcept override { return "redis"; }

    bool get(std::string_view key, cachekit_buf *out, Deadline deadline) override {
        Lease conn(pool_, deadline);
        const char *argv[] = {"GET", data_or_empty(key)};
        size_t lens[] = {3, key.size()};
        Reply reply = wire_.run(*conn, 2, argv, lens, "GET", deadline);
        return redis_replies::take_value(*reply, out, wire_.where());
    }

    // GET and PTTL sent in one write: one round trip for a hit and its TTL.
    bool get_with_ttl(std::string_view key, cachekit_buf *out, Ttl *remaining, Deadline deadline) override {
        Lease conn(pool_, deadline);
        const char *get_argv[] = {"GET", data_or_empty(key)};
        const char *pttl_argv[] = {"PTTL", data_or_empty(key)};
        const size_t get_lens[] = {3, key.size()}, pttl_lens[] = {4, key.size()};
        wire_.append(*conn, 2, get_argv, get_lens);
        wire_.append(*conn, 2, pttl_argv, pttl_lens);
        Reply value = wire_.next(*conn, "GET", deadline);
        Reply ttl = wire_.next(*conn, "PTTL", deadline);  // read before either is judged: the connection stays in step
        if (!redis_replies::take_value(*value, out, wire_.where())) return false;
        std::optional<Ttl> t = redis_replies::pttl(*ttl, wire_.where());
        // Gone between the two (expired): give the value no L1 lifetime at all.
        *remaining = t ? *t : Ttl{std::chrono::milliseconds(0)};
        return true;
    }

    void set(std::string_view key, std::string_view value, Ttl ttl, Deadline deadline) override {
        char ms[24];
        size_t ms_len = redis_args::px_milliseconds(ttl, ms);
        Lease conn(pool_, deadline);
        const char *argv[] = {"SET", data_or_empty(key), data_or_empty(value), "PX", ms};
        size_t lens[] = {3, key.size(), value.size(), 2, ms_len};
        Reply reply = wire_.run(*conn, ttl ? 5 : 3, argv, lens, "SET", deadline);
        redis_replies::expect_ok(*reply, wire_.where(), "SET");
    }

    bool del(std::string_view key, Deadline deadline) override { return integer_command("UNLINK", key, deadline) > 0; }

    bool exists(std::string_view key, Deadline deadline) override {
        return integer_command("EXISTS", key, deadline) > 0;
    }

    std::optional<Ttl> ttl(std::string_view key, Deadline deadline) override {
        Reply reply = key_command("PTTL", key, deadline);
        return redis_replies::pttl(*reply, wire_.where());
    }

    bool expire(std::string_view key, milliseconds ttl, Deadline deadline) override {
        char ms[24];
        size_t ms_len = redis_args::px_milliseconds(Ttl(ttl), ms);
        Lease conn(pool_, deadline);
        const char *argv[] = {"PEXPIRE", data_or_empty(key), ms};
        size_t lens[] = {7, key.size(), ms_len};
        Reply reply = wire_.run(*conn, 3, argv, lens, "PEXPIRE", deadline);
        return redis_replies::integer(*reply, wire_.where(), "PEXPIRE") > 0;
    }

    void get_many(const std::vector<std::string_view> &keys, cachekit_buf *outs, std::vector<bool> &found,
                  Deadline deadline) override {
        found.assign(keys.size(), false);
        if (keys.empty()) return;
        if (outs == nullptr) fail(CACHEKIT_EINVAL, "get_many: no output buffers");
        std::vector<const char *> argv;
        std::vector<size_t> lens;
        Lease conn(pool_, deadline);
        // MGETs of up to kMgetChunk keys, all sent in one write before any reply is read.
        size_t chunks = (keys.size() + kMgetChunk - 1) / kMgetChunk;
        for (size_t c = 0; c < chunks; ++c) {
            size_t begin = c * kMgetChunk, end = std::min(keys.size(), begin + kMgetChunk);
            argv.assign(1, "MGET");
            lens.assign(1, 4);
            for (size_t i = begin; i < end; ++i) {
                argv.push_back(data_or_empty(keys[i]));
                lens.push_back(keys[i].size());
            }
            wire_.append(*conn, static_cast<int>(argv.size()), argv.data(), lens.data(),
                         ReplyShape::array(static_cast<uint32_t>(end - begin)));
        }
        std::string error;
        for (size_t c = 0; c < chunks; ++c) {
            size_t begin = c * kMgetChunk, end = std::min(keys.size(), begin + kMgetChunk);
            Reply reply = wire_.next(*conn, "MGET", deadline);
            std::string wrong = redis_replies::mget(*reply, end - begin, outs + begin, found, begin, wire_.where());
            if (error.empty()) error = std::move(wrong);
        }
        if (!error.empty()) fail(CACHEKIT_EBACKEND, error);
    }

    void set_many(const std::vector<KeyValue> &entries, Ttl ttl, Deadline deadline) override {
        if (entries.empty()) return;
        char ms[24];
        size_t ms_len = redis_args::px_milliseconds(ttl, ms);
        int argc = ttl ? 5 : 3;
        Lease conn(pool_, deadline);
        std::string error;
        for (size_t begin = 0; begin < entries.size(); begin += kPipelineChunk) {
            size_t end = std::min(entries.size(), begin + kPipelineChunk);
            for (size_t i = begin; i < end; ++i) {
                const KeyValue &kv = entries[i];
                const char *argv[] = {"SET", data_or_empty(kv.key), data_or_empty(kv.value), "PX", ms};
                size_t lens[] = {3, kv.key.size(), kv.value.size(), 2, ms_len};
                wire_.append(*conn, argc, argv, lens);
            }
            for (size_t i = begin; i < end; ++i) {
                Reply reply = wire_.next(*conn, "SET", deadline);
                if (error.empty() && !redis_replies::is_ok(*reply))
                    error = redis_replies::describe(*reply, wire_.where(), "SET");
            }
        }
        if (!error.empty()) fail(CACHEKIT_EBACKEND, error);
    }

    uint64_t clear(const KeySelection &which, Deadline deadline) override {
        const std::string pattern = glob_escape(which.prefix) + which.glob;

        Lease conn(pool_, deadline);
        const char *scan_argv[] = {"SCAN", "0", "MATCH", pattern.data(), "COUNT", kScanCount.data()};
        size_t scan_lens[] = {4, 1, 5, pattern.size(), 5, kScanCount.size()};
        const ReplyShape scan_shape = ReplyShape::nested(2, kScanMaxKeys);
        Reply scan = wire_.run(*conn, 6, scan_argv, scan_lens, "SCAN", deadline, scan_shape);
        uint64_t deleted = 0;
        redis_replies::ScanPage page;
        std::vector<const char *> argv;
        std::vector<size_t> lens;
        for (;;) {
            redis_replies::scan_page(*scan, wire_.where(), page);
            if (page.keys.empty() && !page.more) break;
            // This batch's UNLINK and the next SCAN go in one write: one round trip per batch.
            // Only keys the selection takes (the glob only narrows the SCAN).
            argv.assign(1, "UNLINK");
            lens.assign(1, 6);
            for (std::string_view key : page.keys) {
                if (!which.takes(key)) continue;
                argv.push_back(data_or_empty(key));
                lens.push_back(key.size());
            }
            const bool unlink = argv.size() > 1;
            if (unlink) wire_.append(*conn, static_cast<int>(argv.size()), argv.data(), lens.data());
            if (page.more) {
                scan_argv[1] = data_or_empty(page.cursor);
                scan_lens[1] = page.cursor.size();
                wire_.append(*conn, 6, scan_argv, scan_lens, scan_shape);
            }
            if (unlink) {
                // Sends both requests (the scan reply they point into is still alive).
                Reply unlinked = wire_.next(*conn, "UNLINK", deadline);
                std::optional<long long> count = redis_replies::integer_of(*unlinked);
                if (!count) {
                    std::string error = redis_replies::describe(*unlinked, wire_.where(), "UNLINK");
                    if (page.more) wire_.next(*conn, "SCAN", deadline);  // keep the connection in step
                    fail(CACHEKIT_EBACKEND, error);
                }
                deleted += static_cast<uint64_t>(*count);
            }
            if (!page.more) break;
            scan = wire_.next(*conn, "SCAN", deadline);
        }
        return deleted;
    }

    bool keeps_registry() const noexcept override { return true; }

    // SET, SADD and EXPIRE in one write, their replies read before any is
    // judged (the connection stays in step); only the SET's can fail the call.
    bool set_registered(std::string_view key, std::string_view value, Ttl ttl, std::string_view registry,
                        std::string_view member, Deadline deadline) override {
        char ms[24];
        size_t ms_len = redis_args::px_milliseconds(ttl, ms);
        char secs[24];
        auto res = std::to_chars(secs, secs + sizeof secs, static_cast<long long>(kRegistryTtl.count()));
        const size_t secs_len = static_cast<size_t>(res.ptr - secs);
        Lease conn(pool_, deadline);
        const char *set_argv[] = {"SET", data_or_empty(key), data_or_empty(value), "PX", ms};
        const size_t set_lens[] = {3, key.size(), value.size(), 2, ms_len};
        const char *sadd_argv[] = {"SADD", data_or_empty(registry), data_or_empty(member)};
        const size_t sadd_lens[] = {4, registry.size(), member.size()};
        const char *expire_argv[] = {"EXPIRE", data_or_empty(registry), secs};
        const size_t expire_lens[] = {6, registry.size(), secs_len};
        wire_.append(*conn, ttl ? 5 : 3, set_argv, set_lens);
        wire_.append(*conn, 3, sadd_argv, sadd_lens);
        wire_.append(*conn, 3, expire_argv, expire_lens);
        Reply set = wire_.next(*conn, "SET", deadline);
        Reply added = wire_.next(*conn, "SADD", deadline);
        Reply renewed = wire_.next(*conn, "EXPIRE", deadline);
        redis_replies::expect_ok(*set, wire_.where(), "SET");
        return redis_replies::integer_of(*added).has_value() && redis_replies::integer_of(*renewed).has_value();
    }

    // SSCAN pages of the set; each page's UNLINKs and SREM go out with the
    // next SSCAN (one round trip per page). A member written meanwhile is
    // either drained or left for the next drain, never lost: it leaves the
    // set only in the SREM that follows its key's UNLINK.
    std::vector<std::string> drain_registry(std::string_view registry, std::string_view key_prefix,
                                            Deadline deadline) override {
        Lease conn(pool_, deadline);
        const char *scan_argv[] = {"SSCAN", data_or_empty(registry), "0", "COUNT", kScanCount.data()};
        size_t scan_lens[] = {5, registry.size(), 1, 5, kScanCount.size()};
        const ReplyShape scan_shape = ReplyShape::nested(2, kScanMaxKeys);
        Reply scan = wire_.run(*conn, 5, scan_argv, scan_lens, "SSCAN", deadline, scan_shape);
        std::vector<std::string> drained;
        std::vector<std::string> keys;
        std::vector<const char *> unlink_argv, srem_argv;
        std::vector<size_t> unlink_lens, srem_lens;
        redis_replies::ScanPage page;
        for (;;) {
            redis_replies::scan_page(*scan, wire_.where(), page);
            if (page.keys.empty() && !page.more) break;
            const size_t first = drained.size();
            keys.clear();
            for (std::string_view member : page.keys) {
                drained.emplace_back(member);
                keys.emplace_back(std::string(key_prefix).append(member));
            }
            unlink_argv.assign(1, "UNLINK");
            unlink_lens.assign(1, 6);
            srem_argv.assign({"SREM", data_or_empty(registry)});
            srem_lens.assign({4, registry.size()});
            for (size_t i = 0; i < keys.size(); ++i) {
                unlink_argv.push_back(keys[i].data());
                unlink_lens.push_back(keys[i].size());
                srem_argv.push_back(drained[first + i].data());
                srem_lens.push_back(drained[first + i].size());
            }
            const bool any = !keys.empty();
            if (any) {
                wire_.append(*conn, static_cast<int>(unlink_argv.size()), unlink_argv.data(), unlink_lens.data());
                wire_.append(*conn, static_cast<int>(srem_argv.size()), srem_argv.data(), srem_lens.data());
            }
            if (page.more) {
                scan_argv[2] = data_or_empty(page.cursor);
                scan_lens[2] = page.cursor.size();
                wire_.append(*conn, 5, scan_argv, scan_lens, scan_shape);
            }
            if (any) {
                Reply unlinked = wire_.next(*conn, "UNLINK", deadline);
                Reply removed = wire_.next(*conn, "SREM", deadline);
                std::string error;
                if (!redis_replies::integer_of(*unlinked))
                    error = redis_replies::describe(*unlinked, wire_.where(), "UNLINK");
                else if (!redis_replies::integer_of(*removed))
                    error = redis_replies::describe(*removed, wire_.where(), "SREM");
                if (!error.empty()) {
                    if (page.more) wire_.next(*conn, "SSCAN", deadline);  // keep the connection in step
                    fail(CACHEKIT_EBACKEND, error);
                }
            }
            if (!page.more) break;
            scan = wire_.next(*conn, "SSCAN", deadline);
        }
        return drained;
    }

    std::optional<std::string> lock(std::string_view name, milliseconds hold, Deadline deadline) override {
        if (hold.count() <= 0) fail(CACHEKIT_EINVAL, "lock: the hold time must be positive");
        const std::string token = redis_args::new_lock_token();
        char ms[24];
        size_t ms_len = redis_args::px_milliseconds(Ttl(hold), ms);

        Lease conn(pool_, deadline);
        const char *argv[] = {"SET", data_or_empty(name), token.c_str(), "NX", "PX", ms};
        size_t lens[] = {3, name.size(), token.size(), 2, 2, ms_len};
        Reply reply = wire_.run(*conn, 6, argv, lens, "SET NX", deadline);
        if (!redis_replies::lock_taken(*reply, wire_.where())) return std::nullopt;
        return token;
    }

    bool unlock(std::string_view name, std::string_view token, Deadline deadline) override {
        Lease conn(pool_, deadline);
        const char *argv[] = {"EVALSHA", kUnlockSha.data(), "1", data_or_empty(name), data_or_empty(token)};
        size_t lens[] = {7, kUnlockSha.size(), 1, name.size(), token.size()};
        Reply reply = wire_.run(*conn, 5, argv, lens, "EVALSHA", deadline);
        if (redis_replies::is_noscript(*reply)) {
            // Not in the server's script cache (first use, restart, SCRIPT FLUSH): EVAL caches it again.
            argv[0] = "EVAL";
            lens[0] = 4;
            argv[1] = kUnlockScript.data();
            lens[1] = kUnlockScript.size();
            reply = wire_.run(*conn, 5, argv, lens, "EVAL", deadline);
        }
        return redis_replies::unlocked(*reply, wire_.where());
    }

    Health health(Deadline deadline) override {
        Lease conn(pool_, deadline);
        const char *argv[] = {"PING"};
        size_t lens[] = {4};
        auto start = SteadyClock::now();
        Reply reply = wire_.run(*conn, 1, argv, lens, "PING", deadline);
        auto end = SteadyClock::now();
        redis_replies::expect_pong(*reply, wire_.where());
        Health health;
        health.ok = true;
        health.latency_ms = std::chrono::duration<double, std::milli>(end - start).count();
        health.detail = "PONG from " + wire_.where();
        return health;
    }

    // L1 coherence: a feed with its own connection (redis_invalidation.cpp).
    std::unique_ptr<InvalidationFeed> watch(const WatchRequest &request) override {
        return start_redis_feed(config_, request);
    }

private:
    static std::string describe(const RedisConfig &config) {
        if (!config.unix_path.empty()) return "redis unix:" + config.unix_path + " db " + std::to_string(config.db);
        return tcp_where(config) + " db " + std::to_string(config.db);
    }

    // One command on one key (its reply is mapped after the connection is back in the pool).
    Reply key_command(const char *name, std::string_view key, Deadline deadline) {
        Lease conn(pool_, deadline);
        const char *argv[] = {name, data_or_empty(key)};
        size_t lens[] = {std::strlen(name), key.size()};
        return wire_.run(*conn, 2, argv, lens, name, deadline);
    }

    long long integer_command(const char *name, std::string_view key, Deadline deadline) {
        Reply reply = key_command(name, key, deadline);
        return redis_replies::integer(*reply, wire_.where(), name);
    }

    Pool pool_;
    const Wire &wire_;
    const RedisConfig config_;
};

}  // namespace

// RedisNode / RedisSession (redis_node.hpp): this file's pool, one connection at a time.
struct RedisNode::Impl {
    explicit Impl(const RedisConfig &config) : pool(config, tcp_where(config)) {}
    Pool pool;
};

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

std::unique_ptr<Backend> open_redis(const RedisConfig &config) {
    if (config.unix_path.empty()) {
        if (config.host.empty()) fail(CACHEKIT_EINVAL, "Redis config: no host and no unix socket path");
        if (config.port <= 0 || config.port > 65535)
            fail(CACHEKIT_EINVAL, "Redis config: port " + std::to_string(config.port) + " is not in 1..65535");
    }
    if (config.db < 0) fail(CACHEKIT_EINVAL, "Redis config: the database must be a non-negative integer");
    if (config.tls.enabled && !config.unix_path.empty())
        fail(CACHEKIT_EINVAL, "Redis config: TLS needs a TCP host, not a unix socket");
    if (config.pool_size == 0) fail(CACHEKIT_EINVAL, "Redis config: the pool size must be at least 1");
    if (config.connect_timeout.count() <= 0 || config.command_timeout.count() <= 0)
        fail(CACHEKIT_EINVAL, "Redis config: the connect and command timeouts must be positive");
    if (config.reconnect_backoff_min.count() < 0 || config.reconnect_backoff_max < config.reconnect_backoff_min)
        fail(CACHEKIT_EINVAL, "Redis config: reconnect backoff must satisfy 0 <= min <= max");
    return std::make_unique<RedisBackend>(config);
}

}  // namespace cachekit::l2
