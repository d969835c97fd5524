// What the Redis backend makes of a reply: hiredis parses the server's bytes
// into a redisReply tree; these functions map one such tree to a result
// (a value, a miss, a count, a SCAN page...) or to a cachekit::Error with
// CACHEKIT_EBACKEND. They read the reply only, never a connection, so the
// tests and the fuzz target can call them on any reply hiredis builds.
// `where` names the server in messages ("redis 127.0.0.1:6379 db 0"),
// `what` the command ("GET").
#pragma once

#include <hiredis/hiredis.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cachekit/cachekit.h"
#include "l2/backend.hpp"

namespace cachekit::l2::redis_replies {

struct ReplyFree {
    void operator()(redisReply *reply) const noexcept { freeReplyObject(reply); }
};
using Reply = std::unique_ptr<redisReply, ReplyFree>;

// The bytes of a string, status or error reply; "" for any other type.
std::string_view text(const redisReply &reply) noexcept;

bool is_error(const redisReply &reply) noexcept;
// A status reply reading exactly OK.
bool is_ok(const redisReply &reply) noexcept;
// EVALSHA's answer when the server does not have the script cached.
bool is_noscript(const redisReply &reply) noexcept;

// "<where>: <what>: <server's error text>" for an error reply, else
// "<where>: <what>: unexpected reply of type N".
std::string describe(const redisReply &reply, std::string_view where, std::string_view what);
[[noreturn]] void unexpected(const redisReply &reply, std::string_view where, std::string_view what);

// SET and the like: +OK, else EBACKEND.
void expect_ok(const redisReply &reply, std::string_view where, std::string_view what);

// GET: true with the bulk string copied into `out`, false for nil.
bool value(const redisReply &reply, cachekit_buf *out, std::string_view where);
// value() without the copy: the bulk string's own memory (malloc'd, NUL
// terminated, as a cachekit_buf's) becomes `out`'s, whose old memory is
// freed, and `reply` keeps no string. It copies as value() does when hiredis
// runs on allocators a program installed (hiredis 1.0 and later).
bool take_value(redisReply &reply, cachekit_buf *out, std::string_view where);

// An integer reply (UNLINK, EXISTS, PTTL, the unlock script): the number, or
// nullopt for any other type.
std::optional<long long> integer_of(const redisReply &reply) noexcept;
// The same, failing with EBACKEND for any other type.
long long integer(const redisReply &reply, std::string_view where, std::string_view what);

// PTTL's answer: nullopt = no such key, Ttl{nullopt} = no expiry, else the
// remaining milliseconds. Other negative numbers are EBACKEND.
std::optional<Ttl> pttl(const redisReply &reply, std::string_view where);

// One MGET reply for `count` keys whose results go to outs[0, count) and
// found[first, first + count): element i, when a bulk string, is copied to
// outs[i] and found[first + i] set; nil (or any other element) is a miss.
// A reply that is not an array of `count` elements changes nothing and is
// returned described (for the caller to report after reading the pipeline);
// "" otherwise.
std::string mget(const redisReply &reply, size_t count, cachekit_buf *outs, std::vector<bool> &found, size_t first,
                 std::string_view where);

// One SCAN reply: [cursor, [key...]]. The views point into the reply.
struct ScanPage {
    std::string_view cursor;
    bool more = false;  // the cursor is not "0": scan again from it
    std::vector<std::string_view> keys;
};
// Fills `page` (its key vector is reused); any other shape is EBACKEND.
void scan_page(const redisReply &reply, std::string_view where, ScanPage &page);

// The increment script's reply (redis_args::kIncrScript): the new value (the
// stored digits, or an integer); nil (no such key) is nullopt. Redis's own refusals become the codes the C API
// promises: a value that is no integer (or another type) CACHEKIT_EUNSUPPORTED,
// an overflow CACHEKIT_ETOOBIG; anything else is EBACKEND.
std::optional<int64_t> incremented(const redisReply &reply, std::string_view where);

// SET key value NX PX: true = stored (+OK), false = the key exists (nil).
bool added(const redisReply &reply, std::string_view where);

// SET name token NX PX: true = taken (+OK), false = someone else holds it (nil).
bool lock_taken(const redisReply &reply, std::string_view where);
// The compare-and-delete script's answer: true when the token owned the lock.
bool unlocked(const redisReply &reply, std::string_view where);
// PING: +PONG, else EBACKEND.
void expect_pong(const redisReply &reply, std::string_view where);

}  // namespace cachekit::l2::redis_replies
