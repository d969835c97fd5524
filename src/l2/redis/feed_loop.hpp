// One thread serving every node session (feed_session.hpp) of a feed: a
// single-node Redis feed has one, a cluster feed one per watched node. The
// thread polls every session's socket and an eventfd that add(), remove()
// and the destructor use to wake it; all of a session's I/O is non-blocking
// and bounded by its deadlines, so no node delays another's messages, and
// add()/remove() never wait on a node's I/O (remove() waits only for the
// loop's current pass, which does none that blocks).
// docs/redis.md, "L1 coherence".
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>

#include "l2/redis/feed_session.hpp"
#include "util/woken_thread.hpp"

namespace cachekit::l2::feed {

class Loop {
public:
    static constexpr const char *kThreadName = "ck-feed";  // the thread's name (comm)
    // Throws (std::system_error) when the eventfd or the thread cannot be had.
    Loop();
    // Stops the thread: each session still there ends as a lost attempt would.
    // In a forked child (the thread is the parent's): leaves everything.
    ~Loop();
    Loop(const Loop &) = delete;
    Loop &operator=(const Loop &) = delete;

    using Id = uint64_t;
    // A session as its owner holds it: decided() reads its mode without the
    // loop's lock (which the loop holds while calling handlers).
    struct Handle {
        Id id = 0;
        std::shared_ptr<const Session> session;
        CoherenceMode decided() const noexcept { return session ? session->decided() : CoherenceMode::Auto; }
    };
    // A new session, started by the loop's thread at its next pass. The
    // request's handler must outlive the session's removal.
    Handle add(const RedisConfig &config, const WatchRequest &request);
    // Ends the session (its handler hears the attempt's end on the loop's
    // thread) and returns once the loop will never call its handler again.
    // Not to be called from a handler.
    void remove(Id id);

private:
    struct Entry {
        std::shared_ptr<Session> session;
        bool started = false;
        bool leaving = false;
    };
    void run() noexcept;
    void pass();
    void wake() noexcept;

    const pid_t pid_;
    mutable std::mutex mu_;
    std::condition_variable gone_cv_;  // a removed session is gone
    std::map<Id, Entry> sessions_;     // under mu_; erased by the loop's thread only
    Id next_id_ = 1;
    bool stop_ = false;
    WokenThread thread_;  // last: started once everything else is in place
};

}  // namespace cachekit::l2::feed
