// The Sentinel backend: a single-node Redis backend (open_redis) on the
// primary the sentinels name, re-asked after a failure that may mean the
// primary moved. Discovery runs in a caller's thread, within its deadline,
// at most once per rediscover_min_gap and never twice at once (a caller
// that finds one in flight goes on with the current primary, or fails fast
// when there is none yet). A new primary gets a fresh backend; calls in
// flight on the old one finish on it (shared ownership) and it closes when
// the last one returns. Failing open is the resilient wrapper's job above.
#include "l2/sentinel/redis_sentinel_backend.hpp"

#include <mutex>
#include <utility>

#include "l2/sentinel/sentinel_discovery.hpp"
#include "util/error.hpp"
#include "util/fork_hooks.hpp"

namespace cachekit::l2 {
namespace {

// A failure that may mean the primary moved: the connection failed or timed
// out, or a reply said so (READONLY: we reached a demoted replica). An
// error reply (EBACKEND too) is not told apart from a broken connection by
// its code, so any EBACKEND asks again; the gap keeps that cheap.
bool may_have_moved(const Error &e) { return e.code() == CACHEKIT_EBACKEND || e.code() == CACHEKIT_ETIMEOUT; }

class SentinelBackend final : public Backend, private fork_hooks::Participant {
public:
    explicit SentinelBackend(const SentinelConfig &config) : config_(config), discovery_(config) {
        fork_hooks::join(this);
    }
    ~SentinelBackend() override { fork_hooks::leave(this); }

    // The C API's name for the single-node Redis family: a Sentinel-managed
    // master is one Redis server at a time.
    const char *kind() const noexcept override { return "redis"; }

    bool get(std::string_view key, cachekit_buf *out, Deadline d) override {
        return call(d, [&](Backend &b) { return b.get(key, out, d); });
    }
    bool get_with_ttl(std::string_view key, cachekit_buf *out, Ttl *remaining, Deadline d) override {
        return call(d, [&](Backend &b) { return b.get_with_ttl(key, out, remaining, d); });
    }
    void set(std::string_view key, std::string_view value, Ttl ttl, Deadline d) override {
        call(d, [&](Backend &b) { b.set(key, value, ttl, d); });
    }
    bool del(std::string_view key, Deadline d) override {
        return call(d, [&](Backend &b) { return b.del(key, d); });
    }
    bool exists(std::string_view key, Deadline d) override {
        return call(d, [&](Backend &b) { return b.exists(key, d); });
    }
    std::optional<Ttl> ttl(std::string_view key, Deadline d) override {
        return call(d, [&](Backend &b) { return b.ttl(key, d); });
    }
    bool expire(std::string_view key, std::chrono::milliseconds ttl, Deadline d) override {
        return call(d, [&](Backend &b) { return b.expire(key, ttl, d); });
    }
    void get_many(const std::vector<std::string_view> &keys, cachekit_buf *outs, std::vector<bool> &found,
                  Deadline d) override {
        call(d, [&](Backend &b) { b.get_many(keys, outs, found, d); });
    }
    void set_many(const std::vector<KeyValue> &entries, Ttl ttl, Deadline d) override {
        call(d, [&](Backend &b) { b.set_many(entries, ttl, d); });
    }
    uint64_t clear(const KeySelection &which, Deadline d) override {
        return call(d, [&](Backend &b) { return b.clear(which, d); });
    }
    std::optional<std::string> lock(std::string_view name, std::chrono::milliseconds hold, Deadline d) override {
        return call(d, [&](Backend &b) { return b.lock(name, hold, d); });
    }
    bool unlock(std::string_view name, std::string_view token, Deadline d) override {
        return call(d, [&](Backend &b) { return b.unlock(name, token, d); });
    }
    bool keeps_registry() const noexcept override { return true; }  // every primary is a Redis server
    bool set_registered(std::string_view key, std::string_view value, Ttl ttl, std::string_view registry,
                        std::string_view member, Deadline d) override {
        return call(d, [&](Backend &b) { return b.set_registered(key, value, ttl, registry, member, d); });
    }
    std::vector<std::string> drain_registry(std::string_view registry, std::string_view key_prefix,
                                            Deadline d) override {
        return call(d, [&](Backend &b) { return b.drain_registry(registry, key_prefix, d); });
    }

    Health health(Deadline d) override {
        std::string where;
        Health h = call(d, [&](Backend &b) {
            where = address_of(b);
            return b.health(d);
        });
        h.detail = "sentinel master \"" + config_.master_name + "\", primary " + where + ": " + h.detail;
        return h;
    }

