// TLS for the Redis wire on OpenSSL (transport.hpp). The sockets are
// blocking with SO_RCVTIMEO/SO_SNDTIMEO armed by the caller, so a timeout
// surfaces as SSL_ERROR_WANT_READ/WRITE: reported as kWouldBlock, and the
// caller re-arms or gives up exactly as it does for recv's EAGAIN.
#include "l2/redis/transport.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <new>

#include "util/error.hpp"

namespace cachekit::l2::tls {
namespace {

thread_local std::string t_why;

// OpenSSL's queued reasons, oldest first, as one line (the queue is emptied).
std::string drain_errors() {
    std::string text;
    while (unsigned long e = ERR_get_error()) {
        const char *reason = ERR_reason_error_string(e);
        if (!text.empty()) text += "; ";
        text += reason ? reason : "error " + std::to_string(e);
    }
    return text;
}

[[noreturn]] void bad_file(const char *param, const std::string &path) {
    std::string reason = drain_errors();
    fail(CACHEKIT_EINVAL, "Redis TLS: cannot load " + std::string(param) + " \"" + path + "\"" +
                              (reason.empty() ? "" : ": " + reason));
}

bool is_ip(const std::string &host) {
    unsigned char buf[16];
    return inet_pton(AF_INET, host.c_str(), buf) == 1 || inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

void set_timeout(int fd, long long us) {
    if (us < 1) us = 1;
    timeval tv{static_cast<time_t>(us / 1000000), static_cast<suseconds_t>(us % 1000000)};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

// A socket BIO that sends with MSG_NOSIGNAL: OpenSSL's own writes with
// write(2), and a server gone mid-call would raise SIGPIPE in the host
// process (the plain path's sendmsg uses MSG_NOSIGNAL too).
int fd_of(BIO *bio) { return static_cast<int>(reinterpret_cast<intptr_t>(BIO_get_data(bio))); }

bool retryable(int e) { return e == EAGAIN || e == EWOULDBLOCK || e == EINTR; }

int bio_write(BIO *bio, const char *data, int len) {
    BIO_clear_retry_flags(bio);
    const ssize_t n = send(fd_of(bio), data, static_cast<size_t>(len), MSG_NOSIGNAL);
    if (n < 0 && retryable(errno)) BIO_set_retry_write(bio);
    return static_cast<int>(n);
}

int bio_read(BIO *bio, char *buf, int len) {
    BIO_clear_retry_flags(bio);
    const ssize_t n = recv(fd_of(bio), buf, static_cast<size_t>(len), 0);
    if (n < 0 && retryable(errno)) BIO_set_retry_read(bio);
    return static_cast<int>(n);
}

long bio_ctrl(BIO *, int cmd, long, void *) { return cmd == BIO_CTRL_FLUSH ? 1 : 0; }

int bio_create(BIO *bio) {
    BIO_set_init(bio, 1);
    return 1;
}

const BIO_METHOD *socket_method() {
    static BIO_METHOD *method = [] {
        BIO_METHOD *m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "cachekit socket");
        if (m == nullptr) return m;
        BIO_meth_set_write(m, bio_write);
        BIO_meth_set_read(m, bio_read);
        BIO_meth_set_ctrl(m, bio_ctrl);
        BIO_meth_set_create(m, bio_create);
        return m;
    }();
    return method;
}

// Map SSL_get_error for read/write.
long result(SSL *ssl, int rc) {
    const int saved = errno;
    switch (SSL_get_error(ssl, rc)) {
    case SSL_ERROR_WANT_READ:
    case SSL_ERROR_WANT_WRITE:
        return kWouldBlock;
    case SSL_ERROR_ZERO_RETURN:
        return kClosed;
    case SSL_ERROR_SYSCALL: {
        std::string reason = drain_errors();
        if (saved == EINTR || saved == EAGAIN || saved == EWOULDBLOCK) return kWouldBlock;
        if (saved == 0 && reason.empty()) return kClosed;  // EOF without close_notify
        t_why = reason.empty() ? std::strerror(saved) : reason;
        return kFailed;
    }
    default: {
        std::string reason = drain_errors();
        if (reason.find("unexpected eof") != std::string::npos) return kClosed;
        t_why = "TLS error: " + (reason.empty() ? std::string("unknown") : reason);
        return kFailed;
    }
    }
}

}  // namespace

Context::Context(const RedisTls &settings, std::string host)
    : host_(std::move(host)), check_host_(settings.checks_hostname()), ip_host_(is_ip(host_)) {
    if (settings.cert_reqs == RedisTls::CertReqs::None && settings.check_hostname > 0)
        fail(CACHEKIT_EINVAL, "Redis TLS: ssl_check_hostname=true needs ssl_cert_reqs=required or optional");
    if (!settings.keyfile.empty() && settings.certfile.empty())
        fail(CACHEKIT_EINVAL, "Redis TLS: ssl_keyfile needs ssl_certfile");
    ERR_clear_error();
    ctx_ = SSL_CTX_new(TLS_client_method());
    if (ctx_ == nullptr) throw std::bad_alloc();
    try {
        SSL_CTX_set_min_proto_version(ctx_, TLS1_2_VERSION);
        // Retry a timed-out write with the same bytes from wherever they are.
        SSL_CTX_set_mode(ctx_, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_AUTO_RETRY);
        SSL_CTX_set_verify(ctx_, settings.cert_reqs == RedisTls::CertReqs::None ? SSL_VERIFY_NONE : SSL_VERIFY_PEER,
                           nullptr);
        // Sessions reach keep_session, not OpenSSL's own client cache.
        SSL_CTX_set_app_data(ctx_, this);
        SSL_CTX_set_session_cache_mode(ctx_, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
        SSL_CTX_sess_set_new_cb(ctx_, keep_session);
        if (!settings.ca_certs.empty() || !settings.ca_path.empty()) {
            if (!settings.ca_certs.empty() &&
                SSL_CTX_load_verify_locations(ctx_, settings.ca_certs.c_str(), nullptr) != 1)
                bad_file("ssl_ca_certs", settings.ca_certs);
            if (!settings.ca_path.empty()) {
                if (access(settings.ca_path.c_str(), R_OK | X_OK) != 0 ||
                    SSL_CTX_load_verify_locations(ctx_, nullptr, settings.ca_path.c_str()) != 1)
                    bad_file("ssl_ca_path", settings.ca_path);
            }
        } else if (settings.cert_reqs != RedisTls::CertReqs::None) {
            SSL_CTX_set_default_verify_paths(ctx_);
        }
        if (!settings.certfile.empty()) {
            if (SSL_CTX_use_certificate_chain_file(ctx_, settings.certfile.c_str()) != 1)
                bad_file("ssl_certfile", settings.certfile);
            const std::string &key = settings.keyfile.empty() ? settings.certfile : settings.keyfile;
            if (SSL_CTX_use_PrivateKey_file(ctx_, key.c_str(), SSL_FILETYPE_PEM) != 1)
                bad_file("ssl_keyfile", key);
            if (SSL_CTX_check_private_key(ctx_) != 1) bad_file("ssl_keyfile (it does not match ssl_certfile)", key);
        }
    } catch (...) {
        SSL_CTX_free(ctx_);
        throw;
    }
    ERR_clear_error();
}

Context::~Context() {
    SSL_CTX_set_app_data(ctx_, nullptr);  // an SSL that outlives us keeps the SSL_CTX: no callback to us
    SSL_SESSION_free(session_);
    SSL_CTX_free(ctx_);
}

// OpenSSL's new-session callback, on the thread of the connection that got
// it: 1 keeps the reference OpenSSL hands over.
int Context::keep_session(SSL *ssl, SSL_SESSION *session) {
    auto *self = static_cast<Context *>(SSL_CTX_get_app_data(SSL_get_SSL_CTX(ssl)));
    if (self == nullptr || !self->session_mu_.try_lock()) return 0;
    SSL_SESSION *old = self->session_;
    self->session_ = session;
    self->session_mu_.unlock();
    SSL_SESSION_free(old);
    return 1;
}

void Context::offer_session(SSL *ssl) const {
    if (!session_mu_.try_lock()) return;
    if (session_ != nullptr) SSL_set_session(ssl, session_);  // takes its own reference
    session_mu_.unlock();
}

bool Context::resumed(SSL *ssl) { return SSL_session_reused(ssl) == 1; }

SSL *Context::session(int fd, const std::string &where) const {
    ERR_clear_error();
    SSL *ssl = SSL_new(ctx_);
    if (ssl == nullptr) throw std::bad_alloc();
    const BIO_METHOD *method = socket_method();
    BIO *bio = method ? BIO_new(method) : nullptr;
    if (bio == nullptr) {
        SSL_free(ssl);
        throw std::bad_alloc();
    }
    BIO_set_data(bio, reinterpret_cast<void *>(static_cast<intptr_t>(fd)));
    SSL_set_bio(ssl, bio, bio);  // one reference, owned by ssl; the fd stays its opener's
    if (!ip_host_ && !host_.empty()) SSL_set_tlsext_host_name(ssl, host_.c_str());
    offer_session(ssl);
    if (check_host_) {
        X509_VERIFY_PARAM *param = SSL_get0_param(ssl);
        X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
        int ok = ip_host_ ? X509_VERIFY_PARAM_set1_ip_asc(param, host_.c_str())
                          : X509_VERIFY_PARAM_set1_host(param, host_.c_str(), 0);
        if (ok != 1) {
            SSL_free(ssl);
            fail(CACHEKIT_EBACKEND, where + ": TLS handshake failed: cannot check the host name \"" + host_ + "\"");
        }
    }
    return ssl;
}

SSL *Context::connect(int fd, std::chrono::steady_clock::time_point until, const std::string &where) const {
    using std::chrono::duration_cast;
    using std::chrono::microseconds;
    SSL *ssl = session(fd, where);
    for (;;) {
        const long long left = duration_cast<microseconds>(until - std::chrono::steady_clock::now()).count();
        if (left <= 0) {
            SSL_free(ssl);
            fail(CACHEKIT_ETIMEOUT, where + ": TLS handshake timed out");
        }
        set_timeout(fd, left);
        const long step = handshake(ssl);
        if (step == 0) return ssl;
        if (step == kFailed) {
            SSL_free(ssl);
            fail(CACHEKIT_EBACKEND, where + ": TLS handshake failed: " + t_why);
        }
    }
}

long handshake(SSL *ssl) {
    ERR_clear_error();
    errno = 0;
    const int rc = SSL_connect(ssl);
    if (rc == 1) return 0;
    const int saved = errno;
    const int kind = SSL_get_error(ssl, rc);
    if (kind == SSL_ERROR_WANT_READ) return kWantRead;
    if (kind == SSL_ERROR_WANT_WRITE) return kWantWrite;
    // A blocking socket's timeout (or a signal) is a want too: the caller times it.
    if (kind == SSL_ERROR_SYSCALL && (saved == EINTR || saved == EAGAIN || saved == EWOULDBLOCK) &&
        ERR_peek_error() == 0)
        return kWantRead;
    std::string reason = drain_errors();
    const long verify = SSL_get_verify_result(ssl);
    if (verify != X509_V_OK) reason += std::string(" (") + X509_verify_cert_error_string(verify) + ")";
    if (reason.empty()) reason = saved != 0 ? std::strerror(saved) : "the server closed the connection";
    t_why = reason;
    return kFailed;
}

bool pending(SSL *ssl) { return SSL_pending(ssl) > 0; }

void forget(SSL *ssl) noexcept {
    // Flags only, nothing written: without them SSL_free would mark the
    // session unresumable, as after a connection cut by an error.
    SSL_set_shutdown(ssl, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
    SSL_free(ssl);
}

long read(SSL *ssl, char *buf, size_t len) {
    ERR_clear_error();
    errno = 0;
    size_t got = 0;
    const int rc = SSL_read_ex(ssl, buf, len, &got);
    if (rc == 1) return static_cast<long>(got);
    return result(ssl, rc);
}

long write(SSL *ssl, const char *buf, size_t len) {
    ERR_clear_error();
    errno = 0;
    size_t put = 0;
    const int rc = SSL_write_ex(ssl, buf, len, &put);
    if (rc == 1) return static_cast<long>(put);
    return result(ssl, rc);
}

std::string why() { return t_why; }

bool idle_ok(SSL *ssl, int fd, bool *gone) {
    *gone = false;
    const int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
        *gone = true;
        return false;
    }
    ERR_clear_error();
    errno = 0;
    char byte;
    size_t got = 0;
    const int rc = SSL_peek_ex(ssl, &byte, 1, &got);
    bool ok = false;
    if (rc != 1) {
        const long r = result(ssl, rc);
        ok = r == kWouldBlock;  // only records OpenSSL handled itself (session tickets)
        *gone = !ok;
    }
    // rc == 1: a reply nobody asked for; drop just this connection.
    fcntl(fd, F_SETFL, flags);
    return ok;
}

}  // namespace cachekit::l2::tls
