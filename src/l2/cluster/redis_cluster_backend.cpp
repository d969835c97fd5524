// The Redis Cluster backend (see redis_cluster_backend.hpp).
//
// Routing: a key's slot (cluster_slots) indexes the current View: the slot
// map plus the Node of every shard's primary and replicas. A View is
// immutable and swapped whole (a refresh, or a MOVED fixing one slot), so a
// call reads it through one shared_ptr copy. A node (one per address,
// however spelled: cluster::canonical_name) lives while the map names it, its
// pool reused across refreshes; one the map drops goes with the last view or
// call that holds it.
//
// What a node may make the client spend is bounded: a map over the limits
// of cluster_topology.hpp, or naming one address twice, is refused (the
// previous one stays); a redirect to an address the map does not name is
// followed only once a refresh confirms it (MOVED: the fresh map gives it
// the slot; ASK: the fresh map names it), so a hostile node can neither
// make new nodes nor have the password sent where it likes.
//
// One exchange = one connection of one node: the commands are written in one
// go (after ASKING for an ASK redirect, after READONLY on a replica) and
// every reply is read. The first redirected reply decides (a multi-command
// exchange is reads only, so it can run again): MOVED -> fix the slot, ask
// for a refresh, go to the named node; ASK -> the named node, this time
// only; TRYAGAIN / CLUSTERDOWN / LOADING -> wait (10 ms doubling, within
// the deadline) and go again. From the third redirect of a call on, the
// same wait before each hop (nodes that disagree mid-reshard bounce a key
// between them for a moment). At most kMaxRedirects hops.
//
// A node's failure (I/O, timeout) is its breaker's failure and a KeyFault
// for the call (the outer ResilientBackend does not count it against the
// whole cluster: fail-open callers get a miss, fail-closed ones the error),
// and it wakes the refresher, which finds a promoted replica.
#include "l2/cluster/redis_cluster_backend.hpp"

#include <sodium.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <system_error>
#include <thread>

#include "codec/crypto.hpp"
#include "l2/cluster/cluster_invalidation.hpp"
#include "l2/cluster/cluster_node.hpp"
#include "l2/cluster/cluster_slots.hpp"
#include "l2/cluster/cluster_topology.hpp"
#include "l2/key_fault.hpp"
#include "l2/redis/redis_args.hpp"
#include "l2/redis/redis_node.hpp"
#include "l2/redis/redis_replies.hpp"
#include "util/error.hpp"
#include "util/fork_hooks.hpp"
#include "util/prometheus_label.hpp"

namespace cachekit::l2 {
namespace {

using cluster::is_node_failure;
using cluster::Node;
using cluster::NodeAddress;
using cluster::NodeCall;
using cluster::NodePtr;
using cluster::Redirect;
using cluster::redirect_of;
using redis_replies::Reply;
using std::chrono::milliseconds;

constexpr int kMaxRedirects = 16;
constexpr size_t kPipelineChunk = 1000;
constexpr std::string_view kScanCount = "1000";
constexpr uint32_t kScanMaxKeys = 100000;
constexpr uint32_t kTopologyMaxElements = 1u << 16;
constexpr std::string_view kUnlockScript =
    "if redis.call(\"get\",KEYS[1]) == ARGV[1] then return redis.call(\"del\",KEYS[1]) else return 0 end";
constexpr std::string_view kUnlockSha = "b70c2384248f88e6b75b9f89241a180f856ad852";

inline const char *data_or_empty(std::string_view text) { return text.data() ? text.data() : ""; }

// One command: arguments owned by the caller.
struct Cmd {
    int argc;
    const char *const *argv;
    const size_t *lens;
    const char *what;
};

struct View {
    cluster::Topology topology;
    std::vector<NodePtr> primaries;             // per shard
    std::vector<std::vector<NodePtr>> replicas;  // per shard
};

class ClusterBackend final : public Backend, private fork_hooks::Participant {
public:
    explicit ClusterBackend(const ClusterConfig &config) : config_(config), view_(std::make_shared<View>()) {
        fork_hooks::join(this);
        try {
            refresh(Deadline::after(config_.node.connect_timeout + config_.node.command_timeout));
        } catch (const Error &) {
            // No seed answered: open anyway (like the single-node backend, which connects lazily);
            // calls fail until a refresh succeeds.
        }
        try {
            refresher_ = std::thread([this] { refresh_loop(); });
        } catch (const std::system_error &e) {
            fork_hooks::leave(this);  // the destructor will not run
            fail(CACHEKIT_ENOMEM, std::string("redis cluster: cannot start the slot-map refresher thread: ") + e.what());
        }
    }

    ~ClusterBackend() override {
        {
            std::lock_guard<std::mutex> lock(refresh_mu_);
            stopping_ = true;
        }
        refresh_cv_.notify_all();
        if (refresher_.joinable()) {
            if (refresher_pid_.load() == fork_hooks::pid())
                refresher_.join();
            else
                new std::thread(std::move(refresher_));  // a forked child's copy of the parent's thread: never joined
        }
        fork_hooks::leave(this);
    }

    const char *kind() const noexcept override { return "redis-cluster"; }

    bool get(std::string_view key, cachekit_buf *out, Deadline deadline) override {
        const char *argv[] = {"GET", data_or_empty(key)};
        const size_t lens[] = {3, key.size()};
        const Cmd cmd{2, argv, lens, "GET"};
        return key_call(key, true, &cmd, 1, deadline, [&](std::vector<Reply> &r, const std::string &where) {
            return redis_replies::value(*r[0], out, where);
        });
    }

    bool get_with_ttl(std::string_view key, cachekit_buf *out, Ttl *remaining, Deadline deadline) override {
        const char *get_argv[] = {"GET", data_or_empty(key)};
        const char *pttl_argv[] = {"PTTL", data_or_empty(key)};
        const size_t get_lens[] = {3, key.size()}, pttl_lens[] = {4, key.size()};
        const Cmd cmds[] = {{2, get_argv, get_lens, "GET"}, {2, pttl_argv, pttl_lens, "PTTL"}};
        return key_call(key, true, cmds, 2, deadline, [&](std::vector<Reply> &r, const std::string &where) {
            if (!redis_replies::value(*r[0], out, where)) return false;
            std::optional<Ttl> t = redis_replies::pttl(*r[1], where);
            *remaining = t ? *t : Ttl{milliseconds(0)};
            return true;
        });
    }

    void set(std::string_view key, std::string_view value, Ttl ttl, Deadline deadline) override {
        char ms[24];
        const size_t ms_len = redis_args::px_milliseconds(ttl, ms);
        const char *argv[] = {"SET", data_or_empty(key), data_or_empty(value), "PX", ms};
        const size_t lens[] = {3, key.size(), value.size(), 2, ms_len};
        const Cmd cmd{ttl ? 5 : 3, argv, lens, "SET"};
        key_call(key, false, &cmd, 1, deadline, [&](std::vector<Reply> &r, const std::string &where) {
            redis_replies::expect_ok(*r[0], where, "SET");
            return true;
        });
    }

