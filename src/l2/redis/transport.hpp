// The TLS half of the Redis transport: a client SSL_CTX built once per pool
// (or feed session) from RedisTls, and one TLS stream per connected socket.
// Only connection.hpp's connects and recv_some/send_some call it (they pick
// this or the plain socket); hiredis stays the reply parser only.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>

#include "l2/redis/redis_backend.hpp"

typedef struct ssl_st SSL;
typedef struct ssl_ctx_st SSL_CTX;
typedef struct ssl_session_st SSL_SESSION;

namespace cachekit::l2::tls {

// The shared client context. Bad files (CA, certificate, key) throw
// CACHEKIT_EINVAL naming the path. It keeps the newest session the server
// gave (a TLS 1.3 ticket, or a 1.2 session id) and offers it on the next
// connection: a reconnect resumes instead of a full handshake. Contexts are
// per server (a pool, a feed session), so a session is only offered to the
// server, and the host name, it was verified for.
class Context {
public:
    Context(const RedisTls &settings, std::string host);
    ~Context();
    Context(const Context &) = delete;
    Context &operator=(const Context &) = delete;

    // A TLS session over the connected fd, handshaken by `until`. A stall
    // throws CACHEKIT_ETIMEOUT, a failure CACHEKIT_EBACKEND with OpenSSL's
    // reason; `where` names the server in both.
    SSL *connect(int fd, std::chrono::steady_clock::time_point until, const std::string &where) const;
    // The same session, not yet handshaken, for an owner of a non-blocking
    // socket that drives handshake() itself. Throws as connect().
    SSL *session(int fd, const std::string &where) const;

    // Whether a handshake resumed a session (for tests and benchmarks).
    static bool resumed(SSL *ssl);

private:
    static int keep_session(SSL *ssl, SSL_SESSION *session);
    void offer_session(SSL *ssl) const;

    // try_lock only: a child forked while another thread held the lock does
    // a full handshake instead of waiting forever.
    mutable std::mutex session_mu_;
    SSL_SESSION *session_ = nullptr;  // under session_mu_; ours (one reference)
    SSL_CTX *ctx_ = nullptr;
    std::string host_;
    bool check_host_;
    bool ip_host_;
};

// Frees the session without writing (no close_notify): safe for a copy
// inherited over fork().
void forget(SSL *ssl) noexcept;

// Results of read/write: >0 bytes, or one of these.
constexpr long kWouldBlock = -1;  // the socket timeout passed (or EINTR): retry or time out
constexpr long kClosed = -2;      // the peer closed the connection (EOF, close_notify)
constexpr long kFailed = -3;      // an I/O or protocol error; why() says which

// One step of the handshake on a non-blocking socket: 0 done, kWantRead or
// kWantWrite (poll for that, then call again), kFailed with why() set to
// OpenSSL's reason (and the certificate check's).
constexpr long kWantRead = -4;
constexpr long kWantWrite = -5;
long handshake(SSL *ssl);
// Decrypted bytes read from the socket but not yet by read(): poll cannot
// see them.
bool pending(SSL *ssl);

long read(SSL *ssl, char *buf, size_t len);
// Writes all of buf or nothing (retry with the same arguments on kWouldBlock).
long write(SSL *ssl, const char *buf, size_t len);
// The reason of the last kFailed on this thread.
std::string why();

// For an idle pooled connection whose socket has raw bytes pending: read
// them without blocking. True when they were only TLS housekeeping (TLS 1.3
// session tickets); false on application data, EOF, alert or error, with
// *gone set when the server closed or failed.
bool idle_ok(SSL *ssl, int fd, bool *gone);

}  // namespace cachekit::l2::tls
