#include "l2/cluster/cluster_node.hpp"

#include <charconv>
#include <string_view>

#include "l2/key_fault.hpp"

namespace cachekit::l2::cluster {

NodeCall::NodeCall(Node &node) : node_(node) {
    if (node.breaker_enabled) {
        ticket_ = node.breaker.allow();
        if (!ticket_.admitted)
            fail_key(CACHEKIT_ECIRCUIT_OPEN,
                     node.redis.where() + ": circuit breaker open for this node: its keys fail fast until it recovers");
    }
    if (!node.backpressure.acquire()) {
        if (node.breaker_enabled) node.breaker.neutral(ticket_);
        fail_key(CACHEKIT_EBUSY, node.redis.where() + ": backpressure: too many calls in flight to this node");
    }
    slot_ = true;
}

NodeCall::~NodeCall() {
    if (slot_) node_.backpressure.release();
    if (!reported_ && node_.breaker_enabled) node_.breaker.neutral(ticket_);
}

void NodeCall::done() {
    if (reported_) return;
    if (node_.breaker_enabled) node_.breaker.success(ticket_);
    reported_ = true;
    node_.monitor.succeeded();
}

// No library lock is held here (callers hold none): the log handler may call back in.
void NodeCall::failed(std::string_view cause) {
    if (reported_) return;
    const bool opened = node_.breaker_enabled && node_.breaker.failure(ticket_);
    reported_ = true;
    node_.monitor.failed(cause);
    if (opened) node_.monitor.breaker_opened(node_.breaker_config.failure_threshold, node_.breaker_config.recovery);
}

Redirect redirect_of(const redisReply &reply, uint16_t *slot, NodeAddress *to) {
    if (reply.type != REDIS_REPLY_ERROR) return Redirect::None;
    std::string_view text(reply.str, reply.len);
    auto starts = [&](std::string_view p) { return text.substr(0, p.size()) == p; };
    const bool moved = starts("MOVED "), ask = starts("ASK ");
    if (moved || ask) {
        text.remove_prefix(moved ? 6 : 4);
        const size_t space = text.find(' ');
        if (space == std::string_view::npos) return Redirect::None;
        unsigned s = 0;
        if (std::from_chars(text.data(), text.data() + space, s).ec != std::errc() || s >= kSlots) return Redirect::None;
        std::optional<NodeAddress> address = parse_address(text.substr(space + 1));
        if (!address) return Redirect::None;
        *slot = static_cast<uint16_t>(s);
        *to = *address;
        return moved ? Redirect::Moved : Redirect::Ask;
    }
    if (starts("TRYAGAIN") || starts("CLUSTERDOWN") || starts("LOADING")) return Redirect::Retry;
    return Redirect::None;
}

}  // namespace cachekit::l2::cluster
