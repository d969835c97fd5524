#include "l2/cluster/cluster_invalidation.hpp"

#include <algorithm>
#include <map>
#include <string>

#include "l2/redis/feed_loop.hpp"
#include "l2/redis/feed_publisher.hpp"
#include "util/fork_hooks.hpp"

namespace cachekit::l2::cluster {

// Gate: the cache's handler is live only while every member's feed is;
// each member's suspend (its connection lost, or the member going away)
// suspends the cache at once. gate_mu_ orders the calls into the handler.
// One feed loop (feed_loop.hpp) serves every member's session: one thread
// for the whole cluster, not one per node, and one publisher.
class ClusterFeed final : public InvalidationFeed {
public:
    ClusterFeed(std::shared_ptr<ClusterFeeds> owner, const RedisConfig &node, const WatchRequest &request)
        : owner_(std::move(owner)), node_(node), request_(request), pid_(fork_hooks::pid()), publisher_(node) {}

    ~ClusterFeed() override {
        {
            std::lock_guard lock(owner_->mu_);
            auto &list = owner_->feeds_;
            list.erase(std::remove(list.begin(), list.end(), this), list.end());
        }
        std::map<std::string, std::unique_ptr<Member>> members;
        std::unique_ptr<feed::Loop> loop;
        {
            std::lock_guard lock(members_mu_);
            members.swap(members_);
            loop.swap(loop_);
        }
        for (auto &[name, member] : members) member->loop = nullptr;
        loop.reset();  // every session stopped at once, its member still there to hear it
        members.clear();
    }

    const char *mode() const noexcept override {
        std::lock_guard lock(members_mu_);
        if (members_.empty()) return "auto";
        switch (members_.begin()->second->session.decided()) {
        case CoherenceMode::Tracking: return "tracking";
        case CoherenceMode::Pubsub: return "pubsub";
        default: return "auto";
        }
    }

    // Any one node will do: Redis Cluster delivers a PUBLISH to every node.
    void announce(std::string_view cache_key) noexcept override { publisher_.announce(cache_key); }

    bool same_process() const { return pid_ == fork_hooks::pid(); }

    // Start a session for each new primary, stop those of the primaries
    // gone. The loop's thread is started with the first session; when it
    // cannot be (EAGAIN at the process's limit) the primaries stay not
    // live, so the L1 stays shut, and it is tried again at the next call
    // (every slot-map refresh); with `must_start` (the cache's own watch()
    // call) the error goes to the caller instead.
    void follow(const std::vector<NodeAddress> &primaries, bool must_start) {
        std::vector<std::unique_ptr<Member>> gone;
        auto in_map = [&](const std::string &name) {
            return std::any_of(primaries.begin(), primaries.end(), [&](const NodeAddress &a) { return a.name() == name; });
        };
        {
            std::lock_guard lock(members_mu_);
            {
                // A primary whose feed never started, gone from the map: no longer waited for.
                std::lock_guard gate(gate_mu_);
                for (auto it = live_.begin(); it != live_.end();)
                    it = in_map(it->first) || members_.count(it->first) != 0 ? std::next(it) : live_.erase(it);
            }
            for (auto it = members_.begin(); it != members_.end();) {
                const bool kept = in_map(it->first);
                if (kept) {
                    ++it;
                    continue;
                }
                {
                    std::lock_guard gate(gate_mu_);
                    live_.erase(it->first);
                }
                gone.push_back(std::move(it->second));
                it = members_.erase(it);
            }
            for (const NodeAddress &a : primaries) {
                const std::string name = a.name();
                if (members_.count(name) != 0) continue;
                {
                    // Writes on this node were unwatched until now: shut and flush the L1.
                    std::lock_guard gate(gate_mu_);
                    live_[name] = false;
                    open_ = false;
                    request_.handler->suspend();
                }
                try {
                    if (!loop_) loop_ = std::make_unique<feed::Loop>();
                    auto member = std::make_unique<Member>(*this, name);
                    RedisConfig config = node_;
                    config.host = a.host;
                    config.port = a.port;
                    WatchRequest each = request_;
                    each.handler = member.get();
                    member->loop = loop_.get();
                    member->session = loop_->add(config, each);
                    members_.emplace(name, std::move(member));
                } catch (...) {
                    if (must_start) throw;
                }
            }
            if (members_.empty()) {
                request_.handler->session_ended();  // no map yet: nothing to wait for
            } else if (const std::string &first = members_.begin()->first; first != published_to_) {
                try {
                    for (const NodeAddress &a : primaries)
                        if (a.name() == first) {
                            RedisConfig config = node_;
                            config.host = a.host;
                            config.port = a.port;
                            publisher_.retarget(config);
                            published_to_ = first;
                        }
                } catch (...) {  // the publisher keeps its node: announce is best effort
                }
            }
        }
        gone.clear();  // their sessions removed outside members_mu_ (the loop calls them under gate_mu_)
        open_if_all_live();
    }

private:
    // One primary's session and the handler it reports to.
    struct Member final : InvalidationHandler {
        Member(ClusterFeed &o, std::string n) : owner(o), name(std::move(n)) {}
        ~Member() override {
            if (loop && session.id != 0) loop->remove(session.id);
        }
        void keys_changed(const std::vector<std::string_view> &keys) noexcept override {
            owner.request_.handler->keys_changed(keys);
        }
        void cache_key_changed(std::string_view key) noexcept override { owner.request_.handler->cache_key_changed(key); }
        void namespace_changed(std::string_view ns) noexcept override { owner.request_.handler->namespace_changed(ns); }
        void suspend() noexcept override {
            std::lock_guard gate(owner.gate_mu_);
            if (auto it = owner.live_.find(name); it != owner.live_.end()) it->second = false;
            owner.open_ = false;
            owner.request_.handler->suspend();
        }
        void live() noexcept override {
            {
                std::lock_guard gate(owner.gate_mu_);
                auto it = owner.live_.find(name);
                if (it == owner.live_.end()) return;  // leaving
                it->second = true;
            }
            owner.open_if_all_live();
        }
        void session_ended() noexcept override { owner.request_.handler->session_ended(); }

