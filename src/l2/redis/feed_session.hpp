// One node's invalidation session (L1 coherence), as a non-blocking state
// machine that a FeedLoop (feed_loop.hpp) drives from its one thread:
// connect (connection.hpp's Dial, non-blocking, within connect_timeout;
// over TLS the handshake too, within the same time), AUTH, CLIENT SETNAME,
// INFO / CLIENT ID / CLIENT TRACKING ... REDIRECT self BCAST PREFIX ...,
// SUBSCRIBE, then the read loop with a PING after each idle second. Every
// step has a deadline, so a node that accepts and never answers (or answers
// slowly) costs its own session a timeout and a retry, never another
// session's time. A lost session is retried with backoff.
// docs/redis.md, "L1 coherence".
#pragma once

#include <atomic>
#include <chrono>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "l2/invalidation_feed.hpp"
#include "l2/redis/connection.hpp"
#include "l2/redis/redis_backend.hpp"
#include "l2/redis/resp_guard.hpp"

namespace cachekit::l2::feed {

using Clock = std::chrono::steady_clock;

inline constexpr std::chrono::milliseconds kIdlePing{1000};  // a PING after this long without a byte
inline constexpr int kMaxUnansweredPings = 3;                // then the connection counts as lost
inline constexpr std::chrono::milliseconds kBackoffMin{50}, kBackoffMax{1000};
// Every byte a session reads passes a RespGuard first (hiredis 0.14 has no
// limits): a message is a key list, so a reply past 1 MiB or an array past
// 16,384 elements is refused and the session ends, which shuts and flushes
// the L1 until it is subscribed again. Nothing a server declares is
// buffered or allocated before the guard has seen its header.
inline constexpr uint64_t kFeedMaxReplyBytes = 1 << 20;
inline constexpr uint32_t kFeedMaxKeys = 16384;

// The major version in INFO's "redis_version:7.0.15" line; 0 when absent.
int server_major(std::string_view info);

// `args` as the RESP command a server reads (throws std::bad_alloc).
std::string format_command(const std::vector<std::string> &args);

// Only the loop thread calls its methods (but decided(), read anywhere).
// The handler hears, per attempt: suspend(); then live() once subscribed;
// at the attempt's end suspend() and session_ended().
class Session {
public:
    Session(RedisConfig config, WatchRequest request);
    ~Session();
    Session(const Session &) = delete;
    Session &operator=(const Session &) = delete;

    CoherenceMode decided() const noexcept { return decided_.load(std::memory_order_acquire); }

    // Loop thread only. None throws.
    void start(Clock::time_point now) noexcept;                 // the first attempt
    void on_time(Clock::time_point now) noexcept;               // deadlines, PINGs, backoff's end
    void on_ready(short revents, Clock::time_point now) noexcept;  // poll said so for fd()
    void stop() noexcept;                                       // removed: close, report an attempt's end
    int fd() const noexcept;                                    // -1 while backing off
    short events() const noexcept;                              // for poll
    Clock::time_point next_wake() const noexcept;

private:
    enum class Phase { Backoff, Connecting, Handshake, Subscribing, Live };
    // Hello: the next of handshake_commands (AUTH, CLIENT SETNAME).
    enum class Step { Hello, Info, ClientId, Tracking };

    void attempt(Clock::time_point now);
    void begin_steps(Clock::time_point now);
    ssize_t receive(char *buf, size_t len);
    void close() noexcept;
    void next_step(Clock::time_point now);
    void step_reply(const redisReply &r, Clock::time_point now);
    void subscribe_reply(const redisReply &r, Clock::time_point now);
    void read(Clock::time_point now);
    void send(const std::vector<std::string> &args);
    void flush_out();
    void lose(Clock::time_point now) noexcept;
    void dispatch(const redisReply &r);

    const RedisConfig config_;
    const WatchRequest request_;
    std::atomic<CoherenceMode> decided_{CoherenceMode::Auto};
    Phase phase_ = Phase::Backoff;
    bool started_ = false;
    std::unique_ptr<tls::Context> tls_;  // made by the first TLS attempt; outlives link_'s sessions
    redis_conn::Link link_{kFeedMaxReplyBytes};
    redis_conn::Dial dial_;
    std::string out_;  // bytes not yet written (the socket is non-blocking)
    std::deque<Step> steps_;
    std::vector<redis_conn::HandshakeCommand> hello_;  // Step::Hello's commands, the next first
    size_t hello_next_ = 0;
    Clock::time_point deadline_{};  // of the phase or step under way; backoff's end
    std::chrono::milliseconds backoff_ = kBackoffMin;
    bool was_live_ = false;
    bool tracking_ = false;
    long long client_id_ = 0;
    size_t channels_ = 0, confirmed_ = 0;
    int unanswered_ = 0;
};

}  // namespace cachekit::l2::feed
