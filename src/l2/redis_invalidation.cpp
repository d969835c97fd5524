#include "l2/redis_invalidation.hpp"

#include <hiredis/hiredis.h>
#include <poll.h>
#include <sys/socket.h>

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "l2/redis_replies.hpp"
#include "l2/resp_guard.hpp"
#include "l2/sdk_event.hpp"

namespace cachekit::l2 {
namespace {

using redis_replies::Reply;
using std::chrono::milliseconds;

constexpr std::string_view kTrackingChannel = "__redis__:invalidate";
constexpr int kIdlePollMs = 1000;   // a PING after this long without a byte
constexpr int kMaxUnansweredPings = 3;  // then the connection counts as lost
constexpr milliseconds kBackoffMin{50}, kBackoffMax{1000};
// Every byte the feed reads passes a RespGuard first (hiredis 0.14 has no
// limits): a message is a key list, so a reply past 1 MiB or an array past
// 16,384 elements is refused and the session ends, which shuts and flushes
// the L1 until the feed is subscribed again. Nothing a server declares is
// buffered or allocated before the guard has seen its header.
constexpr uint64_t kFeedMaxReplyBytes = 1 << 20;
constexpr uint32_t kFeedMaxKeys = 16384;

struct CtxFree {
    void operator()(redisContext *c) const noexcept { redisFree(c); }
};
using Ctx = std::unique_ptr<redisContext, CtxFree>;

// A connection and the guard of what it reads. Command replies and pushes
// alike fit [kind, channel, [keys...]].
struct Conn {
    Ctx ctx;
    RespGuard guard{kFeedMaxReplyBytes};
    explicit Conn(Ctx c) : ctx(std::move(c)) { guard.expect_stream(ReplyShape::nested(3, kFeedMaxKeys)); }
    redisContext *get() const { return ctx.get(); }
};

// Why a session ended (never thrown out of the thread).
struct Lost {
    std::string why;
};

// The major version in INFO's "redis_version:7.0.15" line; 0 when absent.
int server_major(std::string_view info) {
    const size_t at = info.find("redis_version:");
    if (at == std::string_view::npos) return 0;
    int major = 0;
    for (size_t i = at + 14; i < info.size() && info[i] >= '0' && info[i] <= '9'; ++i) major = major * 10 + (info[i] - '0');
    return major;
}

class RedisFeed final : public InvalidationFeed {
public:
    RedisFeed(RedisConfig config, WatchRequest request) : config_(std::move(config)), request_(std::move(request)) {
        thread_ = std::thread([this] { run(); });
    }
    ~RedisFeed() override {
        {
            std::lock_guard lock(mu_);
            stop_ = true;
            if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);  // wakes the thread's poll
            if (pub_fd_ >= 0) ::shutdown(pub_fd_, SHUT_RDWR);
        }
        cv_.notify_all();
        thread_.join();
        if (publisher_.joinable()) publisher_.join();
    }

    const char *mode() const noexcept override {
        switch (decided_.load(std::memory_order_acquire)) {
        case CoherenceMode::Tracking: return "tracking";
        case CoherenceMode::Pubsub: return "pubsub";
        default: return "auto";
        }
    }

    void announce(std::string_view cache_key) noexcept override {
        try {
            std::string event = sdk_event::encode(sdk_event::announced_registry_id(cache_key), cache_key);
            {
                std::lock_guard lock(mu_);
                if (stop_ || queue_.size() >= kMaxQueued) return;
                queue_.push_back(std::move(event));
                if (!publisher_.joinable()) publisher_ = std::thread([this] { publish_loop(); });
            }
            cv_.notify_all();
        } catch (...) {  // best effort
        }
    }

private:
    void run() {
        milliseconds backoff = kBackoffMin;
        for (;;) {
            request_.handler->suspend();
            bool was_live = false;
            try {
                session(was_live);
            } catch (const Lost &) {
            } catch (...) {
            }
            request_.handler->suspend();
            request_.handler->session_ended();
            {
                std::lock_guard lock(mu_);
                fd_ = -1;
            }
            if (was_live) backoff = kBackoffMin;
            std::unique_lock lock(mu_);
            if (cv_.wait_for(lock, backoff, [this] { return stop_; })) return;
            backoff = std::min(backoff * 2, kBackoffMax);
        }
    }

