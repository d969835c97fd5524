// One Redis server's connection pool, for backends that compose several
// (the cluster backend, the sentinel discovery). The pool, the
// deadline-bounded I/O and the reply guard are the single-node backend's
// (connection.hpp); this header only exposes them one connection at a
// time, without the pool's internals: queue commands, send, read
// the replies. Error replies are returned as they are (the caller decides
// what MOVED or TRYAGAIN means); I/O failures and timeouts throw
// cachekit::Error and the connection is discarded when the session ends.
#pragma once

#include <memory>
#include <string>

#include "l2/backend.hpp"
#include "l2/redis/redis_backend.hpp"
#include "l2/redis/redis_replies.hpp"
#include "l2/redis/resp_guard.hpp"

namespace cachekit::l2 {

class RedisNode {
public:
    explicit RedisNode(const RedisConfig &config);
    ~RedisNode();
    RedisNode(const RedisNode &) = delete;
    RedisNode &operator=(const RedisNode &) = delete;

    // "redis 127.0.0.1:7000 db 0", for messages.
    const std::string &where() const;

    struct Impl;

private:
    friend class RedisSession;
    std::unique_ptr<Impl> impl_;
};

// A connection checked out of a node's pool for one exchange; returned to it
// (or discarded, when broken or with replies unread) on destruction.
class RedisSession {
public:
    RedisSession(RedisNode &node, Deadline deadline);
    ~RedisSession();
    RedisSession(const RedisSession &) = delete;
    RedisSession &operator=(const RedisSession &) = delete;

    void append(int argc, const char *const *argv, const size_t *lens, ReplyShape shape = ReplyShape::scalar());
    // Send everything queued now (replies are read later with next()).
    void flush(const char *what, Deadline deadline);
    // The next reply (sends queued commands first).
    redis_replies::Reply next(const char *what, Deadline deadline);
    const std::string &where() const;

private:
    RedisNode::Impl &node_;
    void *conn_;
};

}  // namespace cachekit::l2
