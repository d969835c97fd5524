#include "l2/redis/feed_session.hpp"

#include <poll.h>

#include "l2/redis/redis_invalidation.hpp"
#include "l2/redis/redis_replies.hpp"
#include "l2/redis/sdk_event.hpp"

namespace cachekit::l2::feed {
namespace {

using redis_replies::Reply;
using std::chrono::milliseconds;

constexpr std::string_view kTrackingChannel = "__redis__:invalidate";
constexpr milliseconds kSubscribeWait{5000};  // for each SUBSCRIBE confirmation
constexpr int kChunksPerWake = 4;             // reads per poll wake: one busy node cannot starve the others

// Why an attempt ended (caught inside the session; never leaves it).
struct Lost {
    std::string why;
};

bool is_kind(const redisReply &r, std::string_view kind) {
    return r.type == REDIS_REPLY_ARRAY && r.elements >= 1 && r.element[0]->type == REDIS_REPLY_STRING &&
           std::string_view(r.element[0]->str, r.element[0]->len) == kind;
}

}  // namespace

int server_major(std::string_view info) {
    const size_t at = info.find("redis_version:");
    if (at == std::string_view::npos) return 0;
    int major = 0;
    for (size_t i = at + 14; i < info.size() && info[i] >= '0' && info[i] <= '9'; ++i) major = major * 10 + (info[i] - '0');
    return major;
}

Session::Session(RedisConfig config, WatchRequest request) : config_(std::move(config)), request_(std::move(request)) {}

Session::~Session() { close(); }

// Nothing is written on the way out: a forked child's copy must not write
// on the parent's session.
void Session::close() noexcept { link_.close(); }

int Session::fd() const noexcept { return link_.fd(); }

short Session::events() const noexcept {
    if (!link_.ctx) return 0;
    if (phase_ == Phase::Connecting) return dial_.events();
    return short(POLLIN | (!out_.empty() ? POLLOUT : 0));
}

Clock::time_point Session::next_wake() const noexcept { return deadline_; }

void Session::start(Clock::time_point now) noexcept {
    started_ = true;
    try {
        attempt(now);
    } catch (...) {
        lose(now);
    }
}

void Session::stop() noexcept {
    if (!started_) return;
    const bool in_attempt = phase_ != Phase::Backoff;
    close();
    phase_ = Phase::Backoff;
    if (in_attempt) {  // as an attempt ended by the connection's loss
        request_.handler->suspend();
        request_.handler->session_ended();
    }
}

// One attempt: the L1 is shut until it is subscribed.
void Session::attempt(Clock::time_point now) {
    request_.handler->suspend();
    was_live_ = false;
    tracking_ = false;
    out_.clear();
    steps_.clear();
    phase_ = Phase::Connecting;
    deadline_ = now + config_.connect_timeout;
    link_.guard.reset();
    link_.guard.expect_stream(ReplyShape::nested(3, kFeedMaxKeys));  // command replies and pushes alike fit [kind, channel, [keys]]
    dial_.start(link_, config_);  // closes the last attempt's connection
}

void Session::on_time(Clock::time_point now) noexcept {
    if (!started_ || now < deadline_) return;
    try {
        switch (phase_) {
        case Phase::Backoff: attempt(now); return;
        case Phase::Connecting:
            throw Lost{dial_.phase() == redis_conn::Dial::Phase::Tls ? "TLS handshake timed out" : "connect timed out"};
        case Phase::Handshake: throw Lost{"handshake step timed out"};
        case Phase::Subscribing: throw Lost{"SUBSCRIBE unanswered"};
        case Phase::Live:
            if (++unanswered_ > kMaxUnansweredPings) throw Lost{"no reply to PING"};
            send({"PING"});
            deadline_ = now + kIdlePing;
            return;
        }
    } catch (...) {
        lose(now);
    }
}

void Session::on_ready(short revents, Clock::time_point now) noexcept {
    if (!link_.ctx) return;
    try {
        if (phase_ == Phase::Connecting) {
            // Over TLS the handshake follows, within what is left of the connect's time.
            if (config_.tls.enabled && !tls_) tls_ = std::make_unique<tls::Context>(config_.tls, config_.host);
            if (dial_.step(link_, revents, config_, tls_.get())) begin_steps(now);
            return;
        }
        if (revents & POLLOUT) flush_out();
        if (revents & (POLLIN | POLLERR | POLLHUP)) read(now);
    } catch (...) {
        lose(now);
    }
}

// Each step answered before the next is sent.
void Session::begin_steps(Clock::time_point now) {
    phase_ = Phase::Handshake;
    hello_ = redis_conn::handshake_commands(config_, false, kFeedClientName);
    hello_next_ = 0;
    steps_.insert(steps_.end(), hello_.size(), Step::Hello);
    // Tracking (on this very connection, redirected to itself) when wanted and possible.
    if (config_.l1_coherence == CoherenceMode::Auto) steps_.push_back(Step::Info);
    if (config_.l1_coherence != CoherenceMode::Pubsub) {
        steps_.push_back(Step::ClientId);
        steps_.push_back(Step::Tracking);
    }
    next_step(now);
}

void Session::next_step(Clock::time_point now) {
    if (steps_.empty()) {
        std::vector<std::string> sub{"SUBSCRIBE", kSdkInvalidationChannel};
        if (tracking_) sub.emplace_back(kTrackingChannel);
        channels_ = sub.size() - 1;
        confirmed_ = 0;
        phase_ = Phase::Subscribing;
        deadline_ = now + kSubscribeWait;
        send(sub);
        return;
    }
    const long long budget = std::max<long long>(1000, config_.command_timeout.count() * 4);
    deadline_ = now + milliseconds(budget);
    switch (steps_.front()) {
    case Step::Hello: send(hello_[hello_next_].args); break;
    case Step::Info: send({"INFO", "server"}); break;
    case Step::ClientId: send({"CLIENT", "ID"}); break;
    case Step::Tracking: {
        std::vector<std::string> args{"CLIENT", "TRACKING", "on", "REDIRECT", std::to_string(client_id_), "BCAST"};
        for (const std::string &p : request_.prefixes) {
            args.push_back("PREFIX");
            args.push_back(p);
        }
        send(args);
        break;
    }
    }
}

void Session::step_reply(const redisReply &r, Clock::time_point now) {
    const Step step = steps_.front();
    steps_.pop_front();
    switch (step) {
    case Step::Hello: {
        const redis_conn::HandshakeCommand &hello = hello_[hello_next_++];
        if (hello.required && redis_replies::is_error(r)) throw Lost{std::string(hello.name) + " refused"};
        break;
    }
    case Step::Info:
        if (server_major(redis_replies::text(r)) < 6) steps_.clear();  // no tracking before Redis 6
        break;
    case Step::ClientId:
        if (r.type != REDIS_REPLY_INTEGER) throw Lost{"CLIENT ID gave no integer"};
        client_id_ = r.integer;
        break;
    case Step::Tracking:
        tracking_ = redis_replies::is_ok(r);
        // Explicitly asked for: no feed without it (the L1 stays suspended).
        if (!tracking_ && config_.l1_coherence == CoherenceMode::Tracking) throw Lost{"CLIENT TRACKING refused"};
        break;
    }
    next_step(now);
}

void Session::subscribe_reply(const redisReply &r, Clock::time_point now) {
    if (r.type == REDIS_REPLY_ERROR) throw Lost{"SUBSCRIBE refused"};
    if (!is_kind(r, "subscribe")) {
        dispatch(r);
        return;
    }
    deadline_ = now + kSubscribeWait;
    if (++confirmed_ < channels_) return;
    decided_.store(tracking_ ? CoherenceMode::Tracking : CoherenceMode::Pubsub, std::memory_order_release);
    phase_ = Phase::Live;
    unanswered_ = 0;
    deadline_ = now + kIdlePing;
    // Every change from here on reaches us; what came before is flushed by live().
    request_.handler->live();
    was_live_ = true;
}

// What the socket has (a few chunks at most), each byte past the guard
// before hiredis's reader sees it, then every complete reply.
// Over TLS, what OpenSSL decrypted but poll cannot see (at most the rest of
// one record) is read before returning.
void Session::read(Clock::time_point now) {
    for (int i = 0; link_.ctx && (i < kChunksPerWake || redis_conn::tls_pending(link_)); ++i) {
        char chunk[16384];
        const ssize_t n = receive(chunk, sizeof chunk);
        if (n == 0) return;  // nothing more now
        if (!link_.guard.feed(chunk, size_t(n))) throw Lost{"reply refused: " + link_.guard.why()};
        if (redisReaderFeed(link_.ctx->reader, chunk, size_t(n)) != REDIS_OK) throw Lost{"protocol error"};
        if (phase_ == Phase::Live) deadline_ = now + kIdlePing;  // a byte: not idle
        for (;;) {
            void *raw = nullptr;
            if (redisReaderGetReply(link_.ctx->reader, &raw) != REDIS_OK) throw Lost{"protocol error"};
            if (raw == nullptr) break;
            Reply r(static_cast<redisReply *>(raw));
            switch (phase_) {
            case Phase::Handshake: step_reply(*r, now); break;
            case Phase::Subscribing: subscribe_reply(*r, now); break;
            case Phase::Live:
                unanswered_ = 0;
                dispatch(*r);
                break;
            default: break;
            }
        }
        if (size_t(n) < sizeof chunk && !redis_conn::tls_pending(link_)) return;  // likely drained; poll says if not
    }
}

// Bytes now (> 0), or 0 when there are none yet; a loss throws.
ssize_t Session::receive(char *buf, size_t len) {
    const long n = redis_conn::recv_some(link_, buf, len);  // (over TLS, also consumes a session ticket)
    if (n > 0) return n;
    if (n == redis_conn::kWouldBlock) return 0;
    throw Lost{redis_conn::io_why(n)};
}

std::string format_command(const std::vector<std::string> &args) {
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
    return std::string(cmd, size_t(n));
}

void Session::send(const std::vector<std::string> &args) {
    out_ += format_command(args);
    flush_out();
}

// What the socket cannot take now waits for POLLOUT (a few commands at
// most: one step at a time, one PING a second). The transport never raises
// SIGPIPE, and retries a TLS write with the same length (out_ may have
// grown meanwhile).
void Session::flush_out() {
    while (!out_.empty()) {
        const long w = redis_conn::send_some(link_, out_.data(), out_.size());
        if (w == redis_conn::kWouldBlock) return;
        if (w <= 0) throw Lost{redis_conn::io_why(w)};
        out_.erase(0, size_t(w));
    }
}

// The attempt is over: the L1 shuts, and the next attempt waits its backoff.
void Session::lose(Clock::time_point now) noexcept {
    close();
    out_.clear();
    steps_.clear();
    phase_ = Phase::Backoff;
    request_.handler->suspend();
    request_.handler->session_ended();
    if (was_live_) backoff_ = kBackoffMin;
    deadline_ = now + backoff_;
    backoff_ = std::min(backoff_ * 2, kBackoffMax);
}

void Session::dispatch(const redisReply &r) {
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

}  // namespace cachekit::l2::feed
