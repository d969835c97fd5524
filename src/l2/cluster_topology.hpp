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

#include "l2/cluster_slots.hpp"

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

struct Shard {
    NodeAddress primary;
    std::vector<NodeAddress> replicas;  // replicas not marked failed
};

struct Topology {
    std::vector<Shard> shards;
    std::array<int16_t, kSlots> slot_shard;  // index into shards; -1: no owner
    Topology() { slot_shard.fill(-1); }
    size_t covered_slots() const;
};

// nullopt when the reply is not a usable answer (an error, a bad shape);
// the text of the problem goes to *why.
std::optional<Topology> parse_cluster_shards(const redisReply &reply, std::string *why);
std::optional<Topology> parse_cluster_slots(const redisReply &reply, std::string *why);

}  // namespace cachekit::l2::cluster