    bool del(std::string_view key, Deadline deadline) override { return integer_call("UNLINK", key, false, deadline) > 0; }
    bool exists(std::string_view key, Deadline deadline) override { return integer_call("EXISTS", key, true, deadline) > 0; }

    // refresh_ttl_on_get: PEXPIRE on the key's own node.
    bool expire(std::string_view key, milliseconds ttl, Deadline deadline) override {
        char ms[24];
        const size_t ms_len = redis_args::px_milliseconds(Ttl(ttl), ms);
        const char *argv[] = {"PEXPIRE", data_or_empty(key), ms};
        const size_t lens[] = {7, key.size(), ms_len};
        const Cmd cmd{3, argv, lens, "PEXPIRE"};
        return key_call(key, false, &cmd, 1, deadline, [&](std::vector<Reply> &r, const std::string &where) {
            return redis_replies::integer(*r[0], where, "PEXPIRE") > 0;
        });
    }

    // The increment script on the key's node (redis_args::kIncrScript), by
    // SHA; EVAL when that node's script cache lacks it.
    std::optional<int64_t> incr(std::string_view key, int64_t delta, Deadline deadline) override {
        char by[24];
        const size_t by_len = redis_args::decimal(delta, by);
        const char *argv[] = {"EVALSHA", redis_args::kIncrSha.data(), "1", data_or_empty(key), by};
        const size_t lens[] = {7, redis_args::kIncrSha.size(), 1, key.size(), by_len};
        const Cmd cmd{5, argv, lens, "EVALSHA"};
        using Answer = std::optional<std::optional<int64_t>>;  // outer nullopt: NOSCRIPT
        Answer answer = key_call(key, false, &cmd, 1, deadline, [&](std::vector<Reply> &r, const std::string &where) {
            if (redis_replies::is_noscript(*r[0])) return Answer();
            return Answer(redis_replies::incremented(*r[0], where));
        });
        if (answer) return *answer;
        const char *eval_argv[] = {"EVAL", redis_args::kIncrScript.data(), "1", data_or_empty(key), by};
        const size_t eval_lens[] = {4, redis_args::kIncrScript.size(), 1, key.size(), by_len};
        const Cmd eval{5, eval_argv, eval_lens, "EVAL"};
        return key_call(key, false, &eval, 1, deadline, [&](std::vector<Reply> &r, const std::string &where) {
            return redis_replies::incremented(*r[0], where);
        });
    }

    bool add(std::string_view key, std::string_view value, Ttl ttl, Deadline deadline) override {
        char ms[24];
        const size_t ms_len = redis_args::px_milliseconds(ttl, ms);
        const char *argv[] = {"SET", data_or_empty(key), data_or_empty(value), "NX", "PX", ms};
        const size_t lens[] = {3, key.size(), value.size(), 2, 2, ms_len};
        const Cmd cmd{ttl ? 6 : 4, argv, lens, "SET NX"};
        return key_call(key, false, &cmd, 1, deadline, [&](std::vector<Reply> &r, const std::string &where) {
            return redis_replies::added(*r[0], where);
        });
    }

    // PEXPIRE; for no expiry PERSIST + EXISTS in one exchange on the key's node.
    bool touch(std::string_view key, Ttl ttl, Deadline deadline) override {
        if (ttl) return expire(key, *ttl, deadline);
        const char *persist_argv[] = {"PERSIST", data_or_empty(key)};
        const char *exists_argv[] = {"EXISTS", data_or_empty(key)};
        const size_t persist_lens[] = {7, key.size()}, exists_lens[] = {6, key.size()};
        const Cmd cmds[] = {{2, persist_argv, persist_lens, "PERSIST"}, {2, exists_argv, exists_lens, "EXISTS"}};
        return key_call(key, false, cmds, 2, deadline, [&](std::vector<Reply> &r, const std::string &where) {
            redis_replies::integer(*r[0], where, "PERSIST");
            return redis_replies::integer(*r[1], where, "EXISTS") > 0;
        });
    }

    // One UNLINK per hash slot (a command's keys must share one) of at most
    // kPipelineChunk keys, every node's written before any reply is read; a
    // redirected group goes again alone where its slot now lives.
    uint64_t delete_many(const std::vector<std::string_view> &keys, Deadline deadline) override {
        if (keys.empty()) return 0;
        std::map<uint16_t, std::vector<std::string_view>> by_slot;
        for (std::string_view key : keys) by_slot[cluster::key_slot(key)].push_back(key);
        std::vector<std::vector<std::string_view>> groups;
        for (auto &slot_keys : by_slot) {
            const std::vector<std::string_view> &ks = slot_keys.second;
            for (size_t begin = 0; begin < ks.size(); begin += kPipelineChunk)
                groups.emplace_back(ks.begin() + static_cast<std::ptrdiff_t>(begin),
                                    ks.begin() + static_cast<std::ptrdiff_t>(std::min(ks.size(), begin + kPipelineChunk)));
        }
        std::vector<uint64_t> counts(groups.size(), 0);
        std::vector<const char *> argv;
        std::vector<size_t> lens;
        auto command_of = [&](size_t g) {
            argv.assign(1, "UNLINK");
            lens.assign(1, 6);
            for (std::string_view key : groups[g]) {
                argv.push_back(data_or_empty(key));
                lens.push_back(key.size());
            }
            return Cmd{static_cast<int>(argv.size()), argv.data(), lens.data(), "UNLINK"};
        };
        auto count_of = [](const redisReply &reply, const std::string &where) {
            const long long n = redis_replies::integer(reply, where, "UNLINK");
            return n > 0 ? static_cast<uint64_t>(n) : uint64_t(0);
        };
        batch(
            groups.size(), false, deadline, [&](size_t g) { return groups[g].front(); },
            [&](size_t g, RedisSession &s) {
                const Cmd cmd = command_of(g);
                s.append(cmd.argc, cmd.argv, cmd.lens);
            },
            [&](size_t g, const redisReply &reply, const std::string &where) {
                if (reply.type == REDIS_REPLY_ERROR) return false;
                counts[g] = count_of(reply, where);
                return true;
            },
            [&](size_t g, Deadline d) {
                const Cmd cmd = command_of(g);
                counts[g] = key_call(groups[g].front(), false, &cmd, 1, d,
                                     [&](std::vector<Reply> &r, const std::string &where) { return count_of(*r[0], where); });
            });
        uint64_t deleted = 0;
        for (uint64_t n : counts) deleted += n;
        return deleted;
    }

    std::optional<Ttl> ttl(std::string_view key, Deadline deadline) override {
        const char *argv[] = {"PTTL", data_or_empty(key)};
        const size_t lens[] = {4, key.size()};
        const Cmd cmd{2, argv, lens, "PTTL"};
        return key_call(key, true, &cmd, 1, deadline, [&](std::vector<Reply> &r, const std::string &where) {
            return redis_replies::pttl(*r[0], where);
        });
    }

