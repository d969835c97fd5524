#include "l2/redis/feed_publisher.hpp"

#include <hiredis/hiredis.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>

#include <cerrno>

#include "l2/redis/feed_session.hpp"
#include "l2/redis/redis_invalidation.hpp"
#include "l2/redis/redis_replies.hpp"
#include "l2/redis/resp_guard.hpp"
#include "l2/redis/sdk_event.hpp"
#include "l2/redis/transport.hpp"
#include "util/fork_hooks.hpp"

namespace cachekit::l2::feed {
namespace {

using redis_replies::Reply;

struct Failed {};

struct CtxFree {
    void operator()(redisContext *c) const noexcept { redisFree(c); }
};

// A blocking connection (this thread serves nothing else) whose replies
// pass a RespGuard as the sessions' do; over TLS through `ssl`, whose
// socket waits at most kTlsIoWait in a read or write.
constexpr int kTlsIoWaitMs = 1000;

struct Conn {
    std::unique_ptr<redisContext, CtxFree> ctx;
    std::unique_ptr<tls::Context> tls;  // for the connection's life: its session callback
    SSL *ssl = nullptr;
    RespGuard guard{kFeedMaxReplyBytes};

    ~Conn() {
        if (ssl) tls::forget(ssl);  // before the socket closes; no close_notify
    }

    void send(const std::vector<std::string> &args) {
        const std::string cmd = format_command(args);
        if (ssl) {
            if (tls::write(ssl, cmd.data(), cmd.size()) <= 0) throw Failed{};
            return;
        }
        for (size_t sent = 0; sent < cmd.size();) {
            const ssize_t w = ::send(ctx->fd, cmd.data() + sent, cmd.size() - sent, MSG_NOSIGNAL);
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) throw Failed{};
            sent += size_t(w);
        }
    }

    // The next reply within `wait_ms`; Failed on a timeout, a loss or a refusal.
    Reply next(int wait_ms) {
        for (;;) {
            void *r = nullptr;
            if (redisReaderGetReply(ctx->reader, &r) != REDIS_OK) throw Failed{};
            if (r != nullptr) return Reply(static_cast<redisReply *>(r));
            if (!ssl || !tls::pending(ssl)) {  // poll cannot see what OpenSSL holds
                pollfd p{ctx->fd, POLLIN, 0};
                const int ready = ::poll(&p, 1, wait_ms);
                if (ready < 0 && errno == EINTR) continue;
                if (ready <= 0) throw Failed{};
            }
            char chunk[16384];
            ssize_t n;
            if (ssl) {
                n = tls::read(ssl, chunk, sizeof chunk);
                if (n == tls::kWouldBlock) continue;  // a session ticket, or a record not whole yet
            } else {
                n = ::recv(ctx->fd, chunk, sizeof chunk, 0);
                if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
            }
            if (n <= 0 || !guard.feed(chunk, size_t(n))) throw Failed{};
            if (redisReaderFeed(ctx->reader, chunk, size_t(n)) != REDIS_OK) throw Failed{};
        }
    }
};

}  // namespace

Publisher::Publisher(RedisConfig target) : pid_(fork_hooks::pid()), target_(std::move(target)) {}

Publisher::~Publisher() {
    if (pid_ != fork_hooks::pid()) {  // a forked child: the thread is the parent's
        (void)thread_.release();
        return;
    }
    {
        std::lock_guard lock(mu_);
        stop_ = true;
        if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);  // wakes a read
    }
    cv_.notify_all();
    if (thread_) thread_->join();
}

void Publisher::announce(std::string_view cache_key) noexcept {
    try {
        std::string event = sdk_event::encode(sdk_event::announced_registry_id(cache_key), cache_key);
        {
            std::lock_guard lock(mu_);
            if (stop_ || queue_.size() >= kMaxQueued) return;
            queue_.push_back(std::move(event));
            if (!thread_) thread_ = std::make_unique<std::thread>([this] { run(); });
        }
        cv_.notify_all();
    } catch (...) {  // best effort: no thread now, the next announce tries again
    }
}

void Publisher::retarget(const RedisConfig &target) {
    std::lock_guard lock(mu_);
    target_ = target;
    ++generation_;
}

// A batch that meets a broken connection is dropped (at most once) and the
// connection redone.
void Publisher::run() noexcept {
    (void)pthread_setname_np(pthread_self(), "ck-feed-pub");
    std::unique_ptr<Conn> conn;
    uint64_t conn_generation = 0;
    for (;;) {
        std::vector<std::string> batch;
        RedisConfig target;
        {
            std::unique_lock lock(mu_);
            cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
            if (stop_) return;
            batch.swap(queue_);
            if (conn && conn_generation != generation_) {  // retargeted
                fd_ = -1;
                conn.reset();
            }
        }
        try {
            if (!conn) {
                {
                    std::lock_guard lock(mu_);
                    target = target_;
                    conn_generation = generation_;
                }
                const long long ms = target.connect_timeout.count();
                timeval tv{time_t(ms / 1000), suseconds_t(ms % 1000 * 1000)};
                auto c = std::make_unique<Conn>();
                c->ctx.reset(target.unix_path.empty() ? redisConnectWithTimeout(target.host.c_str(), target.port, tv)
                                                      : redisConnectUnixWithTimeout(target.unix_path.c_str(), tv));
                if (!c->ctx || c->ctx->err) throw Failed{};
                if (target.unix_path.empty()) redisEnableKeepAlive(c->ctx.get());
                if (target.tls.enabled) {
                    c->tls = std::make_unique<tls::Context>(target.tls, target.host);
                    c->ssl = c->tls->connect(c->ctx->fd, std::chrono::steady_clock::now() + target.connect_timeout,
                                             target.host);
                    const timeval wait{kTlsIoWaitMs / 1000, 0};
                    setsockopt(c->ctx->fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
                    setsockopt(c->ctx->fd, SOL_SOCKET, SO_SNDTIMEO, &wait, sizeof wait);
                }
                c->guard.expect_stream(ReplyShape::nested(3, kFeedMaxKeys));
                {
                    std::lock_guard lock(mu_);
                    if (stop_) return;
                    fd_ = c->ctx->fd;
                }
                conn = std::move(c);
                if (!target.password.empty()) {
                    std::vector<std::string> auth{"AUTH"};
                    if (!target.username.empty()) auth.push_back(target.username);
                    auth.push_back(target.password);
                    conn->send(auth);
                    if (redis_replies::is_error(*conn->next(int(std::max<long long>(1000, target.command_timeout.count() * 4)))))
                        throw Failed{};
                }
            }
            for (const std::string &event : batch) conn->send({"PUBLISH", kSdkInvalidationChannel, event});
            for (size_t i = 0; i < batch.size(); ++i) conn->next(1000);
        } catch (...) {
            {
                std::lock_guard lock(mu_);
                fd_ = -1;
            }
            conn.reset();
            std::unique_lock lock(mu_);
            if (cv_.wait_for(lock, kBackoffMin, [this] { return stop_; })) return;
        }
    }
}

}  // namespace cachekit::l2::feed
