// The +switch-master watcher of a Sentinel backend: one thread, subscribed
// to one sentinel's +switch-master channel at a time, that tells its owner
// as soon as a sentinel announces a new primary for the master, so the
// switch happens without waiting for a request to fail. The message is a
// hint only: the owner asks the sentinels again and takes an address only
// when it says ROLE master (SentinelDiscovery), so a forged message cannot
// redirect writes. A lost connection moves to the next sentinel, with
// backoff; after a resubscription the owner is told too (a message may
// have been missed meanwhile).
//
// Every step has a deadline (connect and TLS handshake: connect_timeout;
// AUTH and SUBSCRIBE: max(1 s, 4 x command_timeout); a PING after each idle
// second, the connection lost after three unanswered), every byte passes a
// RespGuard first, and the destructor wakes the thread through an eventfd
// and joins it (at most the owner's callback in progress, itself bounded,
// is waited for). In a forked child the thread is the parent's and does
// not exist: the destructor leaves everything as it is, and the owner
// starts a new watcher of its own. docs/redis.md, "Redis Sentinel".
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "l2/sentinel/redis_sentinel_backend.hpp"
#include "util/woken_thread.hpp"

namespace cachekit::l2 {

class SwitchWatcher {
public:
    // The channel Sentinel announces a new primary on.
    static constexpr const char *kChannel = "+switch-master";
    static constexpr const char *kThreadName = "ck-sentinel";
    // Its CLIENT SETNAME on the sentinel (tests find it in CLIENT LIST).
    static constexpr const char *kClientName = "cachekit-sentinel-watch";

    // What a message (or a resubscription) tells the owner: which sentinel
    // it came from and, for a message, the address it names (empty host
    // after a resubscription). A hint, never a primary to use as it is.
    struct Announcement {
        size_t sentinel = 0;  // index into config.sentinels
        std::string host;
        int port = 0;
    };
    // `announced` runs on the watcher's thread for each message naming the
    // master (and after a resubscription); it returns false when it wants
    // to be called again with the same announcement after `retry` (a
    // discovery was in flight or too recent, or the sentinels asked do not
    // name the announced address yet), at most kMaxRetries times. Throws
    // std::system_error when the thread cannot be started.
    static constexpr int kMaxRetries = 25;
    SwitchWatcher(const SentinelConfig &config, std::function<bool(const Announcement &)> announced,
                  std::chrono::milliseconds retry);
    ~SwitchWatcher();
    SwitchWatcher(const SwitchWatcher &) = delete;
    SwitchWatcher &operator=(const SwitchWatcher &) = delete;

    pid_t pid() const noexcept { return pid_; }  // the process whose thread this is
    bool subscribed() const noexcept { return subscribed_.load(std::memory_order_relaxed); }
    uint64_t messages() const noexcept { return messages_.load(std::memory_order_relaxed); }

    struct Conn;

private:
    void run() noexcept;
    bool watch(size_t sentinel, bool first);  // one connection's life; true once it was subscribed
    bool wait(std::chrono::steady_clock::time_point until) noexcept;  // false: stop

    const SentinelConfig config_;
    const std::function<bool(const Announcement &)> announced_;
    const std::chrono::milliseconds retry_;
    const pid_t pid_;
    std::atomic<bool> stop_{false};
    std::atomic<bool> subscribed_{false};
    std::atomic<uint64_t> messages_{0};
    WokenThread thread_;  // last: started once everything else is in place
};

// "m 127.0.0.1 6379 127.0.0.1 6380" (master, old ip and port, new ip and
// port): the new address when the payload of a +switch-master message is
// well formed and names `master`, else false.
bool parse_switch_master(std::string_view payload, std::string_view master, std::string *host, int *port);

}  // namespace cachekit::l2
