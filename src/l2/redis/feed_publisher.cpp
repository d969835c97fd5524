// The publisher's thread and its one connection (connection.hpp's blocking
// connect and transport), redone after any failure.
#include "l2/redis/feed_publisher.hpp"

#include <pthread.h>

#include "l2/redis/connection.hpp"
#include "l2/redis/feed_session.hpp"
#include "l2/redis/redis_invalidation.hpp"
#include "l2/redis/redis_replies.hpp"
#include "l2/redis/sdk_event.hpp"
#include "util/error.hpp"
#include "util/fork_hooks.hpp"

namespace cachekit::l2::feed {
namespace {

using redis_replies::Reply;

struct Failed {};

// A blocking connection (this thread serves nothing else) whose replies
// pass a RespGuard as the sessions' do; over TLS its socket waits at most
// kTlsIoWait in a read or write.
constexpr long long kTlsIoWaitUs = 1000 * 1000;

struct Conn {
    std::unique_ptr<tls::Context> tls;  // for the connection's life: its session callback
    redis_conn::Link link{kFeedMaxReplyBytes};  // closed (the session first) before tls goes

    void send(const std::vector<std::string> &args) {
        const std::string cmd = format_command(args);
        for (size_t sent = 0; sent < cmd.size();) {
            const long w = redis_conn::send_some(link, cmd.data() + sent, cmd.size() - sent);
            if (w <= 0) throw Failed{};
            sent += size_t(w);
        }
    }

    // The next reply within `wait_ms`; Failed on a timeout, a loss or a refusal.
    Reply next(int wait_ms) {
        for (;;) {
            void *r = nullptr;
            if (redisReaderGetReply(link.ctx->reader, &r) != REDIS_OK) throw Failed{};
            if (r != nullptr) return Reply(static_cast<redisReply *>(r));
            if (!redis_conn::wait_readable(link, wait_ms)) throw Failed{};
            char chunk[16384];
            const long n = redis_conn::recv_some(link, chunk, sizeof chunk);
            if (n == redis_conn::kWouldBlock) continue;  // a session ticket, or a record not whole yet
            if (n <= 0 || !link.guard.feed(chunk, size_t(n))) throw Failed{};
            if (redisReaderFeed(link.ctx->reader, chunk, size_t(n)) != REDIS_OK) throw Failed{};
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
        if (live_) redis_conn::shut(*live_);  // wakes a read
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
                live_ = nullptr;
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
                auto c = std::make_unique<Conn>();
                const long long connect_us = target.connect_timeout.count() * 1000;
                redis_conn::connect_socket(c->link, target, connect_us, SteadyClock::time_point::max(), target.host);
                if (target.tls.enabled) {
                    c->tls = std::make_unique<tls::Context>(target.tls, target.host);
                    redis_conn::start_tls(c->link, *c->tls, SteadyClock::now() + target.connect_timeout, target.host);
                    redis_conn::set_io_timeout(c->link, kTlsIoWaitUs);
                }
                c->link.guard.expect_stream(ReplyShape::nested(3, kFeedMaxKeys));
                {
                    std::lock_guard lock(mu_);
                    if (stop_) return;
                    live_ = &c->link;
                }
                conn = std::move(c);
                const int wait_ms = int(std::max<long long>(1000, target.command_timeout.count() * 4));
                for (const redis_conn::HandshakeCommand &hello : redis_conn::handshake_commands(target, false)) {
                    conn->send(hello.args);
                    if (redis_replies::is_error(*conn->next(wait_ms)) && hello.required) throw Failed{};
                }
            }
            for (const std::string &event : batch) conn->send({"PUBLISH", kSdkInvalidationChannel, event});
            for (size_t i = 0; i < batch.size(); ++i) conn->next(1000);
        } catch (...) {
            {
                std::lock_guard lock(mu_);
                live_ = nullptr;
            }
            conn.reset();
            std::unique_lock lock(mu_);
            if (cv_.wait_for(lock, kBackoffMin, [this] { return stop_; })) return;
        }
    }
}

}  // namespace cachekit::l2::feed
