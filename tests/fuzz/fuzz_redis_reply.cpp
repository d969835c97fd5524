// The Redis reply handling we own: the input goes through hiredis's reader
// (tests/l2/resp_reader.hpp) and every reply it yields, and every element
// nested in one, goes through each mapping function of
// src/l2/redis/redis_replies.hpp. Each must either answer what the reply's shape
// says or throw cachekit::Error with CACHEKIT_EBACKEND and a message naming
// the server; anything else thrown is a finding (libFuzzer reports it).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "../l2/resp_reader.hpp"
#include "fuzz_common.hpp"
#include "l2/redis/redis_replies.hpp"
#include "util/buffer.hpp"
#include "util/error.hpp"

namespace {

namespace rr = cachekit::l2::redis_replies;

constexpr std::string_view kWhere = "redis fuzz:6379 db 0";

bool names_server(std::string_view message) { return message.substr(0, kWhere.size()) == kWhere; }

// True when `f` returned; false when it threw a well-formed cachekit::Error.
template <class F>
bool answers(F &&f) {
    try {
        f();
        return true;
    } catch (const cachekit::Error &e) {
        FUZZ_REQUIRE(e.code() == CACHEKIT_EBACKEND);
        FUZZ_REQUIRE(names_server(e.what()));
        return false;
    }
}

std::string_view bytes_of(const redisReply &r) { return std::string_view(r.str ? r.str : "", r.str ? r.len : 0); }

void check_mget(const redisReply &r, size_t count) {
    std::vector<cachekit_buf> outs(count, cachekit_buf{nullptr, 0, 0});
    std::vector<bool> found(count + 1, false);  // results start at 1: the offset must be honoured
    std::string wrong;
    bool ok = answers([&] { wrong = rr::mget(r, count, outs.data(), found, 1, kWhere); });
    FUZZ_REQUIRE(ok);
    const bool shaped = r.type == REDIS_REPLY_ARRAY && r.elements == count;
    FUZZ_REQUIRE(wrong.empty() == shaped);
    if (!shaped) FUZZ_REQUIRE(names_server(wrong));
    FUZZ_REQUIRE(!found[0]);
    for (size_t i = 0; i < count; ++i) {
        const bool hit = shaped && r.element[i]->type == REDIS_REPLY_STRING;
        FUZZ_REQUIRE(found[i + 1] == hit);
        if (hit) FUZZ_REQUIRE(cachekit::buf_view(outs[i]) == bytes_of(*r.element[i]));
        else FUZZ_REQUIRE(outs[i].size == 0);
        cachekit::buf_release(&outs[i]);
    }
}

void check_scan(const redisReply &r) {
    rr::ScanPage page;
    page.keys.assign(3, "stale");  // must be replaced, never appended to
    const bool ok = answers([&] { rr::scan_page(r, kWhere, page); });
    bool shaped = r.type == REDIS_REPLY_ARRAY && r.elements == 2 && r.element[0]->type == REDIS_REPLY_STRING &&
                  r.element[1]->type == REDIS_REPLY_ARRAY;
    if (shaped)
        for (size_t i = 0; i < r.element[1]->elements; ++i)
            shaped = shaped && r.element[1]->element[i]->type == REDIS_REPLY_STRING;
    FUZZ_REQUIRE(ok == shaped);
    if (!ok) return;
    const redisReply &batch = *r.element[1];
    FUZZ_REQUIRE(page.cursor == bytes_of(*r.element[0]));
    FUZZ_REQUIRE(page.more == (page.cursor != "0"));
    FUZZ_REQUIRE(page.keys.size() == batch.elements);
    for (size_t i = 0; i < batch.elements; ++i) FUZZ_REQUIRE(page.keys[i] == bytes_of(*batch.element[i]));
}

void check(const redisReply &r, int depth) {
    FUZZ_REQUIRE(depth < 16);  // hiredis nests at most 7 deep
    const int t = r.type;

    const std::string described = rr::describe(r, kWhere, "CMD");
    FUZZ_REQUIRE(names_server(described));
    if (t == REDIS_REPLY_ERROR) {
        const std::string_view server_text = bytes_of(r);
        FUZZ_REQUIRE(described.size() >= server_text.size() &&
                     described.compare(described.size() - server_text.size(), server_text.size(), server_text) == 0);
    }
    const bool has_text = t == REDIS_REPLY_STRING || t == REDIS_REPLY_STATUS || t == REDIS_REPLY_ERROR;
    FUZZ_REQUIRE(rr::text(r) == (has_text ? bytes_of(r) : std::string_view()));
    FUZZ_REQUIRE(rr::is_error(r) == (t == REDIS_REPLY_ERROR));
    if (rr::is_noscript(r)) FUZZ_REQUIRE(t == REDIS_REPLY_ERROR && bytes_of(r).substr(0, 8) == "NOSCRIPT");
    const bool ok_status = t == REDIS_REPLY_STATUS && bytes_of(r) == "OK";
    FUZZ_REQUIRE(rr::is_ok(r) == ok_status);

    // GET: a value, a miss, or an error.
    cachekit::Buffer out;
    bool got = false;
    bool ok = answers([&] { got = rr::value(r, out.get(), kWhere); });
    FUZZ_REQUIRE(ok == (t == REDIS_REPLY_STRING || t == REDIS_REPLY_NIL));
    FUZZ_REQUIRE(got == (t == REDIS_REPLY_STRING));
    if (got) FUZZ_REQUIRE(out.view() == bytes_of(r));

    FUZZ_REQUIRE(answers([&] { rr::expect_ok(r, kWhere, "SET"); }) == ok_status);

    long long n = 0;
    ok = answers([&] { n = rr::integer(r, kWhere, "EXISTS"); });
    FUZZ_REQUIRE(ok == (t == REDIS_REPLY_INTEGER));
    FUZZ_REQUIRE(rr::integer_of(r).has_value() == ok);
    if (ok) FUZZ_REQUIRE(n == r.integer && *rr::integer_of(r) == r.integer);

    std::optional<cachekit::l2::Ttl> ttl;
    ok = answers([&] { ttl = rr::pttl(r, kWhere); });
    FUZZ_REQUIRE(ok == (t == REDIS_REPLY_INTEGER && r.integer >= -2));
    if (ok && r.integer == -2) FUZZ_REQUIRE(!ttl);
    if (ok && r.integer == -1) FUZZ_REQUIRE(ttl && !*ttl);
    if (ok && r.integer >= 0) FUZZ_REQUIRE(ttl && *ttl && (*ttl)->count() == r.integer);

    bool taken = false;
    ok = answers([&] { taken = rr::lock_taken(r, kWhere); });
    FUZZ_REQUIRE(ok == (t == REDIS_REPLY_NIL || ok_status));
    FUZZ_REQUIRE(taken == ok_status);

    bool released = false;
    ok = answers([&] { released = rr::unlocked(r, kWhere); });
    FUZZ_REQUIRE(ok == (t == REDIS_REPLY_INTEGER));
    FUZZ_REQUIRE(released == (ok && r.integer > 0));

    FUZZ_REQUIRE(answers([&] { rr::expect_pong(r, kWhere); }) == (t == REDIS_REPLY_STATUS && bytes_of(r) == "PONG"));

    // MGET for as many keys as the array has, and for one more.
    const size_t elements = t == REDIS_REPLY_ARRAY ? r.elements : 1;
    check_mget(r, elements);
    check_mget(r, elements + 1);
    check_scan(r);

    if (t == REDIS_REPLY_ARRAY)
        for (size_t i = 0; i < r.elements; ++i) check(*r.element[i], depth + 1);
}

// take_value answers as value does, then the reply holds no string (it is
// freed once, with the buffer).
void check_take(redisReply &r) {
    cachekit::Buffer copied, taken;
    bool got_copy = false, got_taken = false;
    const bool ok = answers([&] { got_copy = rr::value(r, copied.get(), kWhere); });
    FUZZ_REQUIRE(answers([&] { got_taken = rr::take_value(r, taken.get(), kWhere); }) == ok);
    FUZZ_REQUIRE(got_taken == got_copy);
    if (!got_taken) return;
    FUZZ_REQUIRE(taken.view() == copied.view());
    FUZZ_REQUIRE(taken.get()->ptr[taken.size()] == '\0');
    FUZZ_REQUIRE(r.str == nullptr);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    resp::Reader reader(size / 3);
    if (!reader.feed(std::string_view(reinterpret_cast<const char *>(data), size))) return 0;
    resp::Reply reply;
    while (reader.next(reply) && reply) {
        check(*reply, 0);
        check_take(*reply);
    }
    return 0;
}