    void get_many(const std::vector<std::string_view> &keys, cachekit_buf *outs, std::vector<bool> &found,
                  Deadline deadline) override {
        found.assign(keys.size(), false);
        if (keys.empty()) return;
        if (outs == nullptr) fail(CACHEKIT_EINVAL, "get_many: no output buffers");
        batch(
            keys.size(), true, deadline, [&](size_t i) { return keys[i]; },
            [&](size_t i, RedisSession &s) {
                const char *argv[] = {"GET", data_or_empty(keys[i])};
                const size_t lens[] = {3, keys[i].size()};
                s.append(2, argv, lens);
            },
            [&](size_t i, const redisReply &reply, const std::string &where) {
                if (reply.type == REDIS_REPLY_ERROR) return false;
                found[i] = redis_replies::value(reply, &outs[i], where);
                return true;
            },
            [&](size_t i, Deadline d) { found[i] = get(keys[i], &outs[i], d); });
    }

    void set_many(const std::vector<KeyValue> &entries, Ttl ttl, Deadline deadline) override {
        if (entries.empty()) return;
        char ms[24];
        const size_t ms_len = redis_args::px_milliseconds(ttl, ms);
        const int argc = ttl ? 5 : 3;
        batch(
            entries.size(), false, deadline, [&](size_t i) { return entries[i].key; },
            [&](size_t i, RedisSession &s) {
                const KeyValue &kv = entries[i];
                const char *argv[] = {"SET", data_or_empty(kv.key), data_or_empty(kv.value), "PX", ms};
                const size_t lens[] = {3, kv.key.size(), kv.value.size(), 2, ms_len};
                s.append(argc, argv, lens);
            },
            [&](size_t, const redisReply &reply, const std::string &where) {
                if (reply.type == REDIS_REPLY_ERROR) return false;
                redis_replies::expect_ok(reply, where, "SET");
                return true;
            },
            [&](size_t i, Deadline d) { set(entries[i].key, entries[i].value, ttl, d); });
    }

    // SCAN + UNLINK on every primary, one after the other. UNLINK takes one
    // key per command (keys of one node may lie in different slots).
    uint64_t clear(const KeySelection &which, Deadline deadline) override {
        std::shared_ptr<const View> view = current_view(deadline);
        if (view->primaries.empty()) fail(CACHEKIT_EBACKEND, "redis cluster: " + no_map_reason());
        const std::string pattern = glob_escape(which.prefix) + which.glob;
        uint64_t deleted = 0;
        std::vector<NodePtr> done;
        for (const NodePtr &node : view->primaries) {
            if (std::find(done.begin(), done.end(), node) != done.end()) continue;
            done.push_back(node);
            deleted += clear_node(*node, which, pattern, deadline);
        }
        return deleted;
    }

    std::optional<std::string> lock(std::string_view name, milliseconds hold, Deadline deadline) override {
        if (hold.count() <= 0) fail(CACHEKIT_EINVAL, "lock: the hold time must be positive");
        const std::string token = redis_args::new_lock_token();
        char ms[24];
        const size_t ms_len = redis_args::px_milliseconds(Ttl(hold), ms);
        // In the slot of the key it guards (cluster_slots.hpp lock_key).
        const std::string stored = cluster::lock_key(name);
        const char *argv[] = {"SET", stored.c_str(), token.c_str(), "NX", "PX", ms};
        const size_t lens[] = {3, stored.size(), token.size(), 2, 2, ms_len};
        const Cmd cmd{6, argv, lens, "SET NX"};
        const bool taken = key_call(stored, false, &cmd, 1, deadline, [&](std::vector<Reply> &r, const std::string &where) {
            return redis_replies::lock_taken(*r[0], where);
        });
        if (!taken) return std::nullopt;
        return token;
    }

    bool unlock(std::string_view lock_name, std::string_view token, Deadline deadline) override {
        const std::string stored = cluster::lock_key(lock_name);
        const std::string_view name = stored;
        const char *argv[] = {"EVALSHA", kUnlockSha.data(), "1", data_or_empty(name), data_or_empty(token)};
        const size_t lens[] = {7, kUnlockSha.size(), 1, name.size(), token.size()};
        const Cmd cmd{5, argv, lens, "EVALSHA"};
        std::optional<bool> answer =
            key_call(name, false, &cmd, 1, deadline, [&](std::vector<Reply> &r, const std::string &where) {
                if (redis_replies::is_noscript(*r[0])) return std::optional<bool>();
                return std::optional<bool>(redis_replies::unlocked(*r[0], where));
            });
        if (answer) return *answer;
        // Not in that node's script cache: EVAL caches it.
        const char *eval_argv[] = {"EVAL", kUnlockScript.data(), "1", data_or_empty(name), data_or_empty(token)};
        const size_t eval_lens[] = {4, kUnlockScript.size(), 1, name.size(), token.size()};
        const Cmd eval{5, eval_argv, eval_lens, "EVAL"};
        return key_call(name, false, &eval, 1, deadline, [&](std::vector<Reply> &r, const std::string &where) {
            return redis_replies::unlocked(*r[0], where);
        });
    }

