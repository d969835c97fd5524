#include "l2/sentinel/switch_watcher.hpp"

#include <hiredis/hiredis.h>
#include <poll.h>
#include <pthread.h>

#include <algorithm>
#include <cerrno>
#include <system_error>

#include "l2/redis/connection.hpp"
#include "l2/redis/feed_session.hpp"
#include "l2/redis/redis_replies.hpp"
#include "l2/redis/resp_guard.hpp"
#include "l2/redis/transport.hpp"
#include "util/error.hpp"
#include "util/fork_hooks.hpp"

namespace cachekit::l2 {
namespace {

using Clock = std::chrono::steady_clock;
using redis_replies::Reply;
using std::chrono::milliseconds;

constexpr milliseconds kIdlePing{1000};  // a PING after this long without a byte
constexpr int kMaxUnansweredPings = 3;   // then the connection counts as lost
constexpr milliseconds kBackoffMin{100}, kBackoffMax{2000};
// A subscriber's replies are [kind, channel, payload] of a few short strings.
constexpr uint64_t kMaxReplyBytes = 64 << 10;

// Why a connection ended (caught in the thread; never leaves it).
struct Lost {
    std::string why;
};
struct Stopped {};

bool is_kind(const redisReply &r, std::string_view kind) {
    return r.type == REDIS_REPLY_ARRAY && r.elements >= 1 && r.element[0]->type == REDIS_REPLY_STRING &&
           redis_replies::text(*r.element[0]) == kind;
}

}  // namespace

bool parse_switch_master(std::string_view payload, std::string_view master, std::string *host, int *port) {
    std::vector<std::string_view> fields;
    while (fields.size() < 6) {
        const size_t sp = payload.find(' ');
        fields.push_back(payload.substr(0, sp));
        if (sp == std::string_view::npos) break;
        payload.remove_prefix(sp + 1);
    }
    if (fields.size() != 5 || fields[0] != master) return false;
    const std::string_view h = fields[3], p = fields[4];
    if (h.empty() || h.size() > 255 || p.empty() || p.size() > 5) return false;
    int n = 0;
    for (char c : p) {
        if (c < '0' || c > '9') return false;
        n = n * 10 + (c - '0');
    }
    if (n < 1 || n > 65535) return false;
    *host = std::string(h);
    *port = n;
    return true;
}

// One connection to one sentinel: blocking steps over a non-blocking
// socket (dialled and read through redis/connection.hpp, as every Redis
// connection is), each poll also watching the owner's eventfd (stop).
struct SwitchWatcher::Conn {
    explicit Conn(const SwitchWatcher &w) : owner(w) {}

    // revents of the socket, 0 when `until` came first; Stopped when asked to stop.
    short await(short events, Clock::time_point until) {
        for (;;) {
            if (owner.stop_.load()) throw Stopped{};
            const auto left = std::chrono::ceil<milliseconds>(until - Clock::now()).count();
            if (left <= 0) return 0;
            pollfd fds[2] = {{link.fd(), events, 0}, {owner.thread_.fd(), POLLIN, 0}};
            const int r = ::poll(fds, 2, int(std::min<long long>(left, 1000)));
            if (r < 0 && errno == EINTR) continue;
            if (r < 0) throw Lost{"poll failed"};
            if (fds[1].revents != 0) throw Stopped{};  // written at stop only
            if (fds[0].revents != 0) return fds[0].revents;
        }
    }

    void connect(const SentinelConfig::Host &h, const RedisTls &tls_settings, Clock::time_point until) {
        RedisConfig where;  // what the dial reads: the address (and TLS below)
        where.host = h.host;
        where.port = h.port;
        if (tls_settings.enabled) tls_ctx = std::make_unique<tls::Context>(tls_settings, h.host);
        try {
            dial.start(link, where);
            for (short revents = 0; !dial.step(link, revents, where, tls_ctx.get());) {
                revents = await(dial.events(), until);
                if (revents == 0)
                    throw Lost{dial.phase() == redis_conn::Dial::Phase::Tls ? "TLS handshake timed out"
                                                                              : "connect timed out"};
            }
        } catch (const Error &e) {
            throw Lost{e.what()};
        }
    }

    void send(const std::vector<std::string> &args, Clock::time_point until) {
        const std::string out = feed::format_command(args);
        for (size_t done = 0; done < out.size();) {
            const long n = redis_conn::send_some(link, out.data() + done, out.size() - done);
            if (n == redis_conn::kWouldBlock) {
                if (await(POLLOUT, until) == 0) throw Lost{"write timed out"};
                continue;
            }
            if (n <= 0) throw Lost{"write failed: " + redis_conn::io_why(n)};
            done += size_t(n);
        }
    }

    // The next reply, or null when `until` came first. Every byte passes
    // the guard before hiredis's reader sees it.
    Reply next(Clock::time_point until) {
        for (;;) {
            void *raw = nullptr;
            if (redisReaderGetReply(link.ctx->reader, &raw) != REDIS_OK) throw Lost{"protocol error"};
            if (raw != nullptr) return Reply(static_cast<redisReply *>(raw));
            if (!redis_conn::tls_pending(link) && await(POLLIN, until) == 0) return nullptr;
            char chunk[4096];
            const long n = redis_conn::recv_some(link, chunk, sizeof chunk);
            if (n == redis_conn::kWouldBlock) continue;
            if (n <= 0) throw Lost{"read failed: " + redis_conn::io_why(n)};
            if (!link.guard.feed(chunk, size_t(n))) throw Lost{"reply refused: " + link.guard.why()};
            if (redisReaderFeed(link.ctx->reader, chunk, size_t(n)) != REDIS_OK) throw Lost{"protocol error"};
        }
    }

