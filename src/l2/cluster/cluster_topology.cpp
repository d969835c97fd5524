#include "l2/cluster/cluster_topology.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cctype>
#include <charconv>
#include <cstring>
#include <unordered_map>

namespace cachekit::l2::cluster {
namespace {

std::string_view str(const redisReply &r) {
    if (r.type == REDIS_REPLY_STRING || r.type == REDIS_REPLY_STATUS) return {r.str, r.len};
    return {};
}

bool integer(const redisReply &r, long long *out) {
    if (r.type == REDIS_REPLY_INTEGER) {
        *out = r.integer;
        return true;
    }
    std::string_view text = str(r);
    return !text.empty() && std::from_chars(text.data(), text.data() + text.size(), *out).ec == std::errc();
}

bool is_array(const redisReply &r) { return r.type == REDIS_REPLY_ARRAY; }

// A RESP2 map: [name, value, name, value...]; the value under `name` or null.
const redisReply *field(const redisReply &map, std::string_view name) {
    if (!is_array(map)) return nullptr;
    for (size_t i = 0; i + 1 < map.elements; i += 2)
        if (str(*map.element[i]) == name) return map.element[i + 1];
    return nullptr;
}

bool assign_range(Topology &t, long long first, long long last, size_t shard) {
    if (first < 0 || last < first || last >= kSlots) return false;
    for (long long s = first; s <= last; ++s) t.slot_shard[static_cast<size_t>(s)] = static_cast<int16_t>(shard);
    return true;
}

std::optional<Topology> bad(std::string *why, std::string text) {
    if (why) *why = std::move(text);
    return std::nullopt;
}

std::string too_many(const char *what, size_t n) {
    return std::string(what) + ": the map names " + std::to_string(n) + " nodes or more; a Redis Cluster has at most " +
           std::to_string(kMaxNodes);
}

// The whole map within kMaxNodes, and no address twice (in any spelling):
// else the reason, and the map is refused.
std::optional<std::string> map_problem(const Topology &t, const char *what) {
    size_t total = t.shards.size() + t.spares.size();
    for (const Shard &s : t.shards) total += s.replicas.size();
    if (total > kMaxNodes) return too_many(what, total);
    std::unordered_map<std::string, std::string> seen;  // canonical -> as first spelled
    auto twice = [&](const NodeAddress &a) -> std::optional<std::string> {
        auto [it, fresh] = seen.emplace(canonical_name(a), a.name());
        if (fresh) return std::nullopt;
        const std::string spelled = a.name();
        if (spelled == it->second) return std::string(what) + ": the map names node " + spelled + " twice";
        return std::string(what) + ": the map names one node under two spellings, " + it->second + " and " + spelled;
    };
    for (const Shard &s : t.shards) {
        if (auto p = twice(s.primary)) return p;
        for (const NodeAddress &r : s.replicas)
            if (auto p = twice(r)) return p;
    }
    for (const NodeAddress &a : t.spares)
        if (auto p = twice(a)) return p;
    return std::nullopt;
}

std::optional<Topology> checked(Topology t, const char *what, std::string *why) {
    if (std::optional<std::string> problem = map_problem(t, what)) return bad(why, std::move(*problem));
    return t;
}

}  // namespace

std::string canonical_name(const NodeAddress &address) {
    // What the resolver sees: the text up to a NUL (hiredis passes a C string).
    std::string host = address.host.substr(0, address.host.find('\0'));
    in_addr v4{};
    in6_addr v6{};
    char text[INET6_ADDRSTRLEN] = {};
    if (inet_aton(host.c_str(), &v4) != 0) {
        inet_ntop(AF_INET, &v4, text, sizeof text);
        host = text;
    } else if (inet_pton(AF_INET6, host.c_str(), &v6) == 1) {
        if (IN6_IS_ADDR_V4MAPPED(&v6)) {
            std::memcpy(&v4, v6.s6_addr + 12, sizeof v4);
            inet_ntop(AF_INET, &v4, text, sizeof text);
        } else {
            inet_ntop(AF_INET6, &v6, text, sizeof text);
        }
        host = text;
    } else {
        for (char &c : host) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        while (host.size() > 1 && host.back() == '.') host.pop_back();  // "localhost." is "localhost"
    }
    return NodeAddress{host, address.port}.name();
}

std::string NodeAddress::name() const {
    const std::string shown = host.find(':') != std::string::npos ? "[" + host + "]" : host;
    return shown + ":" + std::to_string(port);
}

std::optional<NodeAddress> parse_address(std::string_view text) {
    const size_t colon = text.rfind(':');
    if (colon == std::string_view::npos || colon == 0) return std::nullopt;
    std::string_view host = text.substr(0, colon), port_text = text.substr(colon + 1);
    // Redis 7 may append "@cport" to a node's address in some outputs.
    if (size_t at = port_text.find('@'); at != std::string_view::npos) port_text = port_text.substr(0, at);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    int port = 0;
    if (std::from_chars(port_text.data(), port_text.data() + port_text.size(), port).ec != std::errc() ||
        port <= 0 || port > 65535 || host.empty())
        return std::nullopt;
    return NodeAddress{std::string(host), port};
}

size_t Topology::covered_slots() const {
    size_t n = 0;
    for (int16_t s : slot_shard) n += s >= 0;
    return n;
}

// [[ "slots", [first, last, ...], "nodes", [[ "id", .., "ip", .., "port", .., "role", .., "health", .. ], ...] ], ...]
std::optional<Topology> parse_cluster_shards(const redisReply &reply, std::string *why, bool tls) {
    constexpr const char *kWhat = "CLUSTER SHARDS";
    if (reply.type == REDIS_REPLY_ERROR) return bad(why, std::string(reply.str, reply.len));
    if (!is_array(reply)) return bad(why, "CLUSTER SHARDS: not an array");
    if (reply.elements > kMaxNodes) return bad(why, too_many(kWhat, reply.elements));
    Topology t;
    for (size_t i = 0; i < reply.elements; ++i) {
        const redisReply &shard = *reply.element[i];
        const redisReply *slots = field(shard, "slots");
        const redisReply *nodes = field(shard, "nodes");
        if (!slots || !nodes || !is_array(*slots) || !is_array(*nodes) || slots->elements % 2 != 0)
            return bad(why, "CLUSTER SHARDS: a shard without slots or nodes");
        Shard out;
        bool have_primary = false, primary_online = false;
        for (size_t n = 0; n < nodes->elements; ++n) {
            const redisReply &node = *nodes->element[n];
            const redisReply *tls_port = tls ? field(node, "tls-port") : nullptr;
            const redisReply *ip = field(node, "ip"), *port = tls_port ? tls_port : field(node, "port"),
                             *role = field(node, "role"), *health = field(node, "health");
            long long p = 0;
            if (!ip || !port || !role || !integer(*port, &p) || p <= 0 || p > 65535) continue;
            NodeAddress address{std::string(str(*ip)), static_cast<int>(p)};
            if (address.host.empty()) continue;
            // Redis 7.0 reports a replica "loading" until its first replicated write (offset 0):
            // only "failed" keeps a node out (a replica still loading answers LOADING: retried).
            const bool online = !health || str(*health) != "failed";
            if (str(*role) == "master") {
                // A failed old primary may still be listed beside the promoted one: prefer the online one.
                if (!have_primary || (online && !primary_online)) {
                    out.primary = address;
                    have_primary = true;
                    primary_online = online;
                }
            } else if (online && out.replicas.size() < kMaxReplicasPerShard) {
                out.replicas.push_back(std::move(address));
            }
        }
        if (slots->elements == 0) {  // a shard that serves nothing yet (e.g. a node just added)
            if (have_primary) t.spares.push_back(std::move(out.primary));
            continue;
        }
        if (!have_primary) return bad(why, "CLUSTER SHARDS: a shard with slots but no primary");
        const size_t index = t.shards.size();
        for (size_t s = 0; s < slots->elements; s += 2) {
            long long first = 0, last = 0;
            if (!integer(*slots->element[s], &first) || !integer(*slots->element[s + 1], &last) ||
                !assign_range(t, first, last, index))
                return bad(why, "CLUSTER SHARDS: a bad slot range");
        }
        t.shards.push_back(std::move(out));
    }
    return checked(std::move(t), kWhat, why);
}

// [[first, last, [ip, port, id...], [replica ip, port, id...]...], ...]
std::optional<Topology> parse_cluster_slots(const redisReply &reply, std::string *why) {
    constexpr const char *kWhat = "CLUSTER SLOTS";
    if (reply.type == REDIS_REPLY_ERROR) return bad(why, std::string(reply.str, reply.len));
    if (!is_array(reply)) return bad(why, "CLUSTER SLOTS: not an array");
    Topology t;
    for (size_t i = 0; i < reply.elements; ++i) {
        const redisReply &range = *reply.element[i];
        long long first = 0, last = 0;
        if (!is_array(range) || range.elements < 3 || !integer(*range.element[0], &first) ||
            !integer(*range.element[1], &last))
            return bad(why, "CLUSTER SLOTS: a bad slot range");
        std::vector<NodeAddress> nodes;
        for (size_t n = 2; n < range.elements; ++n) {
            const redisReply &node = *range.element[n];
            long long port = 0;
            if (!is_array(node) || node.elements < 2 || !integer(*node.element[1], &port) || port <= 0 || port > 65535)
                return bad(why, "CLUSTER SLOTS: a bad node entry");
            if (nodes.size() <= kMaxReplicasPerShard)  // the primary and the first replicas
                nodes.push_back({std::string(str(*node.element[0])), static_cast<int>(port)});
        }
        if (nodes.front().host.empty()) return bad(why, "CLUSTER SLOTS: a primary without an address");
        // One range per entry: ranges of the same primary share a shard.
        size_t index = t.shards.size();
        for (size_t s = 0; s < t.shards.size(); ++s)
            if (t.shards[s].primary == nodes.front()) index = s;
        if (index == t.shards.size()) {
            if (t.shards.size() >= kMaxNodes) return bad(why, too_many(kWhat, t.shards.size() + 1));
            Shard shard;
            shard.primary = nodes.front();
            shard.replicas.assign(nodes.begin() + 1, nodes.end());
            t.shards.push_back(std::move(shard));
        }
        if (!assign_range(t, first, last, index)) return bad(why, "CLUSTER SLOTS: a bad slot range");
    }
    return checked(std::move(t), kWhat, why);
}

}  // namespace cachekit::l2::cluster
