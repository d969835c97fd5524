// The pool's wire (connection.hpp): RESP framing into an Outbox, sent with
// sendmsg or gathered into TLS records, and replies read in chunks, each
// past the connection's RespGuard before hiredis's reader. Each round trip
// must end by min(deadline, start + command_timeout): the socket timeout is
// armed to the time left before every send and read, so a trickling server
// cannot stretch it. A connection that saw an I/O error, a timeout or a
// refused reply is marked broken (its protocol state is unknown); an error
// reply is not an I/O error and leaves the connection usable.
#include <sys/uio.h>

#include <algorithm>
#include <charconv>
#include <new>

#include "l2/redis/connection.hpp"
#include "util/error.hpp"

namespace cachekit::l2::redis_conn {
namespace {

using std::chrono::duration_cast;
using std::chrono::microseconds;
using std::chrono::milliseconds;

}  // namespace

void Outbox::command(int argc, const char *const *argv, const size_t *lens) {
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

template <class F>
long Outbox::send_all(Link &link, F &&before_retry) {
    close_run();
    return link.ssl ? send_tls(link, before_retry) : send_plain(link, before_retry);
}

template <class F>
long Outbox::send_plain(Link &link, F &&before_retry) {
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
        if (!first) before_retry();
        first = false;
        const long sent = sendv_some(link, iov, n);
        if (sent == kWouldBlock) continue;  // before_retry decides
        if (sent < 0) return sent;
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

// Small pieces are gathered into records of up to kTlsRecord bytes (one
// SSL_write each), big values written from the caller's memory.
template <class F>
long Outbox::send_tls(Link &link, F &&on_timeout) {
    static constexpr size_t kTlsRecord = 16 * 1024;
    auto write_all = [&](const char *p, size_t n) -> long {
        while (n > 0) {
            const long put = send_some(link, p, n);
            if (put == kWouldBlock) {
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

void Outbox::discard() {
    clear();
    stage_.clear();
}

void Outbox::clear() {
    head_.clear();
    segs_.clear();
    run_ = 0;
}

void Outbox::frame(char kind, size_t n) {
    char text[24];
    text[0] = kind;
    auto res = std::to_chars(text + 1, text + sizeof text - 2, n);
    *res.ptr++ = '\r';
    *res.ptr++ = '\n';
    head_.append(text, static_cast<size_t>(res.ptr - text));
}

void Outbox::close_run() {
    if (head_.size() > run_) segs_.push_back({nullptr, run_, head_.size() - run_});
    run_ = head_.size();
}

Wire::RoundTrip Wire::begin(Conn &conn, Deadline deadline, const char *what) const {
    const auto now = SteadyClock::now();
    if (now >= deadline.at) fail(CACHEKIT_ETIMEOUT, where_ + ": deadline passed before the command was sent");
    const RoundTrip trip{now, std::min(deadline.at, now + microseconds(command_us_)), what};
    arm(conn, trip, now);
    if (!conn.out.empty()) send(conn, trip);
    return trip;
}

redis_replies::Reply Wire::next(Conn &conn, const char *what, Deadline deadline) const {
    const RoundTrip trip = begin(conn, deadline, what);
    bool armed = true;  // for the first read: begin() just armed
    for (;;) {
        void *raw = nullptr;
        if (redisReaderGetReply(conn.ctx->reader, &raw) != REDIS_OK) {
            conn.broken = true;
            fail(CACHEKIT_EBACKEND, where_ + ": " + what + ": protocol error: " + conn.ctx->reader->errstr);
        }
        if (raw != nullptr) {
            --conn.pending;
            return redis_replies::Reply(static_cast<redisReply *>(raw));
        }
        receive(conn, trip, armed);
        armed = false;
    }
}

void Wire::flush(Conn &conn, const char *what, Deadline deadline) const { begin(conn, deadline, what); }

// Set the socket timeout (SO_RCVTIMEO/SO_SNDTIMEO) to the time left. The
// setting is kept while it lies within [left - left/16, left], and a new
// one is set 1/64 below it, so back-to-back calls with fresh budgets
// usually make no setsockopt call. A wait that ends early is resumed
// with the rest (receive/send), so the trip ends at `until`, not before.
void Wire::arm(Conn &conn, const RoundTrip &trip, SteadyClock::time_point now) const {
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

void Wire::timed_out(Conn &conn, const RoundTrip &trip) const {
    conn.broken = true;
    const long long budget = duration_cast<milliseconds>(trip.until - trip.start).count();
    fail(CACHEKIT_ETIMEOUT, where_ + ": " + trip.what + " timed out after " + std::to_string(budget) + " ms (" +
                                (budget * 1000 < command_us_ ? "the call's deadline" : "the command timeout") + ")");
}

// An I/O error other than a timeout: the server (or the path to it) is gone.
void Wire::lost(Conn &conn, const RoundTrip &trip, long result) const {
    conn.broken = true;
    conn.server_gone = true;
    fail(CACHEKIT_EBACKEND, where_ + ": " + trip.what + " failed: " + io_why(result));
}

void Wire::send(Conn &conn, const RoundTrip &trip) const {
    const auto rearm = [&] { arm(conn, trip, SteadyClock::now()); };
    long err;
    try {
        err = conn.out.send_all(conn, rearm);
    } catch (...) {
        conn.broken = true;
        conn.out.discard();
        throw;
    }
    if (err != 0) {
        conn.out.discard();
        lost(conn, trip, err);
    }
}

// One chunk from the socket, checked, then handed to hiredis's reader. A
// socket timeout re-arms with the time left (and throws once it is up).
void Wire::receive(Conn &conn, const RoundTrip &trip, bool armed) const {
    if (!armed) arm(conn, trip, SteadyClock::now());
    char *chunk = conn.inbox.get();
    long n;
    while ((n = recv_some(conn, chunk, kReadChunk)) <= 0) {
        if (n != kWouldBlock) lost(conn, trip, n);
        arm(conn, trip, SteadyClock::now());
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

}  // namespace cachekit::l2::redis_conn
