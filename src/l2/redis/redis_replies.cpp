#include "l2/redis/redis_replies.hpp"

#include <charconv>
#include <cstdlib>

#include "util/buffer.hpp"
#include "util/error.hpp"

namespace cachekit::l2::redis_replies {

std::string_view text(const redisReply &reply) noexcept {
    const bool has_text =
        reply.type == REDIS_REPLY_STRING || reply.type == REDIS_REPLY_STATUS || reply.type == REDIS_REPLY_ERROR;
    if (!has_text || reply.str == nullptr) return {};
    return std::string_view(reply.str, reply.len);
}

bool is_error(const redisReply &reply) noexcept { return reply.type == REDIS_REPLY_ERROR; }

bool is_ok(const redisReply &reply) noexcept { return reply.type == REDIS_REPLY_STATUS && text(reply) == "OK"; }

bool is_noscript(const redisReply &reply) noexcept {
    return reply.type == REDIS_REPLY_ERROR && text(reply).substr(0, 8) == "NOSCRIPT";
}

std::string describe(const redisReply &reply, std::string_view where, std::string_view what) {
    std::string out;
    out.reserve(where.size() + what.size() + 40);
    out.append(where).append(": ").append(what).append(": ");
    if (reply.type == REDIS_REPLY_ERROR) return out.append(text(reply));
    return out.append("unexpected reply of type ").append(std::to_string(reply.type));
}

void unexpected(const redisReply &reply, std::string_view where, std::string_view what) {
    fail(CACHEKIT_EBACKEND, describe(reply, where, what));
}

void expect_ok(const redisReply &reply, std::string_view where, std::string_view what) {
    if (!is_ok(reply)) unexpected(reply, where, what);
}

bool value(const redisReply &reply, cachekit_buf *out, std::string_view where) {
    if (reply.type == REDIS_REPLY_STRING) {
        buf_assign(out, text(reply));
        return true;
    }
    if (reply.type == REDIS_REPLY_NIL) return false;
    unexpected(reply, where, "GET");
}

namespace {

// hiredis allocates a reply's string with malloc(len + 1), unless a program
// installed other allocators (hiredis 1.0 and later can).
bool strings_from_malloc() noexcept {
#if HIREDIS_MAJOR >= 1
    return hiredisAllocFns.mallocFn == std::malloc && hiredisAllocFns.freeFn == std::free;
#else
    return true;
#endif
}

}  // namespace

bool take_value(redisReply &reply, cachekit_buf *out, std::string_view where) {
    if (reply.type != REDIS_REPLY_STRING || reply.str == nullptr || !strings_from_malloc())
        return value(reply, out, where);
    buf_release(out);
    out->ptr = reply.str;
    out->size = reply.len;
    out->capacity = reply.len + 1;
    reply.str = nullptr;  // freeReplyObject frees no string now
    reply.len = 0;
    return true;
}

std::optional<long long> integer_of(const redisReply &reply) noexcept {
    if (reply.type != REDIS_REPLY_INTEGER) return std::nullopt;
    return reply.integer;
}

long long integer(const redisReply &reply, std::string_view where, std::string_view what) {
    std::optional<long long> n = integer_of(reply);
    if (!n) unexpected(reply, where, what);
    return *n;
}

std::optional<Ttl> pttl(const redisReply &reply, std::string_view where) {
    const long long ms = integer(reply, where, "PTTL");
    if (ms == -2) return std::nullopt;
    if (ms == -1) return std::optional<Ttl>(std::in_place, std::nullopt);
    if (ms < 0) fail(CACHEKIT_EBACKEND, std::string(where) + ": PTTL answered " + std::to_string(ms));
    return std::optional<Ttl>(std::in_place, std::chrono::milliseconds(ms));
}

std::string mget(const redisReply &reply, size_t count, cachekit_buf *outs, std::vector<bool> &found, size_t first,
                 std::string_view where) {
    if (reply.type != REDIS_REPLY_ARRAY || reply.elements != count) return describe(reply, where, "MGET");
    for (size_t i = 0; i < count; ++i) {
        const redisReply *item = reply.element[i];
        if (item->type == REDIS_REPLY_STRING) {
            buf_assign(&outs[i], text(*item));
            found[first + i] = true;
        }
    }
    return {};
}

void scan_page(const redisReply &reply, std::string_view where, ScanPage &page) {
    page.keys.clear();
    if (reply.type != REDIS_REPLY_ARRAY || reply.elements != 2 || reply.element[0]->type != REDIS_REPLY_STRING ||
        reply.element[1]->type != REDIS_REPLY_ARRAY)
        unexpected(reply, where, "SCAN");
    const redisReply &batch = *reply.element[1];
    page.cursor = text(*reply.element[0]);
    page.more = page.cursor != "0";
    page.keys.reserve(batch.elements);
    for (size_t i = 0; i < batch.elements; ++i) {
        const redisReply &key = *batch.element[i];
        if (key.type != REDIS_REPLY_STRING) unexpected(key, where, "SCAN");
        page.keys.push_back(text(key));
    }
}

std::optional<int64_t> incremented(const redisReply &reply, std::string_view where) {
    if (reply.type == REDIS_REPLY_NIL) return std::nullopt;
    if (reply.type == REDIS_REPLY_INTEGER) return static_cast<int64_t>(reply.integer);
    if (reply.type == REDIS_REPLY_STRING) {
        // The stored digits: exactly a 64-bit integer, or the reply is not the script's.
        const std::string_view digits = text(reply);
        int64_t value = 0;
        const char *end = digits.data() + digits.size();
        auto parsed = std::from_chars(digits.data(), end, value);
        if (!digits.empty() && parsed.ec == std::errc() && parsed.ptr == end) return value;
    }
    if (reply.type == REDIS_REPLY_ERROR) {
        // Inside a script Redis appends where it failed: match the reason, not the whole text.
        const std::string_view why = text(reply);
        if (why.find("overflow") != std::string_view::npos)
            fail(CACHEKIT_ETOOBIG, std::string(where) + ": incr: the result would not fit in a signed 64-bit integer");
        if (why.find("not an integer") != std::string_view::npos || why.substr(0, 9) == "WRONGTYPE")
            fail(CACHEKIT_EUNSUPPORTED, std::string(where) + ": incr: the value is not a decimal 64-bit integer");
    }
    unexpected(reply, where, "incr script");
}

bool added(const redisReply &reply, std::string_view where) {
    if (reply.type == REDIS_REPLY_NIL) return false;
    expect_ok(reply, where, "SET NX");
    return true;
}

bool lock_taken(const redisReply &reply, std::string_view where) {
    if (reply.type == REDIS_REPLY_NIL) return false;
    expect_ok(reply, where, "SET NX");
    return true;
}

bool unlocked(const redisReply &reply, std::string_view where) { return integer(reply, where, "unlock script") > 0; }

void expect_pong(const redisReply &reply, std::string_view where) {
    if (!(reply.type == REDIS_REPLY_STATUS && text(reply) == "PONG")) unexpected(reply, where, "PING");
}

}  // namespace cachekit::l2::redis_replies