    // PING every node of the map: ok when every primary answers; the detail
    // names each node; the latency is the slowest primary's. The pings share
    // the call's deadline, so the nodes known down go last: a hung node must
    // not eat the time of the live ones. A node left with no time (or with
    // less than half a command timeout, and timing out) is "not reached":
    // neither up nor down for its monitor. Each PING feeds its node's
    // monitor; nodes down while others answer make the result `partial`.
    Health health(Deadline deadline) override {
        std::shared_ptr<const View> view = current_view(deadline);
        Health health;
        if (view->primaries.empty()) {
            health.detail = "redis cluster: " + no_map_reason();
            return health;
        }
        health.ok = view->topology.covered_slots() == cluster::kSlots;
        struct Probe {
            NodePtr node;
            bool primary;
            std::string state;
        };
        std::vector<Probe> probes;  // in map order, for the detail
        for (size_t s = 0; s < view->primaries.size(); ++s) {
            probes.push_back({view->primaries[s], true, {}});
            for (const NodePtr &r : view->replicas[s]) probes.push_back({r, false, {}});
        }
        std::vector<Probe *> order;
        for (Probe &p : probes) order.push_back(&p);
        std::stable_partition(order.begin(), order.end(), [](const Probe *p) { return !p->node->monitor.down(); });
        size_t primaries_ok = 0, replicas_ok = 0, replicas = 0, nodes_down = 0, unreached = 0;
        for (Probe *p : order) {
            Node &node = *p->node;
            replicas += !p->primary;
            const auto left = deadline.remaining();
            if (left.count() <= 0) {
                if (p->primary) health.ok = false;
                ++unreached;
                p->state = "not reached (no time left)";
                continue;
            }
            try {
                RedisSession session(node.redis, deadline);
                const char *argv[] = {"PING"};
                const size_t lens[] = {4};
                const auto start = SteadyClock::now();
                session.append(1, argv, lens);
                Reply reply = session.next("PING", deadline);
                const double ms = std::chrono::duration<double, std::milli>(SteadyClock::now() - start).count();
                redis_replies::expect_pong(*reply, session.where());
                node.monitor.succeeded();
                if (p->primary) health.latency_ms = std::max(health.latency_ms, ms);
                (p->primary ? primaries_ok : replicas_ok) += 1;
                char text[32];
                std::snprintf(text, sizeof text, "ok %.2f ms", ms);
                p->state = text;
            } catch (const Error &e) {
                if (p->primary) health.ok = false;
                if (e.code() == CACHEKIT_ETIMEOUT && left < config_.node.command_timeout / 2) {
                    ++unreached;
                    p->state = std::string("not reached (") + e.what() + ")";
                    continue;
                }
                ++nodes_down;
                node.monitor.failed(e.what());
                p->state = std::string("down (") + e.what() + ")";
            }
        }
        std::string detail;
        for (const Probe &p : probes)
            detail += (detail.empty() ? "" : "; ") + std::string(p.primary ? "primary " : "replica ") +
                      p.node->address.name() + " " + p.state;
        health.detail = "redis cluster: " + std::to_string(primaries_ok) + "/" + std::to_string(view->primaries.size()) +
                        " primaries, " + std::to_string(replicas_ok) + "/" + std::to_string(replicas) +
                        " replicas answer, " + std::to_string(view->topology.covered_slots()) + "/16384 slots covered; " +
                        detail;
        // Some nodes down, the others answering (or not reached) and every
        // slot with a primary: each down node's monitor has logged it; the
        // cluster itself is not down.
        health.partial = !health.ok && nodes_down > 0 && (primaries_ok > 0 || unreached > 0) &&
                         view->topology.covered_slots() == cluster::kSlots;
        return health;
    }

    // The nodes of the map that are down (their last call failed): the one
    // that failed last, named in the last error, with how many more.
    std::optional<HealthSnapshot> down_part() const override {
        std::shared_ptr<const View> v = view();
        std::vector<const Node *> nodes;
        for (size_t s = 0; s < v->primaries.size(); ++s) {
            nodes.push_back(v->primaries[s].get());
            for (const NodePtr &r : v->replicas[s]) nodes.push_back(r.get());
        }
        std::sort(nodes.begin(), nodes.end());
        nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
        std::optional<HealthSnapshot> worst;
        std::string name;
        size_t down = 0;
        for (const Node *node : nodes) {
            HealthSnapshot h = node->monitor.snapshot();
            if (!h.down) continue;
            ++down;
            if (!worst || h.last_error_at > worst->last_error_at) {
                worst = std::move(h);
                name = node->address.name();
            }
        }
        if (worst) {
            worst->last_error = "node " + name + ": " + worst->last_error;
            if (down > 1) worst->last_error += " (" + std::to_string(down - 1) + " more nodes down)";
        }
        return worst;
    }

    // L1 coherence: one invalidation feed per primary (cluster_invalidation.hpp).
    std::unique_ptr<InvalidationFeed> watch(const WatchRequest &request) override {
        return feeds_->watch(feeds_, config_.node, request,
                             watched_nodes_of(*current_view(Deadline::after(config_.node.connect_timeout))));
    }

    // Redirects, retries, slot map refreshes, and every known node's breaker.
    std::string metrics_text() const override {
        std::string out;
        auto counter = [&](const char *name, const char *help, const std::string &labels, uint64_t v, bool header) {
            if (header) out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " counter\n";
            out += std::string(name) + labels + " " + std::to_string(v) + "\n";
        };
        const char *redirects = "cachekit_redis_cluster_redirects_total";
        counter(redirects, "MOVED and ASK replies followed.", "{kind=\"moved\"}", moved_.load(), true);
        counter(redirects, "", "{kind=\"ask\"}", asked_.load(), false);
        counter("cachekit_redis_cluster_retries_total", "TRYAGAIN / CLUSTERDOWN / LOADING replies waited out and retried.",
                "", retried_.load(), true);
        counter("cachekit_redis_cluster_topology_refreshes_total", "Slot maps read and installed.", "", refreshes_.load(),
                true);
        std::vector<std::pair<NodePtr, const char *>> nodes;
        {
            std::shared_ptr<const View> v = view();
            for (size_t s = 0; s < v->primaries.size(); ++s) {
                nodes.push_back({v->primaries[s], "primary"});
                for (const NodePtr &r : v->replicas[s]) nodes.push_back({r, "replica"});
            }
        }
        out += "# HELP cachekit_redis_cluster_node_breaker_state Each node's circuit breaker: 0 closed, 1 open, 2 "
               "half-open.\n# TYPE cachekit_redis_cluster_node_breaker_state gauge\n";
        std::vector<std::string> seen;
        for (const auto &[node, role] : nodes) {
            const std::string name = node->address.name();
            if (std::find(seen.begin(), seen.end(), name) != seen.end()) continue;
            seen.push_back(name);
            out += "cachekit_redis_cluster_node_breaker_state{node=\"" + prometheus_label(name) + "\",role=\"" + role + "\"} " +
                   std::to_string(static_cast<int>(node->breaker.state())) + "\n";
        }
        return out;
    }

private:
    // The nodes whose reads can fill an L1, so the nodes whose changes the
    // feeds must hear: every primary, and with read_from_replicas every
    // replica too. A replica applies a write later than its primary; the
    // primary's message alone would let a read of the replica, made after
    // that message, pin the old value in L1. The replica's own tracking
    // reports the write when the replica applies it, so such a fill is
    // dropped then (docs/redis.md, "Reads from replicas and L1 coherence").
    std::vector<NodeAddress> watched_nodes_of(const View &v) const {
        std::vector<NodeAddress> out;
        for (const NodePtr &p : v.primaries) out.push_back(p->address);
        if (config_.read_from_replicas)
            for (const auto &list : v.replicas)
                for (const NodePtr &r : list) out.push_back(r->address);
        return out;
    }

    // The feeds follow every new view's nodes.
    void view_changed() {
        feeds_->follow([this] { return watched_nodes_of(*view()); });
    }

    // ---- routing -------------------------------------------------------

    std::shared_ptr<const View> view() const {
        std::lock_guard<std::mutex> lock(view_mu_);
        return view_;
    }

    // The view, refreshed inline first when it is empty (no seed answered yet).
    std::shared_ptr<const View> current_view(Deadline deadline) {
        if (refresher_pid_.load(std::memory_order_relaxed) != fork_hooks::pid()) [[unlikely]]
            restart_refresher();
        std::shared_ptr<const View> v = view();
        if (v->primaries.empty()) {
            try {
                refresh(deadline);
            } catch (const Error &) {
            }
            v = view();
        }
        return v;
    }

