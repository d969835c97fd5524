#include "l2/cluster_topology.hpp"

#include <charconv>

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

}  // namespace

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
std::optional<Topology> parse_cluster_shards(const redisReply &reply, std::string *why) {
    if (reply.type == REDIS_REPLY_ERROR) return bad(why, std::string(reply.str, reply.len));
    if (!is_array(reply)) return bad(why, "CLUSTER SHARDS: not an array");
    Topology t;
    for (size_t i = 0; i < reply.elements; ++i) {
        const redisReply &shard = *reply.element[i];
        const redisReply *slots = field(shard, "slots");
        const redisReply *nodes = field(shard, "nodes");
        if (!slots || !nodes || !is_array(*slots) || !is_array(*nodes) || slots->elements % 2 != 0)
            return bad(why, "CLUSTER SHARDS: a shard without slots or nodes");
        if (slots->elements == 0) continue;  // a shard that serves nothing (e.g. a fresh node)
        Shard out;
        bool have_primary = false, primary_online = false;
        for (size_t n = 0; n < nodes->elements; ++n) {
            const redisReply &node = *nodes->element[n];
            const redisReply *ip = field(node, "ip"), *port = field(node, "port"), *role = field(node, "role"),
                             *health = field(node, "health");
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
            } else if (online) {
                out.replicas.push_back(std::move(address));
            }
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
    return t;
}

// [[first, last, [ip, port, id...], [replica ip, port, id...]...], ...]
std::optional<Topology> parse_cluster_slots(const redisReply &reply, std::string *why) {
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
            nodes.push_back({std::string(str(*node.element[0])), static_cast<int>(port)});
        }
        if (nodes.front().host.empty()) return bad(why, "CLUSTER SLOTS: a primary without an address");
        // One range per entry: ranges of the same primary share a shard.
        size_t index = t.shards.size();
        for (size_t s = 0; s < t.shards.size(); ++s)
            if (t.shards[s].primary == nodes.front()) index = s;
        if (index == t.shards.size()) {
            Shard shard;
            shard.primary = nodes.front();
            shard.replicas.assign(nodes.begin() + 1, nodes.end());
            t.shards.push_back(std::move(shard));
        }
        if (!assign_range(t, first, last, index)) return bad(why, "CLUSTER SLOTS: a bad slot range");
    }
    return t;
}

}  // namespace cachekit::l2::cluster
