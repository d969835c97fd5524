// A raw hiredis client to a test's private redis-server (the "redis-cli" of the
// tests), for what the code under test does not show: sets, TTLs, DBSIZE, other
// writers. Include it after the header that pulls in cmocka.h
// (redis_test_support.hpp, ../cache/cache_test_util.hpp): its checks are that
// header's assert_* and fail_msg (the cache tests' unwinding ones there).
#pragma once

#include <hiredis/hiredis.h>

#include <set>
#include <string>
#include <vector>

namespace cachekit::testing {

struct RawRedis {
    redisContext *c;

    explicit RawRedis(int port) : c(redisConnect("127.0.0.1", port)) {
        if (c == nullptr || c->err) fail_msg("raw connect to 127.0.0.1:%d failed", port);
    }
    ~RawRedis() { redisFree(c); }
    RawRedis(const RawRedis &) = delete;
    RawRedis &operator=(const RawRedis &) = delete;

    // The reply to one command (binary-safe arguments); the caller frees it.
    redisReply *command(const std::vector<std::string> &args) {
        std::vector<const char *> argv;
        std::vector<size_t> lens;
        for (const std::string &a : args) {
            argv.push_back(a.data());
            lens.push_back(a.size());
        }
        auto *r = static_cast<redisReply *>(redisCommandArgv(c, int(argv.size()), argv.data(), lens.data()));
        if (r == nullptr) fail_msg("raw command failed: %s", c->errstr);
        return r;
    }
    // A string or status reply's bytes, else the integer's digits (0 for a nil).
    std::string text(const std::vector<std::string> &args) {
        redisReply *r = command(args);
        std::string out = r->str ? std::string(r->str, r->len) : std::to_string(r->integer);
        freeReplyObject(r);
        return out;
    }
    long long integer(const std::vector<std::string> &args) {
        redisReply *r = command(args);
        assert_int_equal(r->type, REDIS_REPLY_INTEGER);
        const long long v = r->integer;
        freeReplyObject(r);
        return v;
    }
    std::set<std::string> members(const std::string &set) {
        redisReply *r = command({"SMEMBERS", set});
        std::set<std::string> out;
        for (size_t i = 0; i < r->elements; ++i) out.emplace(r->element[i]->str, r->element[i]->len);
        freeReplyObject(r);
        return out;
    }
    bool has(const std::string &key) { return integer({"EXISTS", key}) == 1; }
    // EXISTS for a caller that polls: false, not a failed test, when the server
    // closed the connection (Sentinel kills normal clients on the replica it
    // promotes).
    bool has_if_answered(const std::string &key) {
        auto *r = static_cast<redisReply *>(redisCommand(c, "EXISTS %b", key.data(), key.size()));
        if (r == nullptr) return false;
        const bool yes = r->type == REDIS_REPLY_INTEGER && r->integer == 1;
        freeReplyObject(r);
        return yes;
    }
    // The id of a cache's coherence feed connection in CLIENT LIST ("" when none).
    std::string feed_client_id() {
        const std::string list = text({"CLIENT", "LIST"});
        const size_t at = list.find("name=cachekit-invalidation");
        if (at == std::string::npos) return "";
        const size_t line = list.rfind('\n', at);
        const size_t id = list.find("id=", line == std::string::npos ? 0 : line);
        return list.substr(id + 3, list.find(' ', id) - id - 3);
    }
};

}  // namespace cachekit::testing