    // The publisher: PUBLISHes what announce() queued, pipelined, on a
    // connection of its own (the feed's is subscribed). A batch that meets a
    // broken connection is dropped (at most once) and the connection redone.
    void publish_loop() {
        std::optional<Conn> conn;
        for (;;) {
            std::vector<std::string> batch;
            {
                std::unique_lock lock(mu_);
                cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
                if (stop_) return;
                batch.swap(queue_);
            }
            try {
                if (!conn) conn.emplace(connect(pub_fd_, false));
                for (const std::string &event : batch) send(*conn, {"PUBLISH", kSdkInvalidationChannel, event});
                for (size_t i = 0; i < batch.size(); ++i)
                    if (!next(*conn, 1000)) throw Lost{"PUBLISH unanswered"};
            } catch (...) {
                {
                    std::lock_guard lock(mu_);
                    pub_fd_ = -1;
                }
                conn.reset();
                std::unique_lock lock(mu_);
                if (cv_.wait_for(lock, kBackoffMin, [this] { return stop_; })) return;
            }
        }
    }

    bool stopping() {
        std::lock_guard lock(mu_);
        return stop_;
    }

    // Sends with MSG_NOSIGNAL: a peer that went away must not raise SIGPIPE.
    void send(const Conn &c, const std::vector<std::string> &args) {
        std::vector<const char *> argv;
        std::vector<size_t> lens;
        for (const std::string &a : args) {
            argv.push_back(a.data());
            lens.push_back(a.size());
        }
        char *cmd = nullptr;
        const int n = redisFormatCommandArgv(&cmd, int(argv.size()), argv.data(), lens.data());
        if (n < 0) throw std::bad_alloc();
        std::unique_ptr<char, void (*)(char *)> owned(cmd, redisFreeCommand);
        size_t sent = 0;
        while (sent < size_t(n)) {
            const ssize_t w = ::send(c.get()->fd, cmd + sent, size_t(n) - sent, MSG_NOSIGNAL);
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) throw Lost{"send failed"};
            sent += size_t(w);
        }
    }

    // The next reply, waiting at most `wait_ms` (-1: forever). Null on a
    // timeout; Lost when the connection is gone or its bytes are refused.
    Reply next(Conn &conn, int wait_ms) {
        redisContext *c = conn.get();
        for (;;) {
            void *r = nullptr;
            if (redisReaderGetReply(c->reader, &r) != REDIS_OK) throw Lost{"protocol error"};
            if (r != nullptr) return Reply(static_cast<redisReply *>(r));
            pollfd p{c->fd, POLLIN, 0};
            const int ready = ::poll(&p, 1, wait_ms);
            if (ready < 0 && errno == EINTR) continue;
            if (ready < 0) throw Lost{"poll failed"};
            if (ready == 0) return nullptr;
            if (stopping()) throw Lost{"stopping"};
            char chunk[16384];
            const ssize_t n = ::recv(c->fd, chunk, sizeof chunk, 0);
            if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
            if (n <= 0) throw Lost{n == 0 ? "connection closed" : "recv failed"};
            if (!conn.guard.feed(chunk, size_t(n))) throw Lost{"reply refused: " + conn.guard.why()};
            if (redisReaderFeed(c->reader, chunk, size_t(n)) != REDIS_OK) throw Lost{"protocol error"};
        }
    }

    // A command before SUBSCRIBE: its reply within the command budget.
    Reply call(Conn &c, const std::vector<std::string> &args) {
        send(c, args);
        const int budget = int(std::max<long long>(1000, config_.command_timeout.count() * 4));
        Reply r = next(c, budget);
        if (!r) throw Lost{args[0] + " timed out"};
        return r;
    }

    // A connection whose fd `slot` records (the destructor shuts it down).
    Conn connect(int &slot, bool named) {
        const long long ms = config_.connect_timeout.count();
        timeval tv{time_t(ms / 1000), suseconds_t(ms % 1000 * 1000)};
        Ctx ctx(config_.unix_path.empty() ? redisConnectWithTimeout(config_.host.c_str(), config_.port, tv)
                                          : redisConnectUnixWithTimeout(config_.unix_path.c_str(), tv));
        if (!ctx) throw std::bad_alloc();
        if (ctx->err) throw Lost{ctx->errstr};
        if (config_.unix_path.empty()) redisEnableKeepAlive(ctx.get());
        {
            std::lock_guard lock(mu_);
            if (stop_) throw Lost{"stopping"};
            slot = ctx->fd;
        }
        Conn c(std::move(ctx));
        if (!config_.password.empty()) {
            std::vector<std::string> auth{"AUTH"};
            if (!config_.username.empty()) auth.push_back(config_.username);
            auth.push_back(config_.password);
            if (redis_replies::is_error(*call(c, auth))) throw Lost{"AUTH refused"};
        }
        if (named) call(c, {"CLIENT", "SETNAME", kFeedClientName});
        return c;
    }