    // A node joins the fork hooks (its breaker, backpressure, monitor), so it
    // is made outside nodes_mu_: the forking thread holds the hooks' list
    // while it takes nodes_mu_ (fork_hooks.hpp lock order).
    NodePtr node_for(const NodeAddress &address) {
        const std::string key = cluster::canonical_name(address);
        {
            std::lock_guard<std::mutex> lock(nodes_mu_);
            auto it = nodes_.find(key);
            if (it != nodes_.end()) return it->second;
        }
        RedisConfig config = config_.node;
        config.host = address.host;
        config.port = address.port;
        config.unix_path.clear();
        config.db = 0;
        NodePtr fresh = std::make_shared<Node>(address, config, config_.node_resilience, config_.label);
        NodePtr node;
        {
            std::lock_guard<std::mutex> lock(nodes_mu_);
            node = nodes_.emplace(key, fresh).first->second;  // another thread's, if it made one first
        }
        return node;  // `fresh`, if unused, goes here, outside the lock
    }

    // The node of `v` at `address` (in any spelling): a primary, a replica or
    // a spare (a primary serving no slot yet); nullptr when `v` does not name it.
    NodePtr named_node(const View &v, const NodeAddress &address) {
        const std::string key = cluster::canonical_name(address);
        for (size_t s = 0; s < v.primaries.size(); ++s) {
            if (v.primaries[s]->canonical == key) return v.primaries[s];
            for (const NodePtr &r : v.replicas[s])
                if (r->canonical == key) return r;
        }
        for (const NodeAddress &spare : v.topology.spares)
            if (cluster::canonical_name(spare) == key) return node_for(spare);
        return nullptr;
    }

    // A redirect from `from` to `to`, an address the map does not name: the
    // slot map is read again (from `from` first: a node says MOVED once its
    // own map has changed) and the target is followed only if the fresh map
    // gives it the slot (MOVED) or names it at all (ASK). nullptr: not
    // confirmed (*refresh_error: why no map could be read, if so).
    NodePtr confirmed_by_refresh(const Node &from, const NodeAddress &to, uint16_t slot, bool moved, Deadline deadline,
                                 std::string *refresh_error) {
        try {
            refresh(deadline, &from.address);
        } catch (const Error &e) {
            *refresh_error = e.what();
            return nullptr;
        }
        std::shared_ptr<const View> v = view();
        if (!moved) return named_node(*v, to);
        const int16_t shard = v->topology.slot_shard[slot];
        if (shard < 0 || v->primaries[static_cast<size_t>(shard)]->canonical != cluster::canonical_name(to)) return nullptr;
        return v->primaries[static_cast<size_t>(shard)];
    }

    static std::string unconfirmed(const Node &from, const char *what, const redisReply &reply, bool moved,
                                   const std::string &refresh_error) {
        const std::string_view said = redis_replies::text(reply).substr(0, 200);  // a hostile node's text, bounded
        return from.redis.where() + ": " + what + ": answered " + std::string(said) +
               ", naming a node the slot map does not " + (moved ? "give that slot to" : "name") +
               (refresh_error.empty() ? " (read again just now)" : " (" + refresh_error + ")") + ": not followed";
    }

    // The node for a slot: its primary, or for a read with read_from_replicas one of its replicas.
    NodePtr route(uint16_t slot, bool read, Deadline deadline, bool *replica) {
        std::shared_ptr<const View> v = current_view(deadline);
        const int16_t shard = v->topology.slot_shard[slot];
        if (shard < 0) {
            request_refresh();
            // No map yet and the call's time spent asking for one (nodes that
            // do not answer): a timeout, as on one server.
            const bool out_of_time = v->primaries.empty() && deadline.remaining().count() == 0;
            fail(out_of_time ? CACHEKIT_ETIMEOUT : CACHEKIT_EBACKEND,
                 "redis cluster: no node serves slot " + std::to_string(slot) +
                     (v->primaries.empty() ? ": " + no_map_reason() : ""));
        }
        return pick(*v, static_cast<size_t>(shard), read, replica);
    }

    // A shard's primary, or for a read with read_from_replicas the next of its
    // replicas (round robin) whose breaker is not open.
    NodePtr pick(const View &v, size_t shard, bool read, bool *replica) {
        *replica = false;
        if (read && config_.read_from_replicas && !v.replicas[shard].empty()) {
            const auto &list = v.replicas[shard];
            const NodePtr &node = list[next_replica_.fetch_add(1, std::memory_order_relaxed) % list.size()];
            if (!node->breaker_enabled || node->breaker.state() != CircuitBreaker::State::Open) {
                *replica = true;
                return node;
            }
        }
        return v.primaries[shard];
    }

    // ---- one key -------------------------------------------------------

    // Run `cmds` (all on `key`) where the key lives, following redirects;
    // `parse` maps the replies (the first one having been no redirect).
    template <class Parse>
    auto key_call(std::string_view key, bool read, const Cmd *cmds, size_t n, Deadline deadline, Parse &&parse)
        -> decltype(parse(std::declval<std::vector<Reply> &>(), std::declval<const std::string &>())) {
        const uint16_t slot = cluster::key_slot(key);
        bool replica = false;
        NodePtr node = route(slot, read, deadline, &replica);
        bool asking = false;
        milliseconds backoff{10};
        std::vector<Reply> replies;
        for (int hop = 0;; ++hop) {
            exchange(*node, cmds, n, asking, replica, deadline, replies);
            uint16_t to_slot = 0;
            NodeAddress to;
            // The first redirected reply decides: a slot can move between two
            // commands of one exchange (GET answered, then PTTL MOVED during a
            // reshard); such exchanges are reads, run again where the key is.
            size_t at = 0;
            Redirect redirect = Redirect::None;
            while (at < replies.size() && (redirect = redirect_of(*replies[at], &to_slot, &to)) == Redirect::None) ++at;
            switch (redirect) {
            case Redirect::None:
                return parse(replies, node->redis.where());
            case Redirect::Moved: {
                NodePtr target = named_node(*view(), to);
                std::string refresh_error;
                if (target) {
                    fix_slot(to_slot, target);
                } else if (!(target = confirmed_by_refresh(*node, to, to_slot, true, deadline, &refresh_error))) {
                    fail_key(CACHEKIT_EBACKEND, unconfirmed(*node, cmds[0].what, *replies[at], true, refresh_error));
                }
                moved_.fetch_add(1, std::memory_order_relaxed);
                node = std::move(target);
                asking = replica = false;
                break;
            }
            case Redirect::Ask: {
                NodePtr target = named_node(*view(), to);
                std::string refresh_error;
                if (!target && !(target = confirmed_by_refresh(*node, to, to_slot, false, deadline, &refresh_error)))
                    fail_key(CACHEKIT_EBACKEND, unconfirmed(*node, cmds[0].what, *replies[at], false, refresh_error));
                asked_.fetch_add(1, std::memory_order_relaxed);
                node = std::move(target);
                asking = true;
                replica = false;
                break;
            }
            case Redirect::Retry:
                retried_.fetch_add(1, std::memory_order_relaxed);
                if (deadline.remaining() <= backoff)
                    fail_key(CACHEKIT_ETIMEOUT, node->redis.where() + ": " + cmds[0].what + ": " +
                                                    std::string(redis_replies::text(*replies[at])) +
                                                    " until the deadline");
                std::this_thread::sleep_for(backoff);
                backoff = std::min(backoff * 2, milliseconds(200));
                request_refresh();
                node = route(slot, read, deadline, &replica);
                asking = false;
                break;
            }
            // Redirected again and again: the nodes disagree for a moment (a
            // reshard between its SETSLOTs: the source already names the
            // target, the target, still importing, names the source). Wait for
            // them to agree, within the deadline, instead of bouncing.
            if (redirect != Redirect::Retry && hop >= 2) {
                if (deadline.remaining() <= backoff)
                    fail_key(CACHEKIT_ETIMEOUT, "redis cluster: " + std::string(cmds[0].what) + ": slot " +
                                                    std::to_string(slot) +
                                                    " still redirected between nodes at the deadline");
                std::this_thread::sleep_for(backoff);
                backoff = std::min(backoff * 2, milliseconds(200));
            }
            if (hop + 1 >= kMaxRedirects)
                fail_key(CACHEKIT_EBACKEND, "redis cluster: " + std::string(cmds[0].what) + ": more than " +
                                                std::to_string(kMaxRedirects) + " redirects for slot " +
                                                std::to_string(slot));
        }
    }