    std::string metrics_text() const override {
        std::shared_ptr<Backend> b;
        {
            std::lock_guard<std::mutex> lock(mu_);
            b = current_;
        }
        return b ? b->metrics_text() : std::string();
    }

private:
    template <class F>
    auto call(Deadline d, F &&f) -> decltype(f(std::declval<Backend &>())) {
        std::shared_ptr<Backend> b = primary(d);
        try {
            return f(*b);
        } catch (const Error &e) {
            if (!may_have_moved(e)) throw;
            mark_stale(b.get());
            // Ask now, within what is left of this call: the next call may
            // already go to the new primary. This call's error stands.
            if (!d.passed()) {
                try {
                    refresh(d);
                } catch (const Error &) {
                }
            }
            throw;
        }
    }

    // The backend calls go to: the current one unless it is stale (then
    // asked again first, when allowed) or there is none yet.
    std::shared_ptr<Backend> primary(Deadline d) {
        {
            std::lock_guard<std::mutex> lock(mu_);
            if (current_ && !stale_) return current_;
        }
        return refresh(d);
    }

    void mark_stale(const Backend *failed) {
        std::lock_guard<std::mutex> lock(mu_);
        if (current_.get() == failed) stale_ = true;  // not when another call swapped it already
    }

    std::string address_of(const Backend &b) const {
        std::lock_guard<std::mutex> lock(mu_);
        return current_.get() == &b ? address_.text() : "(replaced)";
    }

    // Ask the sentinels (one caller at a time, once per gap) and swap to the
    // primary they name when it moved. Returns the backend to use; throws
    // only when there is none. Old backends are released outside mu_ (their
    // pools leave fork_hooks, whose lock comes before ours).
    std::shared_ptr<Backend> refresh(Deadline d) {
        std::shared_ptr<Backend> old;
        PrimaryAddress known;
        {
            std::lock_guard<std::mutex> lock(mu_);
            old = current_;
            const SteadyClock::time_point now = SteadyClock::now();
            if (discovering_ || now < next_discovery_) {
                if (old) return old;
                fail(CACHEKIT_EBACKEND, last_error_.empty() ? "Redis Sentinel: the primary of master \"" +
                                                                  config_.master_name + "\" is being looked up"
                                                            : last_error_);
            }
            discovering_ = true;
            next_discovery_ = now + config_.rediscover_min_gap;
            known = address_;
        }
        std::shared_ptr<Backend> fresh;
        PrimaryAddress found;
        try {
            found = discovery_.find(d, old ? &known : nullptr);
            if (!old || !(found == known)) {
                RedisConfig c = config_.data;
                c.host = found.host;
                c.port = found.port;
                fresh = open_redis(c);  // connects lazily: no I/O here
            }
        } catch (const Error &e) {
            std::lock_guard<std::mutex> lock(mu_);
            discovering_ = false;
            last_error_ = e.what();
            if (old) return old;
            throw;
        }
        std::lock_guard<std::mutex> lock(mu_);
        discovering_ = false;
        stale_ = false;
        last_error_.clear();
        if (fresh) {
            current_ = fresh;
            address_ = found;
        }
        return current_;
    }

    void before_fork() noexcept override { mu_.lock(); }
    void after_fork_parent() noexcept override { mu_.unlock(); }
    void after_fork_child() noexcept override {
        discovering_ = false;  // that was a parent's thread
        mu_.unlock();
    }

    const SentinelConfig config_;
    SentinelDiscovery discovery_;
    mutable std::mutex mu_;
    std::shared_ptr<Backend> current_;  // null until the first discovery
    PrimaryAddress address_;            // current_'s
    bool stale_ = false;                // a call on current_ failed: ask again
    bool discovering_ = false;
    SteadyClock::time_point next_discovery_{};
    std::string last_error_;  // the last discovery's failure, for callers that cannot wait
};

}  // namespace

std::unique_ptr<Backend> open_redis_sentinel(const SentinelConfig &config) {
    if (config.sentinels.empty()) fail(CACHEKIT_EINVAL, "Redis Sentinel config: no sentinel hosts");
    if (config.sentinels.size() > kSentinelMaxHosts)
        fail(CACHEKIT_EINVAL, "Redis Sentinel config: more than " + std::to_string(kSentinelMaxHosts) + " sentinels");
    if (config.master_name.empty()) fail(CACHEKIT_EINVAL, "Redis Sentinel config: no master name");
    if (config.data.l1_coherence != CoherenceMode::Off)
        fail(CACHEKIT_EINVAL, "Redis Sentinel config: L1 coherence is not supported yet over Sentinel");
    if (config.rediscover_min_gap.count() < 0)
        fail(CACHEKIT_EINVAL, "Redis Sentinel config: rediscover_min_gap must not be negative");
    // The data settings are checked as a single node's would be, once, here.
    RedisConfig probe = config.data;
    probe.host = config.sentinels.front().host;
    probe.port = config.sentinels.front().port;
    (void)open_redis(probe);
    return std::make_unique<SentinelBackend>(config);
}

}  // namespace cachekit::l2
