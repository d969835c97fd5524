// The Sentinel backend: a single-node Redis backend (open_redis) on the
// primary the sentinels name, re-asked after a failure that may mean the
// primary moved. Discovery runs in a caller's thread, within its deadline,
// at most once per rediscover_min_gap and never twice at once (a caller
// that finds one in flight goes on with the current primary, or fails fast
// when there is none yet). A new primary gets a fresh backend; calls in
// flight on the old one finish on it (shared ownership) and it closes when
// the last one returns. Failing open is the resilient wrapper's job above.
//
// A +switch-master watcher (switch_watcher.hpp) makes the same discovery
// run as soon as a sentinel announces a failover, so the backend moves
// before any request fails. L1 coherence is the cluster's feed machinery
// (cluster_invalidation.hpp) watching one node, the current primary: a new
// primary gets a new feed session and the old one is stopped, the cache's
// L1 shut in between (suspend() until the new session is live()).
#include "l2/sentinel/redis_sentinel_backend.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <system_error>
#include <utility>

#include "l2/cluster/cluster_invalidation.hpp"
#include "l2/redis/feed_publisher.hpp"
#include "l2/sentinel/sentinel_discovery.hpp"
#include "l2/sentinel/switch_watcher.hpp"
#include "util/error.hpp"
#include "util/fork_hooks.hpp"
#include "util/prometheus_label.hpp"

namespace cachekit::l2 {
namespace {

// A failure that may mean the primary moved: the connection failed or timed
// out, or a reply said so (READONLY: we reached a demoted replica). An
// error reply (EBACKEND too) is not told apart from a broken connection by
// its code, so any EBACKEND asks again; the gap keeps that cheap.
bool may_have_moved(const Error &e) { return e.code() == CACHEKIT_EBACKEND || e.code() == CACHEKIT_ETIMEOUT; }

// read_from_replicas: the replica list is read again by the first read
// after this long.
constexpr std::chrono::seconds kReplicaListAge{10};

// The current primary's address, shared by the backend (which sets it at
// each swap) and its feeds (which may outlive it).
struct PrimaryTarget {
    std::mutex mu;
    PrimaryAddress address;  // empty host: none yet
};

// The cache's feed: the cluster's multi-node feed (the primary, and the
// replicas read from) for the changes, and a publisher of our own for
// announce(): a PUBLISH on a replica reaches that replica's subscribers
// only (unlike Redis Cluster's, it is not sent on), so announcements go to
// the current primary, retargeted when it changes.
class SentinelFeed final : public InvalidationFeed {
public:
    SentinelFeed(std::unique_ptr<InvalidationFeed> inner, const RedisConfig &node, std::shared_ptr<PrimaryTarget> target)
        : inner_(std::move(inner)), node_(node), target_(std::move(target)), publisher_(node) {}

    const char *mode() const noexcept override { return inner_->mode(); }

    void announce(std::string_view cache_key) noexcept override {
        {
            std::lock_guard<std::mutex> lock(mu_);
            PrimaryAddress now;
            {
                std::lock_guard<std::mutex> t(target_->mu);
                try {
                    now = target_->address;
                } catch (...) {  // no memory: the publisher keeps its node (best effort)
                }
            }
            if (!now.host.empty() && !(now == published_to_)) {
                try {
                    RedisConfig c = node_;
                    c.host = now.host;
                    c.port = now.port;
                    publisher_.retarget(c);
                    published_to_ = std::move(now);
                } catch (...) {
                }
            }
        }
        publisher_.announce(cache_key);
    }

private:
    std::unique_ptr<InvalidationFeed> inner_;
    const RedisConfig node_;
    const std::shared_ptr<PrimaryTarget> target_;
    std::mutex mu_;
    PrimaryAddress published_to_;  // under mu_
    feed::Publisher publisher_;    // last: stopped first
};

class SentinelBackend final : public Backend, private fork_hooks::Participant {
public:
    explicit SentinelBackend(const SentinelConfig &config) : config_(config), discovery_(config) {
        fork_hooks::join(this);
        std::lock_guard<std::mutex> lock(watcher_mu_);
        start_watcher();
    }
    ~SentinelBackend() override {
        std::unique_ptr<SwitchWatcher> watcher;
        {
            std::lock_guard<std::mutex> lock(watcher_mu_);
            watcher = std::move(watcher_);
        }
        // First, and joined outside the lock (a fork waits for it): its
        // callback uses everything below.
        watcher.reset();
        fork_hooks::leave(this);
    }