    long long integer_call(const char *name, std::string_view key, bool read, Deadline deadline) {
        const char *argv[] = {name, data_or_empty(key)};
        const size_t lens[] = {std::strlen(name), key.size()};
        const Cmd cmd{2, argv, lens, name};
        return key_call(key, read, &cmd, 1, deadline, [&](std::vector<Reply> &r, const std::string &where) {
            return redis_replies::integer(*r[0], where, name);
        });
    }

    // Send cmds to one node on one connection and read all their replies
    // (the prefix ASKING / READONLY replies are read and dropped).
    void exchange(Node &node, const Cmd *cmds, size_t n, bool asking, bool replica, Deadline deadline,
                  std::vector<Reply> &replies) {
        NodeCall call(node);
        replies.clear();
        try {
            RedisSession session(node.redis, deadline);
            static const char *const kAsking[] = {"ASKING"};
            static const char *const kReadonly[] = {"READONLY"};
            static const size_t kAskingLen[] = {6}, kReadonlyLen[] = {8};
            if (asking) session.append(1, kAsking, kAskingLen);
            if (replica) session.append(1, kReadonly, kReadonlyLen);
            for (size_t i = 0; i < n; ++i) session.append(cmds[i].argc, cmds[i].argv, cmds[i].lens);
            if (asking) session.next("ASKING", deadline);
            if (replica) session.next("READONLY", deadline);
            for (size_t i = 0; i < n; ++i) replies.push_back(session.next(cmds[i].what, deadline));
        } catch (const KeyFault &) {
            throw;
        } catch (const Error &e) {
            if (!is_node_failure(e)) throw;
            call.failed(e.what());
            request_refresh();
            fail_key(e.code(), e.what());
        }
        call.done();
    }

    // ---- batches -------------------------------------------------------

    // Items grouped by node; each group's commands written to its node (all
    // nodes before any reply is read: the nodes work in parallel), then the
    // replies read node by node. An item whose reply is a redirect (or an
    // error `take` refuses) goes again alone through `single`. A node that
    // fails: with fail-open its items are left as they are (misses, skipped
    // writes), else the call fails after every node is read.
    template <class KeyOf, class Append, class Take, class Single>
    void batch(size_t count, bool read, Deadline deadline, KeyOf &&key_of, Append &&append, Take &&take,
               Single &&single) {
        std::shared_ptr<const View> v = current_view(deadline);
        struct Group {
            NodePtr node;
            bool replica = false;
            std::vector<size_t> items;
            std::unique_ptr<NodeCall> call;
            std::unique_ptr<RedisSession> session;
            std::string error;
        };
        std::vector<Group> groups;
        std::vector<size_t> again;
        for (size_t i = 0; i < count; ++i) {
            const int16_t shard = v->topology.slot_shard[cluster::key_slot(key_of(i))];
            if (shard < 0) {
                again.push_back(i);
                continue;
            }
            bool replica = false;
            NodePtr node = pick(*v, static_cast<size_t>(shard), read, &replica);
            auto g = std::find_if(groups.begin(), groups.end(), [&](const Group &x) { return x.node == node; });
            if (g == groups.end()) {
                groups.push_back(Group{node, replica, {}, nullptr, nullptr, {}});
                g = groups.end() - 1;
            }
            g->items.push_back(i);
        }
        static const char *const kReadonly[] = {"READONLY"};
        static const size_t kReadonlyLen[] = {8};
        auto node_failed = [&](Group &g, const Error &e) {
            if (g.call && is_node_failure(e)) g.call->failed(e.what());
            g.error = e.what();
            g.session.reset();
            request_refresh();
        };
        // Write phase: the first chunk of every node.
        for (Group &g : groups) {
            try {
                g.call = std::make_unique<NodeCall>(*g.node);
                g.session = std::make_unique<RedisSession>(g.node->redis, deadline);
                if (g.replica) g.session->append(1, kReadonly, kReadonlyLen);
                for (size_t k = 0; k < std::min(g.items.size(), kPipelineChunk); ++k) append(g.items[k], *g.session);
                g.session->flush("pipeline", deadline);
            } catch (const Error &e) {
                node_failed(g, e);
            }
        }
        // Read phase: node by node, further chunks written as earlier ones are read.
        for (Group &g : groups) {
            if (!g.session) continue;
            try {
                if (g.replica) g.session->next("READONLY", deadline);
                for (size_t begin = 0; begin < g.items.size(); begin += kPipelineChunk) {
                    const size_t end = std::min(g.items.size(), begin + kPipelineChunk);
                    if (begin > 0) {
                        for (size_t k = begin; k < end; ++k) append(g.items[k], *g.session);
                    }
                    for (size_t k = begin; k < end; ++k) {
                        Reply reply = g.session->next("pipeline", deadline);
                        if (!take(g.items[k], *reply, g.session->where())) again.push_back(g.items[k]);
                    }
                }
                g.session.reset();
                g.call->done();
            } catch (const Error &e) {
                node_failed(g, e);
            }
        }
        std::string error;
        for (Group &g : groups)
            if (!g.error.empty() && error.empty()) error = g.error;
        if (!error.empty() && !config_.node_resilience.fail_open) fail_key(CACHEKIT_EBACKEND, error);
        for (size_t i : again) {
            try {
                single(i, deadline);
            } catch (const Error &e) {
                if (!config_.node_resilience.fail_open || !dynamic_cast<const KeyFault *>(&e)) throw;
            }
        }
    }

