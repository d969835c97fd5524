// Which node serves which slot: parsed from CLUSTER SHARDS (Redis 7) or, on
// older servers, CLUSTER SLOTS. Pure functions of a reply (no I/O), so the
// tests can feed them any tree hiredis builds.
#pragma once

#include <hiredis/hiredis.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "l2/cluster/cluster_slots.hpp"

namespace cachekit::l2::cluster {

struct NodeAddress {
    std::string host;
    int port = 0;
    // "host:port" ("[v6]:port" for IPv6): the node's name in maps and messages.
    std::string name() const;
    bool operator==(const NodeAddress &) const = default;
};

// "host:port" as MOVED/ASK name it (the last ':' splits; brackets allowed).
std::optional<NodeAddress> parse_address(std::string_view text);

// One key per address however it is spelled, so that a map or a redirect
// cannot make one server several nodes: a numeric IPv4 host in the form the
// resolver reads it (inet_aton: "127.000.000.001", "127.1", "0x7f.0.0.1" are
// 127.0.0.1), an IPv4-mapped IPv6 one as its IPv4, other IPv6 in RFC 5952
// form, a hostname in lower case without a trailing dot.
std::string canonical_name(const NodeAddress &address);

// Limits on what one slot map may make a client spend (a node and its pool
// per address, an L1 coherence feed thread per primary). Redis documents
// 1000 nodes as a cluster's upper bound: a map naming more is refused.
// Replicas past kMaxReplicasPerShard are left out of the map (reads from
// replicas use the first ones listed; an honest shard rarely has more).
inline constexpr size_t kMaxNodes = 1000;
inline constexpr size_t kMaxReplicasPerShard = 16;

struct Shard {
    NodeAddress primary;
    std::vector<NodeAddress> replicas;  // replicas not marked failed
};

struct Topology {
    std::vector<Shard> shards;
    // Primaries of shards serving no slot yet (CLUSTER SHARDS lists them: a
    // node just added, importing its first slot, answers ASK for it).
    std::vector<NodeAddress> spares;
    std::array<int16_t, kSlots> slot_shard;  // index into shards; -1: no owner
    Topology() { slot_shard.fill(-1); }
    size_t covered_slots() const;
};

// nullopt when the reply is not a usable answer (an error, a bad shape, a
// map over the limits above, one address named twice in any spelling);
// the text of the problem goes to *why. Over TLS a node's address is its
// "tls-port" in CLUSTER SHARDS (its "port" is the plain one, or none); CLUSTER
// SLOTS and redirects name the port of the asking connection's kind.
std::optional<Topology> parse_cluster_shards(const redisReply &reply, std::string *why, bool tls = false);
std::optional<Topology> parse_cluster_slots(const redisReply &reply, std::string *why);

}  // namespace cachekit::l2::cluster