    // Tracking (on this very connection, redirected to itself) when wanted
    // and possible; true when it is on.
    bool start_tracking(Conn &c) {
        CoherenceMode mode = config_.l1_coherence;
        if (mode == CoherenceMode::Pubsub) return false;
        if (mode == CoherenceMode::Auto) {
            Reply info = call(c, {"INFO", "server"});
            if (server_major(redis_replies::text(*info)) < 6) return false;
        }
        Reply id = call(c, {"CLIENT", "ID"});
        if (id->type != REDIS_REPLY_INTEGER) throw Lost{"CLIENT ID gave no integer"};
        std::vector<std::string> args{"CLIENT", "TRACKING", "on", "REDIRECT", std::to_string(id->integer), "BCAST"};
        for (const std::string &p : request_.prefixes) {
            args.push_back("PREFIX");
            args.push_back(p);
        }
        Reply ok = call(c, args);
        if (redis_replies::is_ok(*ok)) return true;
        // Explicitly asked for: no feed without it (the L1 stays suspended).
        if (mode == CoherenceMode::Tracking) throw Lost{"CLIENT TRACKING refused"};
        return false;
    }

    void session(bool &was_live) {
        Conn c = connect(fd_, true);
        const bool tracking = start_tracking(c);
        std::vector<std::string> sub{"SUBSCRIBE", kSdkInvalidationChannel};
        if (tracking) sub.emplace_back(kTrackingChannel);
        send(c, sub);
        for (size_t confirmed = 1; confirmed < sub.size();) {
            Reply r = next(c, 5000);
            if (!r) throw Lost{"SUBSCRIBE unanswered"};
            if (r->type == REDIS_REPLY_ERROR) throw Lost{"SUBSCRIBE refused"};
            if (is_kind(*r, "subscribe")) ++confirmed;
            else dispatch(*r);
        }
        decided_.store(tracking ? CoherenceMode::Tracking : CoherenceMode::Pubsub, std::memory_order_release);
        // Every change from here on reaches us; what came before is flushed by live().
        request_.handler->live();
        was_live = true;
        int unanswered = 0;
        for (;;) {
            Reply r = next(c, kIdlePollMs);
            if (stopping()) return;
            if (!r) {
                if (++unanswered > kMaxUnansweredPings) throw Lost{"no reply to PING"};
                send(c, {"PING"});
                continue;
            }
            unanswered = 0;
            dispatch(*r);
        }
    }

    static bool is_kind(const redisReply &r, std::string_view kind) {
        return r.type == REDIS_REPLY_ARRAY && r.elements >= 1 && r.element[0]->type == REDIS_REPLY_STRING &&
               std::string_view(r.element[0]->str, r.element[0]->len) == kind;
    }

    void dispatch(const redisReply &r) {
        if (!is_kind(r, "message") || r.elements != 3) return;  // pong, (un)subscribe
        const redisReply &channel = *r.element[1];
        const redisReply &payload = *r.element[2];
        const std::string_view name(channel.str ? channel.str : "", channel.str ? channel.len : 0);
        if (name == kTrackingChannel) {
            if (payload.type == REDIS_REPLY_ARRAY) {
                std::vector<std::string_view> keys;
                keys.reserve(payload.elements);
                for (size_t i = 0; i < payload.elements; ++i)
                    if (payload.element[i]->type == REDIS_REPLY_STRING)
                        keys.emplace_back(payload.element[i]->str, payload.element[i]->len);
                request_.handler->keys_changed(keys);
            } else if (payload.type == REDIS_REPLY_NIL) {
                // A nil key list: FLUSHALL / FLUSHDB. Everything goes.
                request_.handler->suspend();
                request_.handler->live();
            }
            // Anything else (a string) is a client's PUBLISH on the tracking
            // channel, not the server's: forged, ignored, never a flush.
        } else if (name == kSdkInvalidationChannel && payload.type == REDIS_REPLY_STRING) {
            auto ev = sdk_event::decode(std::string_view(payload.str, payload.len));
            if (!ev) return;  // not an event: ignored, as the SDK does
            if (ev->key) request_.handler->cache_key_changed(*ev->key);
            else request_.handler->namespace_changed(ev->ns);
        }
    }

    const RedisConfig config_;
    const WatchRequest request_;
    std::atomic<CoherenceMode> decided_{CoherenceMode::Auto};
    std::mutex mu_;
    std::condition_variable cv_;
    bool stop_ = false;
    int fd_ = -1;
    int pub_fd_ = -1;
    std::vector<std::string> queue_;  // events to publish
    static constexpr size_t kMaxQueued = 10000;
    std::thread publisher_;  // started by the first announce()
    std::thread thread_;  // last: started once everything else is in place
};

}  // namespace

std::unique_ptr<InvalidationFeed> start_redis_feed(const RedisConfig &config, const WatchRequest &request) {
    if (config.l1_coherence == CoherenceMode::Off || request.handler == nullptr) return nullptr;
    return std::make_unique<RedisFeed>(config, request);
}

}  // namespace cachekit::l2