        ClusterFeed &owner;
        const std::string name;
        feed::Loop *loop = nullptr;  // the owner's; null once the loop is gone
        feed::Loop::Handle session;
    };

    // live() only on the way from shut to open: it flushes the L1, and
    // follow() comes here after every slot-map refresh (refresh_ms), which
    // must not empty an L1 that nothing made stale.
    void open_if_all_live() noexcept {
        std::lock_guard gate(gate_mu_);
        if (open_ || live_.empty()) return;
        for (const auto &[name, on] : live_)
            if (!on) return;
        open_ = true;
        request_.handler->live();
    }

    const std::shared_ptr<ClusterFeeds> owner_;
    const RedisConfig node_;
    const WatchRequest request_;
    const pid_t pid_;
    feed::Publisher publisher_;
    mutable std::mutex members_mu_;  // follow / mode
    std::unique_ptr<feed::Loop> loop_;  // started with the first member
    std::map<std::string, std::unique_ptr<Member>> members_;
    std::string published_to_;  // the member publisher_ targets
    std::mutex gate_mu_;
    std::map<std::string, bool> live_;  // by node name: its feed is subscribed
    bool open_ = false;                 // under gate_mu_: live() said, no suspend() since
};

std::unique_ptr<InvalidationFeed> ClusterFeeds::watch(const std::shared_ptr<ClusterFeeds> &self, const RedisConfig &node,
                                                      const WatchRequest &request,
                                                      const std::vector<NodeAddress> &primaries) {
    if (node.l1_coherence == CoherenceMode::Off || request.handler == nullptr) return nullptr;
    auto feed = std::make_unique<ClusterFeed>(self, node, request);
    std::lock_guard lock(mu_);  // a refresh's follow() waits until this one's first
    feeds_.push_back(feed.get());
    feed->follow(primaries, true);
    return feed;
}

void ClusterFeeds::follow(const std::function<std::vector<NodeAddress>()> &primaries) {
    std::lock_guard lock(mu_);
    if (feeds_.empty()) return;
    const std::vector<NodeAddress> now = primaries();
    for (ClusterFeed *feed : feeds_)
        if (feed->same_process()) feed->follow(now, false);  // a forked child's copies of the parent's: left alone
}

}  // namespace cachekit::l2::cluster