    // The C API's name for the single-node Redis family: a Sentinel-managed
    // master is one Redis server at a time.
    const char *kind() const noexcept override { return "redis"; }

    bool get(std::string_view key, cachekit_buf *out, Deadline d) override {
        return read(d, [&](Backend &b) { return b.get(key, out, d); });
    }
    bool get_with_ttl(std::string_view key, cachekit_buf *out, Ttl *remaining, Deadline d) override {
        return read(d, [&](Backend &b) { return b.get_with_ttl(key, out, remaining, d); });
    }
    void set(std::string_view key, std::string_view value, Ttl ttl, Deadline d) override {
        call(d, [&](Backend &b) { b.set(key, value, ttl, d); });
    }
    bool del(std::string_view key, Deadline d) override {
        return call(d, [&](Backend &b) { return b.del(key, d); });
    }
    bool exists(std::string_view key, Deadline d) override {
        return read(d, [&](Backend &b) { return b.exists(key, d); });
    }
    std::optional<Ttl> ttl(std::string_view key, Deadline d) override {
        return read(d, [&](Backend &b) { return b.ttl(key, d); });
    }
    bool expire(std::string_view key, std::chrono::milliseconds ttl, Deadline d) override {
        return call(d, [&](Backend &b) { return b.expire(key, ttl, d); });
    }
    std::optional<int64_t> incr(std::string_view key, int64_t delta, Deadline d) override {
        return call(d, [&](Backend &b) { return b.incr(key, delta, d); });
    }
    bool add(std::string_view key, std::string_view value, Ttl ttl, Deadline d) override {
        return call(d, [&](Backend &b) { return b.add(key, value, ttl, d); });
    }
    bool touch(std::string_view key, Ttl ttl, Deadline d) override {
        return call(d, [&](Backend &b) { return b.touch(key, ttl, d); });
    }
    uint64_t delete_many(const std::vector<std::string_view> &keys, Deadline d) override {
        return call(d, [&](Backend &b) { return b.delete_many(keys, d); });
    }
    void get_many(const std::vector<std::string_view> &keys, cachekit_buf *outs, std::vector<bool> &found,
                  Deadline d) override {
        read(d, [&](Backend &b) { b.get_many(keys, outs, found, d); });
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

    // L1 coherence: a feed on the current primary that follows it.
    std::unique_ptr<InvalidationFeed> watch(const WatchRequest &request) override {
        if (config_.data.l1_coherence == CoherenceMode::Off || request.handler == nullptr) return nullptr;
        ensure_watcher();
        try {
            (void)primary(Deadline::after(config_.data.connect_timeout + config_.data.command_timeout));
        } catch (const Error &) {
            // No primary yet: the feed waits (the L1 shut) until one is found.
        }
        // The feed's node settings; the host is each primary's. Until there is
        // one, the publisher's target is the first sentinel, which refuses a
        // PUBLISH on any channel but its own (announce is best effort).
        RedisConfig node = config_.data;
        node.host = config_.sentinels.front().host;
        node.port = config_.sentinels.front().port;
        std::unique_ptr<InvalidationFeed> feed = feeds_->watch(feeds_, node, request, watched_nodes());
        if (!feed) return nullptr;
        // A swap between the two lines above told the feeds before this one joined them.
        feeds_->follow([this] { return watched_nodes(); });
        return std::make_unique<SentinelFeed>(std::move(feed), node, target_);
    }

    // The Sentinel series (docs/operations.md), then the current primary's.
    std::string metrics_text() const override {
        std::shared_ptr<Backend> b;
        std::string where;
        size_t replicas = 0;
        {
            std::lock_guard<std::mutex> lock(mu_);
            b = current_;
            if (b) where = address_.text();
            replicas = replicas_.size();
        }
        bool subscribed = false;
        uint64_t heard = 0;
        {
            std::lock_guard<std::mutex> lock(watcher_mu_);
            if (watcher_ && watcher_->pid() == fork_hooks::pid()) {
                subscribed = watcher_->subscribed();
                heard = watcher_->messages();
            }
        }
        std::string out;
        auto family = [&](const char *name, const char *type, const char *help) {
            out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
        };
        family("cachekit_redis_sentinel_primary_switches_total", "counter",
               "Times the backend moved to a new primary (the first discovery not counted).");
        out += "cachekit_redis_sentinel_primary_switches_total " + std::to_string(switches_.load()) + "\n";
        family("cachekit_redis_sentinel_switch_announcements_total", "counter",
               "+switch-master messages heard for this master (each a hint to ask the sentinels again).");
        out += "cachekit_redis_sentinel_switch_announcements_total " + std::to_string(heard) + "\n";
        family("cachekit_redis_sentinel_watcher_subscribed", "gauge",
               "1 while the watcher is subscribed to a sentinel's +switch-master channel.");
        out += "cachekit_redis_sentinel_watcher_subscribed " + std::string(subscribed ? "1" : "0") + "\n";
        family("cachekit_redis_sentinel_replicas", "gauge",
               "Replicas reads go to (read_from_replicas=yes), as the last discovery listed and checked them.");
        out += "cachekit_redis_sentinel_replicas " + std::to_string(replicas) + "\n";
        family("cachekit_redis_sentinel_primary", "gauge", "The primary calls go to (1), by address; none before the first discovery.");
        if (b) out += "cachekit_redis_sentinel_primary{address=\"" + prometheus_label(where) + "\"} 1\n";
        return b ? out + b->metrics_text() : out;
    }

private:
    // One replica reads may go to, checked by the discovery that listed it.
    struct Replica {
        PrimaryAddress address;
        std::shared_ptr<Backend> backend;
    };

    // The nodes the coherence feed watches: the current primary, and the
    // replicas reads go to (a replica applies a write after its primary:
    // only its own tracking says when a read there can no longer see the
    // old value; docs/redis.md, "Reads from replicas over Sentinel").
    std::vector<cluster::NodeAddress> watched_nodes() const {
        std::lock_guard<std::mutex> lock(mu_);
        if (!current_) return {};
        std::vector<cluster::NodeAddress> out{cluster::NodeAddress{address_.host, address_.port}};
        for (const Replica &r : replicas_) out.push_back({r.address.host, r.address.port});
        return out;
    }

    // A read: on a replica, round robin, when there is one and the primary
    // is not stale; a replica that fails is left out until the next
    // discovery lists it again, and the read goes to the primary.
    template <class F>
    auto read(Deadline d, F &&f) -> decltype(f(std::declval<Backend &>())) {
        if (config_.read_from_replicas) {
            ensure_watcher();
            if (std::shared_ptr<Backend> r = replica()) {
                try {
                    return f(*r);
                } catch (const Error &e) {
                    if (!may_have_moved(e) || d.passed()) throw;
                    drop_replica(r.get());
                }
            }
        }
        return call(d, f);
    }

    // None when the list is due again (kReplicaListAge): this read goes to
    // the primary and asks the sentinels first, so replicas that joined,
    // finished their sync or left are seen within that age.
    std::shared_ptr<Backend> replica() {
        std::lock_guard<std::mutex> lock(mu_);
        if (current_ && !stale_ && SteadyClock::now() >= replicas_due_) stale_ = true;
        if (!current_ || stale_ || replicas_.empty()) return nullptr;
        return replicas_[next_replica_++ % replicas_.size()].backend;
    }

    void drop_replica(const Backend *failed) {
        std::shared_ptr<Backend> gone;  // released outside mu_ (its pool leaves fork_hooks)
        std::lock_guard<std::mutex> lock(mu_);
        for (auto it = replicas_.begin(); it != replicas_.end(); ++it)
            if (it->backend.get() == failed) {
                gone = std::move(it->backend);
                replicas_.erase(it);
                stale_ = true;  // the next call asks the sentinels again (their list too)
                break;
            }
    }

    // Under watcher_mu_. Without a thread (EAGAIN at the process's limit)
    // there is no watcher: a failed request still makes the backend ask.
    void start_watcher() {
        try {
            watcher_ = std::make_unique<SwitchWatcher>(
                config_, [this](const SwitchWatcher::Announcement &a) { return announced(a); },
                std::max(config_.rediscover_min_gap, std::chrono::milliseconds(10)));
        } catch (const std::system_error &) {
            watcher_.reset();
        }
        watcher_pid_.store(fork_hooks::pid(), std::memory_order_relaxed);
    }

    // In a forked child the watcher is the parent's (its thread is not
    // here): start one of our own, once. One relaxed load otherwise.
    void ensure_watcher() {
        if (watcher_pid_.load(std::memory_order_relaxed) == fork_hooks::pid()) [[likely]]
            return;
        std::lock_guard<std::mutex> lock(watcher_mu_);
        if (watcher_pid_.load(std::memory_order_relaxed) == fork_hooks::pid()) return;
        (void)watcher_.release();  // the parent's object: nothing of it is ours to free or join
        start_watcher();
    }

    // The watcher heard of a switch (or resubscribed): ask the sentinels,
    // the announcing one first. True when done: a discovery ran and the
    // primary is the announced address (or none was announced); false to
    // be called again (a discovery in flight or too recent, or the
    // sentinels asked still name the old primary). Whatever the message
    // names is only taken when a sentinel names it and it says ROLE master.
    bool announced(const SwitchWatcher::Announcement &a) {
        discovery_.prefer(a.sentinel);
        bool ran = false;
        try {
            (void)refresh(Deadline::after(config_.data.connect_timeout + config_.data.command_timeout * 2), &ran);
        } catch (const Error &) {
            return false;
        }
        if (!ran) return false;
        if (a.host.empty()) return true;
        std::lock_guard<std::mutex> lock(mu_);
        return address_ == PrimaryAddress{a.host, a.port};
    }

    template <class F>
    auto call(Deadline d, F &&f) -> decltype(f(std::declval<Backend &>())) {
        ensure_watcher();
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
    // *ran: whether a discovery ran (not skipped for the gap or one in flight).
    std::shared_ptr<Backend> refresh(Deadline d, bool *ran = nullptr) {
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
        if (ran != nullptr) *ran = true;
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
        // read_from_replicas: the primary's replicas, as a sentinel lists
        // them, each checked by ROLE unless already checked for this
        // primary; their backends kept when they stay. A list that cannot be
        // had keeps the old one, unless the primary changed (the old
        // replicas were the old primary's).
        std::vector<Replica> replicas;
        bool replicas_known = false;
        if (config_.read_from_replicas) {
            std::vector<Replica> before;
            {
                std::lock_guard<std::mutex> lock(mu_);
                before = replicas_;
            }
            std::vector<PrimaryAddress> trusted;
            if (!fresh)
                for (const Replica &r : before) trusted.push_back(r.address);
            try {
                for (const PrimaryAddress &a : discovery_.replicas(found, trusted, d)) {
                    auto it = std::find_if(before.begin(), before.end(), [&](const Replica &r) { return r.address == a; });
                    if (it != before.end()) {
                        replicas.push_back(*it);
                        continue;
                    }
                    RedisConfig c = config_.data;
                    c.host = a.host;
                    c.port = a.port;
                    replicas.push_back({a, open_redis(c)});
                }
                replicas_known = true;
            } catch (const Error &) {
                replicas.clear();
                replicas_known = fresh != nullptr;
            }
        }
        std::shared_ptr<Backend> now;
        bool replicas_changed = false;
        {
            std::lock_guard<std::mutex> lock(mu_);
            discovering_ = false;
            stale_ = false;
            last_error_.clear();
            replicas_due_ = SteadyClock::now() + kReplicaListAge;
            if (fresh) {
                if (current_) switches_.fetch_add(1, std::memory_order_relaxed);
                current_ = fresh;
                address_ = found;
                std::lock_guard<std::mutex> t(target_->mu);
                target_->address = found;
            }
            if (replicas_known) {
                replicas_changed = replicas.size() != replicas_.size() ||
                                   !std::equal(replicas.begin(), replicas.end(), replicas_.begin(),
                                               [](const Replica &x, const Replica &y) { return x.address == y.address; });
                replicas_.swap(replicas);  // the old list is released below, outside mu_
            }
            now = current_;
        }
        // The coherence feeds follow the new primary (the old one's session
        // stopped, the L1 shut until the new one is live) and the replicas.
        // Outside mu_: the feeds' lock comes first (watched_nodes takes mu_
        // under it).
        if (fresh || replicas_changed) feeds_->follow([this] { return watched_nodes(); });
        return now;
    }

    // Lock order: watcher_mu_ (otherwise held alone, never across a
    // wait), the feeds' (follow asks watched_nodes under it), mu_, then
    // the feeds' primary address.
    void before_fork() noexcept override {
        watcher_mu_.lock();
        feeds_->mutex().lock();
        mu_.lock();
        target_->mu.lock();
    }
    void after_fork_parent() noexcept override {
        target_->mu.unlock();
        mu_.unlock();
        feeds_->mutex().unlock();
        watcher_mu_.unlock();
    }
    void after_fork_child() noexcept override {
        discovering_ = false;  // that was a parent's thread
        target_->mu.unlock();
        mu_.unlock();
        feeds_->mutex().unlock();
        watcher_mu_.unlock();
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
    std::vector<Replica> replicas_;  // read_from_replicas: current_'s, as the last discovery found them
    std::atomic<uint64_t> next_replica_{0};
    SteadyClock::time_point replicas_due_{};  // under mu_: when replica() asks for a new list
    std::atomic<uint64_t> switches_{0};
    const std::shared_ptr<cluster::ClusterFeeds> feeds_ = std::make_shared<cluster::ClusterFeeds>();
    const std::shared_ptr<PrimaryTarget> target_ = std::make_shared<PrimaryTarget>();
    mutable std::mutex watcher_mu_;
    std::unique_ptr<SwitchWatcher> watcher_;  // null when its thread could not be started
    std::atomic<pid_t> watcher_pid_{0};       // the process watcher_ was started in
};

}  // namespace

std::unique_ptr<Backend> open_redis_sentinel(const SentinelConfig &config) {
    if (config.sentinels.empty()) fail(CACHEKIT_EINVAL, "Redis Sentinel config: no sentinel hosts");
    if (config.sentinels.size() > kSentinelMaxHosts)
        fail(CACHEKIT_EINVAL, "Redis Sentinel config: more than " + std::to_string(kSentinelMaxHosts) + " sentinels");
    if (config.master_name.empty()) fail(CACHEKIT_EINVAL, "Redis Sentinel config: no master name");
    if (config.rediscover_min_gap.count() < 0)
        fail(CACHEKIT_EINVAL, "Redis Sentinel config: rediscover_min_gap must not be negative");
    // As on a cluster: a pub/sub message is published once, by the writer,
    // with no order against a replica's apply, so only each replica's own
    // tracking keeps an L1 coherent with reads there.
    if (config.read_from_replicas && config.data.l1_coherence == CoherenceMode::Pubsub)
        fail(CACHEKIT_EINVAL, "Redis Sentinel config: l1_coherence=pubsub cannot keep an L1 coherent with "
                              "read_from_replicas=yes (a replica may apply a write after its message); use "
                              "l1_coherence=tracking or auto, or read from the primary");
    // The data settings are checked as a single node's would be, once, here.
    RedisConfig probe = config.data;
    probe.host = config.sentinels.front().host;
    probe.port = config.sentinels.front().port;
    (void)open_redis(probe);
    if (config.read_from_replicas && config.data.l1_coherence == CoherenceMode::Auto) {
        // Never the pub/sub fallback here: a node without tracking keeps the L1 shut instead.
        SentinelConfig tracked = config;
        tracked.data.l1_coherence = CoherenceMode::Tracking;
        return std::make_unique<SentinelBackend>(tracked);
    }
    return std::make_unique<SentinelBackend>(config);
}

}  // namespace cachekit::l2