    // ---- clear ---------------------------------------------------------

    uint64_t clear_node(Node &node, const KeySelection &which, const std::string &pattern, Deadline deadline) {
        NodeCall call(node);
        uint64_t deleted = 0;
        std::vector<std::string> moved_keys;
        try {
            RedisSession session(node.redis, deadline);
            const char *scan_argv[] = {"SCAN", "0", "MATCH", pattern.data(), "COUNT", kScanCount.data()};
            size_t scan_lens[] = {4, 1, 5, pattern.size(), 5, kScanCount.size()};
            const ReplyShape scan_shape = ReplyShape::nested(2, kScanMaxKeys);
            session.append(6, scan_argv, scan_lens, scan_shape);
            Reply scan = session.next("SCAN", deadline);
            redis_replies::ScanPage page;
            std::vector<std::string_view> batch_keys;
            for (;;) {
                redis_replies::scan_page(*scan, session.where(), page);
                batch_keys.clear();
                for (std::string_view key : page.keys)
                    if (which.takes(key)) batch_keys.push_back(key);
                for (std::string_view key : batch_keys) {
                    const char *argv[] = {"UNLINK", data_or_empty(key)};
                    const size_t lens[] = {6, key.size()};
                    session.append(2, argv, lens);
                }
                if (page.more) {
                    scan_argv[1] = data_or_empty(page.cursor);
                    scan_lens[1] = page.cursor.size();
                    session.append(6, scan_argv, scan_lens, scan_shape);
                }
                for (std::string_view key : batch_keys) {
                    Reply unlinked = session.next("UNLINK", deadline);
                    if (std::optional<long long> n = redis_replies::integer_of(*unlinked)) {
                        deleted += static_cast<uint64_t>(*n);
                    } else {
                        uint16_t s;
                        NodeAddress to;
                        // A key migrating away (a live reshard): delete it where it lives now.
                        if (redirect_of(*unlinked, &s, &to) == Redirect::None)
                            fail(CACHEKIT_EBACKEND, redis_replies::describe(*unlinked, session.where(), "UNLINK"));
                        moved_keys.emplace_back(key);
                    }
                }
                if (!page.more) break;
                scan = session.next("SCAN", deadline);
            }
        } catch (const KeyFault &) {
            throw;
        } catch (const Error &e) {
            if (is_node_failure(e)) {
                call.failed(e.what());
                request_refresh();
            }
            throw;
        }
        call.done();
        for (const std::string &key : moved_keys) deleted += del(key, deadline) ? 1 : 0;
        return deleted;
    }

    // ---- topology ------------------------------------------------------

    // A MOVED names the slot's new owner: route the slot there now (a copy
    // of the view with that one slot changed), and refresh soon.
    void fix_slot(uint16_t slot, const NodePtr &node) {
        {
            std::lock_guard<std::mutex> lock(view_mu_);
            auto fixed = std::make_shared<View>(*view_);
            auto it = std::find(fixed->primaries.begin(), fixed->primaries.end(), node);
            size_t shard = static_cast<size_t>(it - fixed->primaries.begin());
            if (it == fixed->primaries.end()) {
                cluster::Shard s;
                s.primary = node->address;
                fixed->topology.shards.push_back(s);
                fixed->primaries.push_back(node);
                fixed->replicas.emplace_back();
            }
            fixed->topology.slot_shard[slot] = static_cast<int16_t>(shard);
            view_ = std::move(fixed);
        }
        view_changed();
        request_refresh();
    }

    // Ask the nodes we know (`first` before them, then the seeds) for the slot
    // map; install the first answer.
    void refresh(Deadline deadline, const NodeAddress *first = nullptr) {
        std::vector<NodeAddress> candidates;
        if (first) candidates.push_back(*first);
        {
            std::shared_ptr<const View> v = view();
            for (const NodePtr &p : v->primaries) candidates.push_back(p->address);
            for (const auto &list : v->replicas)
                for (const NodePtr &r : list) candidates.push_back(r->address);
        }
        for (const ClusterConfig::Seed &seed : config_.seeds) candidates.push_back({seed.host, seed.port});
        std::string last_error = "no seed node";
        std::vector<std::string> tried;
        for (const NodeAddress &address : candidates) {
            const std::string key = cluster::canonical_name(address);
            if (std::find(tried.begin(), tried.end(), key) != tried.end()) continue;
            tried.push_back(key);
            if (deadline.passed()) break;
            try {
                NodePtr node = node_for(address);
                // The refresh's own deadline per node: a dead node must not eat the whole budget.
                const Deadline each{std::min(deadline.at, SteadyClock::now() + config_.node.connect_timeout +
                                                              config_.node.command_timeout)};
                RedisSession session(node->redis, each);
                const char *argv[] = {"CLUSTER", "SHARDS"};
                size_t lens[] = {7, 6};
                session.append(2, argv, lens, ReplyShape::tree(kTopologyMaxElements));
                Reply reply = session.next("CLUSTER SHARDS", each);
                std::string why;
                std::optional<cluster::Topology> topology;
                if (reply->type == REDIS_REPLY_ERROR) {
                    // Before Redis 7: CLUSTER SLOTS.
                    argv[1] = "SLOTS";
                    lens[1] = 5;
                    session.append(2, argv, lens, ReplyShape::tree(kTopologyMaxElements));
                    reply = session.next("CLUSTER SLOTS", each);
                    if (reply->type == REDIS_REPLY_ERROR) {  // refused (NOAUTH, LOADING...): say why
                        last_error = address.name() + ": CLUSTER SLOTS: " + std::string(redis_replies::text(*reply));
                        continue;
                    }
                    topology = cluster::parse_cluster_slots(*reply, &why);
                } else {
                    topology = cluster::parse_cluster_shards(*reply, &why, config_.node.tls.enabled);
                }
                if (!topology || topology->covered_slots() == 0) {
                    last_error = address.name() + ": " + (why.empty() ? "no slots assigned" : why);
                    continue;
                }
                install(std::move(*topology));
                refreshes_.fetch_add(1, std::memory_order_relaxed);
                return;
            } catch (const Error &e) {
                last_error = e.what();
            }
        }
        {
            std::lock_guard<std::mutex> lock(view_mu_);
            last_refresh_error_ = last_error;
        }
        fail(CACHEKIT_EBACKEND, "redis cluster: cannot read the slot map: " + last_error);
    }

    // Why there is no slot map, for messages.
    std::string no_map_reason() const {
        std::lock_guard<std::mutex> lock(view_mu_);
        return "no slot map: no node answered" + (last_refresh_error_.empty() ? "" : " (" + last_refresh_error_ + ")");
    }