    // One command answered within `until` (null: no answer in time).
    Reply command(const std::vector<std::string> &args, Clock::time_point until) {
        link.guard.expect(ReplyShape::scalar());
        send(args, until);
        return next(until);
    }

    const SwitchWatcher &owner;
    std::unique_ptr<tls::Context> tls_ctx;  // before the link: its session goes first
    redis_conn::Link link{kMaxReplyBytes};  // closes without writing (no close_notify)
    redis_conn::Dial dial;
};

SwitchWatcher::SwitchWatcher(const SentinelConfig &config, std::function<bool(const Announcement &)> announced,
                             std::chrono::milliseconds retry)
    : config_(config), announced_(std::move(announced)), retry_(retry), pid_(fork_hooks::pid()) {
    if (config_.sentinels.empty()) fail(CACHEKIT_EINVAL, "Redis Sentinel config: no sentinel hosts");
    thread_.start([this] { run(); });
}

SwitchWatcher::~SwitchWatcher() {
    if (pid_ != fork_hooks::pid()) {
        // A forked child: the thread is the parent's and does not run here.
        // Leave it (and the eventfd's copy) alone.
        thread_.abandon();
        return;
    }
    stop_.store(true);
    thread_.finish();
}

bool SwitchWatcher::wait(Clock::time_point until) noexcept {
    for (;;) {
        if (stop_.load()) return false;
        const auto left = std::chrono::ceil<milliseconds>(until - Clock::now()).count();
        if (left <= 0) return true;
        pollfd fd{thread_.fd(), POLLIN, 0};
        (void)::poll(&fd, 1, int(std::min<long long>(left, 1000)));
    }
}

void SwitchWatcher::run() noexcept {
    (void)pthread_setname_np(pthread_self(), kThreadName);
    size_t at = 0;
    milliseconds backoff = kBackoffMin;
    bool first = true;
    while (!stop_.load()) {
        bool was_subscribed = false;
        try {
            was_subscribed = watch(at, first);
        } catch (const Stopped &) {
            return;
        } catch (...) {
            // A connection that could not even be set up (no memory, bad
            // TLS files): the next sentinel, after the backoff.
        }
        subscribed_.store(false);
        if (was_subscribed) {
            first = false;
            backoff = kBackoffMin;
        }
        at = (at + 1) % config_.sentinels.size();
        if (!wait(Clock::now() + backoff)) return;
        backoff = std::min(backoff * 2, kBackoffMax);
    }
}

bool SwitchWatcher::watch(size_t sentinel, bool first) {
    Conn c(*this);
    bool was_subscribed = false;
    try {
        c.connect(config_.sentinels[sentinel], config_.data.tls, Clock::now() + config_.data.connect_timeout);
        const milliseconds step{std::max<long long>(1000, config_.data.command_timeout.count() * 4)};
        // The sentinel's own credentials, and a name; no SELECT (a sentinel has no databases).
        RedisConfig sentinel_auth;
        sentinel_auth.username = config_.sentinel_username;
        sentinel_auth.password = config_.sentinel_password;
        for (const redis_conn::HandshakeCommand &command :
             redis_conn::handshake_commands(sentinel_auth, false, kClientName)) {
            Reply r = c.command(command.args, Clock::now() + step);
            if (!r) throw Lost{std::string(command.name) + " unanswered"};
            if (command.required && redis_replies::is_error(*r)) throw Lost{std::string(command.name) + " refused"};
        }
        // The confirmation, every message and every PING's answer: [kind, channel, payload].
        c.link.guard.expect_stream(ReplyShape::array(3));
        c.send({"SUBSCRIBE", kChannel}, Clock::now() + step);
        Reply r = c.next(Clock::now() + step);
        if (!r) throw Lost{"SUBSCRIBE unanswered"};
        if (!is_kind(*r, "subscribe")) throw Lost{"SUBSCRIBE refused"};
        was_subscribed = true;
        subscribed_.store(true);

        constexpr Clock::time_point never = Clock::time_point::max();
        // Resubscribed: an announcement may have come while we were not
        // listening, so the owner asks again (not at the very first
        // subscription: the owner has just opened).
        Clock::time_point call_at = first ? never : Clock::now();
        Announcement pending{sentinel, {}, 0};
        int tries = 0;
        Clock::time_point idle_at = Clock::now() + kIdlePing;
        int unanswered = 0;
        for (;;) {
            if (Clock::now() >= call_at) {
                bool done = true;
                try {
                    done = announced_(pending);
                } catch (...) {
                }
                call_at = done || ++tries > kMaxRetries ? never : Clock::now() + retry_;
            }
            r = c.next(std::min(call_at, idle_at));
            const Clock::time_point now = Clock::now();
            if (!r) {
                if (now < idle_at) continue;  // the callback's time
                if (++unanswered > kMaxUnansweredPings) throw Lost{"no reply to PING"};
                c.send({"PING"}, now + step);
                idle_at = now + kIdlePing;
                continue;
            }
            unanswered = 0;
            idle_at = now + kIdlePing;
            if (!is_kind(*r, "message") || r->elements != 3) continue;  // pong
            if (redis_replies::text(*r->element[1]) != kChannel || r->element[2]->type != REDIS_REPLY_STRING) continue;
            Announcement a{sentinel, {}, 0};
            if (!parse_switch_master(redis_replies::text(*r->element[2]), config_.master_name, &a.host, &a.port))
                continue;
            messages_.fetch_add(1, std::memory_order_relaxed);
            pending = std::move(a);  // a hint only: the owner asks the sentinels and checks ROLE
            tries = 0;
            call_at = now;
        }
    } catch (const Lost &) {
    } catch (const Error &) {  // a TLS context that cannot be made (its files)
    }
    return was_subscribed;
}

}  // namespace cachekit::l2
