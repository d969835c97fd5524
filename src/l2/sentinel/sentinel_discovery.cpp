#include "l2/sentinel/sentinel_discovery.hpp"

#include <hiredis/hiredis.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>

#include "l2/redis/redis_replies.hpp"
#include "util/error.hpp"

namespace cachekit::l2 {
namespace {

// A sentinel's answer is two short strings; a ROLE reply lists replicas.
constexpr uint64_t kSentinelMaxReplyBytes = 64 << 10;
constexpr uint64_t kRoleMaxReplyBytes = 1 << 20;
constexpr uint32_t kRoleMaxElements = 4096;
constexpr size_t kMaxHostLength = 255;
// SENTINEL replicas: entries of about 40 field/value pairs each.
constexpr uint32_t kMaxListedReplicas = 256;
constexpr uint32_t kMaxReplicaFields = 256;

// What a sentinel may name: a host name or an IP literal (v4 or v6, no brackets).
bool plausible_host(std::string_view host) {
    if (host.empty() || host.size() > kMaxHostLength) return false;
    for (char c : host) {
        const unsigned char u = static_cast<unsigned char>(c);
        if (!(std::isalnum(u) || c == '.' || c == '-' || c == '_' || c == ':' || c == '%')) return false;
    }
    return true;
}

int parse_port(std::string_view text) {
    if (text.empty() || text.size() > 5) return -1;
    int port = 0;
    for (char c : text) {
        if (c < '0' || c > '9') return -1;
        port = port * 10 + (c - '0');
    }
    return port >= 1 && port <= 65535 ? port : -1;
}

RedisConfig node_config(RedisConfig base, const std::string &host, int port) {
    base.host = host;
    base.port = port;
    base.unix_path.clear();
    base.pool_size = 1;
    base.l1_coherence = CoherenceMode::Off;
    return base;
}

}  // namespace

std::string PrimaryAddress::text() const {
    return (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

SentinelDiscovery::SentinelDiscovery(const SentinelConfig &config) : master_(config.master_name), data_(config.data) {
    if (config.sentinels.empty()) fail(CACHEKIT_EINVAL, "Redis Sentinel config: no sentinel hosts");
    if (config.master_name.empty()) fail(CACHEKIT_EINVAL, "Redis Sentinel config: no master name");
    for (const SentinelConfig::Host &h : config.sentinels) {
        // A sentinel has no databases and its own credentials; TLS and timeouts are the data's.
        RedisConfig c = node_config(config.data, h.host, h.port);
        c.username = config.sentinel_username;
        c.password = config.sentinel_password;
        c.db = 0;
        c.max_reply_bytes = kSentinelMaxReplyBytes;
        sentinels_.push_back(std::make_unique<RedisNode>(c));
    }
}

SentinelDiscovery::~SentinelDiscovery() = default;

PrimaryAddress SentinelDiscovery::ask(RedisNode &sentinel, Deadline deadline) const {
    RedisSession session(sentinel, deadline);
    const char *argv[] = {"SENTINEL", "get-master-addr-by-name", master_.c_str()};
    const size_t lens[] = {8, 23, master_.size()};
    session.append(3, argv, lens, ReplyShape::array(2));
    redis_replies::Reply reply = session.next("SENTINEL get-master-addr-by-name", deadline);
    if (reply->type == REDIS_REPLY_NIL) return {};
    if (reply->type == REDIS_REPLY_ERROR)
        fail(CACHEKIT_EBACKEND, redis_replies::describe(*reply, "", "SENTINEL get-master-addr-by-name").substr(2));
    if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 2 || reply->element[0]->type != REDIS_REPLY_STRING ||
        reply->element[1]->type != REDIS_REPLY_STRING)
        fail(CACHEKIT_EBACKEND, "SENTINEL get-master-addr-by-name: not an [ip, port] reply");
    const std::string_view host = redis_replies::text(*reply->element[0]);
    const int port = parse_port(redis_replies::text(*reply->element[1]));
    if (!plausible_host(host) || port < 0) fail(CACHEKIT_EBACKEND, "SENTINEL get-master-addr-by-name: a malformed address");
    return {std::string(host), port};
}

// ROLE on a connection of its own (small replies only, no backoff: a
// discovery asks each address once).
redis_replies::Reply SentinelDiscovery::role_of(const PrimaryAddress &where, Deadline deadline) const {
    RedisConfig c = node_config(data_, where.host, where.port);
    c.max_reply_bytes = kRoleMaxReplyBytes;
    c.reconnect_backoff_min = std::chrono::milliseconds(0);
    RedisNode node(c);
    RedisSession session(node, deadline);
    const char *argv[] = {"ROLE"};
    const size_t lens[] = {4};
    session.append(1, argv, lens, ReplyShape::tree(kRoleMaxElements));
    redis_replies::Reply reply = session.next("ROLE", deadline);
    return reply;
}

bool SentinelDiscovery::is_master(const PrimaryAddress &where, Deadline deadline) const {
    const redis_replies::Reply reply = role_of(where, deadline);
    if (reply->type != REDIS_REPLY_ARRAY || reply->elements == 0 || reply->element[0]->type != REDIS_REPLY_STRING)
        return false;
    return redis_replies::text(*reply->element[0]) == "master";
}

// SENTINEL replicas <name>: an array of flat [field, value, ...] arrays.
std::vector<PrimaryAddress> SentinelDiscovery::ask_replicas(RedisNode &sentinel, Deadline deadline) const {
    RedisSession session(sentinel, deadline);
    const char *argv[] = {"SENTINEL", "replicas", master_.c_str()};
    const size_t lens[] = {8, 8, master_.size()};
    session.append(3, argv, lens, ReplyShape::nested(kMaxListedReplicas, kMaxReplicaFields));
    redis_replies::Reply reply = session.next("SENTINEL replicas", deadline);
    if (reply->type == REDIS_REPLY_ERROR)
        fail(CACHEKIT_EBACKEND, redis_replies::describe(*reply, "", "SENTINEL replicas").substr(2));
    if (reply->type != REDIS_REPLY_ARRAY) fail(CACHEKIT_EBACKEND, "SENTINEL replicas: not an array");
    std::vector<PrimaryAddress> out;
    for (size_t i = 0; i < reply->elements && out.size() < kMaxReplicas; ++i) {
        const redisReply &entry = *reply->element[i];
        if (entry.type != REDIS_REPLY_ARRAY) continue;
        std::string_view ip, port, flags;
        for (size_t f = 0; f + 1 < entry.elements; f += 2) {
            const std::string_view name = redis_replies::text(*entry.element[f]);
            const std::string_view value = redis_replies::text(*entry.element[f + 1]);
            if (name == "ip") ip = value;
            else if (name == "port") port = value;
            else if (name == "flags") flags = value;
        }
        // master-link-status is not asked: Sentinel reads it from the
        // replica's INFO every 10 s, so it lags; ROLE says it now.
        if (flags.find("s_down") != std::string_view::npos || flags.find("o_down") != std::string_view::npos ||
            flags.find("disconnected") != std::string_view::npos)
            continue;
        const int p = parse_port(port);
        if (!plausible_host(ip) || p < 0) continue;
        out.push_back({std::string(ip), p});
    }
    return out;
}

bool SentinelDiscovery::is_replica_of(const PrimaryAddress &where, const PrimaryAddress &primary,
                                      Deadline deadline) const {
    const redis_replies::Reply reply = role_of(where, deadline);
    // ["slave", master host, master port, "connected", offset]
    if (reply->type != REDIS_REPLY_ARRAY || reply->elements < 4) return false;
    const redisReply *const *e = reply->element;
    return e[0]->type == REDIS_REPLY_STRING && redis_replies::text(*e[0]) == "slave" &&
           e[1]->type == REDIS_REPLY_STRING && redis_replies::text(*e[1]) == primary.host &&
           e[2]->type == REDIS_REPLY_INTEGER && e[2]->integer == primary.port && e[3]->type == REDIS_REPLY_STRING &&
           redis_replies::text(*e[3]) == "connected";
}

std::vector<PrimaryAddress> SentinelDiscovery::replicas(const PrimaryAddress &primary,
                                                        const std::vector<PrimaryAddress> &trusted, Deadline deadline) {
    std::string why;
    const size_t n = sentinels_.size();
    const size_t start = first_.load(std::memory_order_relaxed) % n;
    for (size_t i = 0; i < n && !deadline.passed(); ++i) {
        RedisNode &sentinel = *sentinels_[(start + i) % n];
        std::vector<PrimaryAddress> listed;
        try {
            listed = ask_replicas(sentinel, deadline);
        } catch (const Error &e) {
            why += (why.empty() ? "" : "; ") + std::string(e.what());
            continue;
        }
        std::vector<PrimaryAddress> out;
        for (const PrimaryAddress &r : listed) {
            if (r == primary) continue;
            bool ok = std::find(trusted.begin(), trusted.end(), r) != trusted.end();
            if (!ok) {
                try {
                    ok = is_replica_of(r, primary, deadline);
                } catch (const Error &) {
                }
            }
            if (ok) out.push_back(r);
        }
        return out;
    }
    fail(deadline.passed() ? CACHEKIT_ETIMEOUT : CACHEKIT_EBACKEND,
         "Redis Sentinel: no replica list for master \"" + master_ + "\"" + (why.empty() ? "" : ": " + why));
}

PrimaryAddress SentinelDiscovery::find(Deadline deadline, const PrimaryAddress *known) {
    std::string why;
    const size_t n = sentinels_.size();
    const size_t start = first_.load(std::memory_order_relaxed) % n;
    for (size_t i = 0; i < n; ++i) {
        if (deadline.passed()) break;
        const size_t at = (start + i) % n;
        RedisNode &sentinel = *sentinels_[at];
        const std::string &where = sentinel.where();
        std::string problem;
        PrimaryAddress found;
        try {
            found = ask(sentinel, deadline);
        } catch (const Error &e) {
            // The pool's messages already name the server.
            const std::string what = e.what();
            const bool named = what.size() > where.size() + 2 && what.compare(0, where.size(), where) == 0;
            problem = named ? what.substr(where.size() + 2) : what;
        }
        if (problem.empty() && found.host.empty()) problem = "does not know master \"" + master_ + "\"";
        if (problem.empty()) {
            try {
                if ((known != nullptr && found == *known) || is_master(found, deadline)) {
                    first_.store(at, std::memory_order_relaxed);
                    return found;
                }
                problem = "names " + found.text() + ", which does not say ROLE master";
            } catch (const Error &e) {
                problem = "names " + found.text() + ": " + e.what();
            }
        }
        why += (why.empty() ? "" : "; ") + ("sentinel " + where.substr(where.find(' ') + 1) + ": " + problem);
    }
    const bool late = deadline.passed();
    fail(late ? CACHEKIT_ETIMEOUT : CACHEKIT_EBACKEND,
         "Redis Sentinel: no primary found for master \"" + master_ + "\"" + (late ? " before the deadline" : "") +
             (why.empty() ? "" : ": " + why));
}

}  // namespace cachekit::l2