    void install(cluster::Topology topology) {
        auto fresh = std::make_shared<View>();
        for (const cluster::Shard &shard : topology.shards) {
            fresh->primaries.push_back(node_for(shard.primary));
            fresh->replicas.emplace_back();
            for (const NodeAddress &r : shard.replicas) fresh->replicas.back().push_back(node_for(r));
        }
        fresh->topology = std::move(topology);
        // Nodes this map does not name are dropped (their pools close once
        // no view or call holds them): addresses change (a pod restarted),
        // and a node must not outlive its place in the map.
        std::set<std::string> named;
        for (size_t s = 0; s < fresh->primaries.size(); ++s) {
            named.insert(fresh->primaries[s]->canonical);
            for (const NodePtr &r : fresh->replicas[s]) named.insert(r->canonical);
        }
        for (const NodeAddress &spare : fresh->topology.spares) named.insert(cluster::canonical_name(spare));
        {
            std::lock_guard<std::mutex> lock(view_mu_);
            view_ = std::move(fresh);
        }
        std::vector<NodePtr> dropped;  // released after the lock (see node_for)
        {
            std::lock_guard<std::mutex> lock(nodes_mu_);
            for (auto it = nodes_.begin(); it != nodes_.end();) {
                if (named.count(it->first)) {
                    ++it;
                } else {
                    dropped.push_back(std::move(it->second));
                    it = nodes_.erase(it);
                }
            }
        }
        dropped.clear();
        view_changed();
    }

    // In a forked child the refresher thread does not exist: start one of
    // its own (the parent's std::thread object is left alone, never joined).
    void restart_refresher() {
        std::lock_guard<std::mutex> lock(refresh_mu_);
        const pid_t now = fork_hooks::pid();
        if (refresher_pid_.load(std::memory_order_relaxed) == now || stopping_) return;
        std::thread fresh;
        try {
            fresh = std::thread([this] { refresh_loop(); });  // it waits for refresh_mu_, held here
        } catch (const std::system_error &) {
            return;  // no thread to be had now: the next call tries again (calls still refresh inline when needed)
        }
        new std::thread(std::move(refresher_));  // leaked on purpose: destroying it would terminate()
        refresher_pid_.store(now, std::memory_order_relaxed);
        refresher_ = std::move(fresh);
    }

    void request_refresh() {
        if (refresher_pid_.load(std::memory_order_relaxed) != fork_hooks::pid()) restart_refresher();
        {
            std::lock_guard<std::mutex> lock(refresh_mu_);
            refresh_wanted_ = true;
        }
        refresh_cv_.notify_one();
    }

    void refresh_loop() {
        std::unique_lock<std::mutex> lock(refresh_mu_);
        while (!stopping_) {
            refresh_cv_.wait_for(lock, config_.refresh_interval, [&] { return stopping_ || refresh_wanted_; });
            if (stopping_) break;
            refresh_wanted_ = false;
            lock.unlock();
            try {
                refresh(Deadline::after(config_.node.connect_timeout + config_.node.command_timeout * 2));
            } catch (...) {
                // Try again at the next request or interval. Nothing may leave a thread
                // the library owns (std::terminate would end the caller's process).
            }
            std::this_thread::sleep_for(config_.refresh_min_gap);
            lock.lock();
        }
    }

    void before_fork() noexcept override {
        feeds_->mutex().lock();
        refresh_mu_.lock();
        view_mu_.lock();
        nodes_mu_.lock();
    }
    void after_fork_parent() noexcept override {
        nodes_mu_.unlock();
        view_mu_.unlock();
        refresh_mu_.unlock();
        feeds_->mutex().unlock();
    }
    void after_fork_child() noexcept override {
        nodes_mu_.unlock();
        view_mu_.unlock();
        new (&refresh_cv_) std::condition_variable();  // the refresher's: abandoned, not destroyed
        refresh_mu_.unlock();
        feeds_->mutex().unlock();
    }

    ClusterConfig config_;
    mutable std::mutex view_mu_;
    std::shared_ptr<const View> view_;
    std::string last_refresh_error_;  // under view_mu_
    std::mutex nodes_mu_;
    std::map<std::string, NodePtr> nodes_;
    std::atomic<uint64_t> next_replica_{0};
    std::atomic<uint64_t> moved_{0}, asked_{0}, retried_{0}, refreshes_{0};
    const std::shared_ptr<cluster::ClusterFeeds> feeds_ = std::make_shared<cluster::ClusterFeeds>();

    std::mutex refresh_mu_;
    std::condition_variable refresh_cv_;
    bool refresh_wanted_ = false;
    bool stopping_ = false;
    std::atomic<pid_t> refresher_pid_{fork_hooks::pid()};  // the process the refresher thread runs in
    std::thread refresher_;
};

}  // namespace

std::unique_ptr<Backend> open_redis_cluster(const ClusterConfig &config) {
    if (config.seeds.empty()) fail(CACHEKIT_EINVAL, "Redis Cluster config: no seed node");
    for (const ClusterConfig::Seed &seed : config.seeds)
        if (seed.host.empty() || seed.port <= 0 || seed.port > 65535)
            fail(CACHEKIT_EINVAL, "Redis Cluster config: a seed needs a host and a port in 1..65535");
    if (config.node.pool_size == 0) fail(CACHEKIT_EINVAL, "Redis Cluster config: the pool size must be at least 1");
    if (config.node.connect_timeout.count() <= 0 || config.node.command_timeout.count() <= 0)
        fail(CACHEKIT_EINVAL, "Redis Cluster config: the connect and command timeouts must be positive");
    if (config.refresh_interval.count() <= 0) fail(CACHEKIT_EINVAL, "Redis Cluster config: refresh interval must be positive");
    // Reads from replicas keep an L1 coherent only through each replica's
    // own CLIENT TRACKING (see watched_nodes_of): a pub/sub message is
    // published once, by the writer, with no order against a replica's
    // apply, so it cannot stop a replica read from pinning the old value.
    if (config.read_from_replicas && config.node.l1_coherence == CoherenceMode::Pubsub)
        fail(CACHEKIT_EINVAL, "Redis Cluster config: l1_coherence=pubsub cannot keep an L1 coherent with "
                              "read_from_replicas=yes (a replica may apply a write after its message); use "
                              "l1_coherence=tracking or auto, or read from primaries");
    if (config.read_from_replicas && config.node.l1_coherence == CoherenceMode::Auto) {
        // Never the pub/sub fallback here: a node without tracking keeps the L1 shut instead.
        ClusterConfig tracked = config;
        tracked.node.l1_coherence = CoherenceMode::Tracking;
        return std::make_unique<ClusterBackend>(tracked);
    }
    return std::make_unique<ClusterBackend>(config);
}

}  // namespace cachekit::l2
