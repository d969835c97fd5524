// The Redis reply mapping (src/l2/redis/redis_replies.hpp) without a server:
// hand-written RESP bytes go through hiredis's reader (resp_reader.hpp) and
// the replies it builds through the mapping functions. Well-formed replies
// map to values, misses, counts and SCAN pages; replies of the wrong type or
// shape are CACHEKIT_EBACKEND naming the server and the command (with the
// server's text for error replies); streams hiredis itself rejects (bad
// headers, lengths out of range, nesting past 7, RESP3 types) never reach
// the mapping.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "l2/redis/redis_replies.hpp"
#include "resp_reader.hpp"
#include "util/buffer.hpp"
#include "util/error.hpp"

#include "l2_test_support.hpp"

using namespace std::string_literals;
namespace rr = cachekit::l2::redis_replies;
using cachekit::Buffer;
using cachekit::l2::Ttl;
using rr::Reply;

namespace {

constexpr std::string_view kWhere = "redis test:6379 db 0";
constexpr size_t kMaxElements = 1 << 20;

// Every complete reply in `bytes`; `error` gets the reader's complaint, if any.
std::vector<Reply> parse(std::string_view bytes, std::string *error = nullptr) {
    resp::Reader reader(kMaxElements);
    std::vector<Reply> out;
    assert_true(reader.feed(bytes));
    Reply reply;
    while (reader.next(reply)) {
        if (!reply) return out;
        out.push_back(std::move(reply));
    }
    if (error) *error = reader.error();
    else fail_msg("hiredis refused the stream: %s", reader.error());
    return out;
}

// The one reply `bytes` hold.
Reply one(std::string_view bytes) {
    std::vector<Reply> all = parse(bytes);
    if (all.size() != 1) fail_msg("%zu replies, expected one", all.size());
    return std::move(all.front());
}

struct Failure {
    int code = 0;  // 0: no exception
    std::string message;
};

template <class Fn>
Failure failure_of(Fn &&fn) {
    try {
        fn();
    } catch (const cachekit::Error &e) {
        return {e.code(), e.what()};
    }
    return {};
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }
bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

// `fn` fails with EBACKEND, a message naming the server, `what` and `detail`.
template <class Fn>
void expect_backend_error(Fn &&fn, std::string_view what, std::string_view detail) {
    Failure f = failure_of(fn);
    if (f.code != CACHEKIT_EBACKEND) fail_msg("code %d, expected EBACKEND (message \"%s\")", f.code, f.message.c_str());
    if (!starts_with(f.message, kWhere) || !contains(f.message, what) || !contains(f.message, detail))
        fail_msg("message \"%s\" lacks the server, \"%.*s\" or \"%.*s\"", f.message.c_str(), int(what.size()),
                 what.data(), int(detail.size()), detail.data());
}

void test_get_values_and_misses(void **) {
    Buffer out;
    assert_true(rr::value(*one("$5\r\nhello\r\n"), out.get(), kWhere));
    assert_true(out.view() == "hello");
    assert_true(rr::value(*one("$0\r\n\r\n"), out.get(), kWhere));
    assert_true(out.view().empty());
    // Binary-safe: NUL and CRLF inside the value.
    assert_true(rr::value(*one("$6\r\na\0\r\nb\xff\r\n"s), out.get(), kWhere));
    assert_true(out.view() == "a\0\r\nb\xff"s);
    // Nil (bulk or array) is a miss and leaves the buffer alone.
    cachekit::buf_assign(out.get(), std::string_view("kept"));
    assert_false(rr::value(*one("$-1\r\n"), out.get(), kWhere));
    assert_false(rr::value(*one("*-1\r\n"), out.get(), kWhere));
    assert_true(out.view() == "kept");
}

// take_value: the same answers as value, the reply's string handed over
// (not copied) into a buffer the library can grow and dispose as its own.
void test_take_value_hands_the_string_over(void **) {
    Buffer out;
    cachekit::buf_assign(out.get(), std::string_view("an older, longer value"));
    Reply reply = one("$6\r\na\0\r\nb\xff\r\n"s);
    const char *str = reply->str;
    assert_true(rr::take_value(*reply, out.get(), kWhere));
    assert_true(out.view() == "a\0\r\nb\xff"s);
    assert_ptr_equal(out.get()->ptr, str);
    assert_int_equal(out.get()->ptr[out.size()], 0);
    assert_true(out.get()->capacity >= out.size() + 1);
    assert_null(reply->str);
    reply.reset();  // frees the reply alone
    cachekit::buf_assign(out.get(), std::string_view("a value that needs the buffer to grow past its first size"));
    assert_true(out.view() == "a value that needs the buffer to grow past its first size");
    assert_true(rr::take_value(*one("$0\r\n\r\n"), out.get(), kWhere));
    assert_true(out.view().empty());
    // Nil is a miss and leaves the buffer alone; other types fail as value's.
    cachekit::buf_assign(out.get(), std::string_view("kept"));
    assert_false(rr::take_value(*one("$-1\r\n"), out.get(), kWhere));
    assert_false(rr::take_value(*one("*-1\r\n"), out.get(), kWhere));
    assert_true(out.view() == "kept");
    expect_backend_error([&] { rr::take_value(*one("-ERR boom\r\n"), out.get(), kWhere); }, "GET", "ERR boom");
    expect_backend_error([&] { rr::take_value(*one(":1\r\n"), out.get(), kWhere); }, "GET", "unexpected reply of type 3");
    assert_true(out.view() == "kept");
}

void test_get_of_other_types_is_an_error(void **) {
    Buffer out;
    expect_backend_error([&] { rr::value(*one("-ERR boom\r\n"), out.get(), kWhere); }, "GET", "ERR boom");
    expect_backend_error([&] { rr::value(*one("-WRONGTYPE Operation\r\n"), out.get(), kWhere); }, "GET: ",
                         "WRONGTYPE Operation");
    expect_backend_error([&] { rr::value(*one("+OK\r\n"), out.get(), kWhere); }, "GET", "unexpected reply of type 5");
    expect_backend_error([&] { rr::value(*one(":1\r\n"), out.get(), kWhere); }, "GET", "unexpected reply of type 3");
    expect_backend_error([&] { rr::value(*one("*1\r\n$1\r\na\r\n"), out.get(), kWhere); }, "GET",
                         "unexpected reply of type 2");
    expect_backend_error([&] { rr::value(*one("*0\r\n"), out.get(), kWhere); }, "GET", "type 2");
    assert_int_equal(out.size(), 0);
}

void test_status_replies(void **) {
    assert_true(rr::is_ok(*one("+OK\r\n")));
    rr::expect_ok(*one("+OK\r\n"), kWhere, "SET");
    rr::expect_pong(*one("+PONG\r\n"), kWhere);
    // Only the status OK / PONG: not a bulk string, another case, a longer word, or an error.
    for (const char *bad : {"$2\r\nOK\r\n", "+ok\r\n", "+OKAY\r\n", "+\r\n", "$-1\r\n", ":1\r\n"}) {
        assert_false(rr::is_ok(*one(bad)));
        expect_backend_error([&] { rr::expect_ok(*one(bad), kWhere, "SET"); }, "SET", "unexpected reply of type");
    }
    expect_backend_error([&] { rr::expect_ok(*one("-OOM command not allowed\r\n"), kWhere, "SET"); }, "SET",
                         "OOM command not allowed");
    for (const char *bad : {"$4\r\nPONG\r\n", "+pong\r\n", "+OK\r\n"})
        expect_backend_error([&] { rr::expect_pong(*one(bad), kWhere); }, "PING", "unexpected reply of type");
    expect_backend_error([&] { rr::expect_pong(*one("-LOADING Redis is loading\r\n"), kWhere); }, "PING",
                         "LOADING Redis is loading");
}

void test_integers_and_ttls(void **) {
    assert_int_equal(rr::integer(*one(":0\r\n"), kWhere, "EXISTS"), 0);
    assert_int_equal(rr::integer(*one(":9223372036854775807\r\n"), kWhere, "UNLINK"), INT64_MAX);
    assert_int_equal(rr::integer(*one(":-9223372036854775808\r\n"), kWhere, "UNLINK"), INT64_MIN);
    assert_false(rr::integer_of(*one("$1\r\n1\r\n")).has_value());
    expect_backend_error([&] { rr::integer(*one("$1\r\n1\r\n"), kWhere, "EXISTS"); }, "EXISTS", "type 1");
    expect_backend_error([&] { rr::integer(*one("-ERR wrong\r\n"), kWhere, "UNLINK"); }, "UNLINK", "ERR wrong");

    std::optional<Ttl> t = rr::pttl(*one(":-2\r\n"), kWhere);
    assert_false(t.has_value());  // no such key
    t = rr::pttl(*one(":-1\r\n"), kWhere);
    assert_true(t.has_value() && !t->has_value());  // no expiry
    t = rr::pttl(*one(":1500\r\n"), kWhere);
    assert_true(t && *t && (*t)->count() == 1500);
    t = rr::pttl(*one(":0\r\n"), kWhere);
    assert_true(t && *t && (*t)->count() == 0);
    expect_backend_error([&] { rr::pttl(*one(":-3\r\n"), kWhere); }, "PTTL", "answered -3");
    expect_backend_error([&] { rr::pttl(*one(":-9223372036854775808\r\n"), kWhere); }, "PTTL", "answered");
    expect_backend_error([&] { rr::pttl(*one("$-1\r\n"), kWhere); }, "PTTL", "type 4");
}

void test_lock_and_unlock_replies(void **) {
    assert_true(rr::lock_taken(*one("+OK\r\n"), kWhere));
    assert_false(rr::lock_taken(*one("$-1\r\n"), kWhere));  // held by someone else
    expect_backend_error([&] { rr::lock_taken(*one("-READONLY You can't write\r\n"), kWhere); }, "SET NX",
                         "READONLY You can't write");
    expect_backend_error([&] { rr::lock_taken(*one(":1\r\n"), kWhere); }, "SET NX", "type 3");

    assert_true(rr::unlocked(*one(":1\r\n"), kWhere));
    assert_false(rr::unlocked(*one(":0\r\n"), kWhere));
    assert_false(rr::unlocked(*one(":-1\r\n"), kWhere));
    expect_backend_error([&] { rr::unlocked(*one("$-1\r\n"), kWhere); }, "unlock script", "type 4");

    assert_true(rr::is_noscript(*one("-NOSCRIPT No matching script. Please use EVAL.\r\n")));
    assert_false(rr::is_noscript(*one("-ERR NOSCRIPT\r\n")));
    assert_false(rr::is_noscript(*one("+NOSCRIPT\r\n")));
    assert_false(rr::is_noscript(*one("-NOSCRI\r\n")));
}

// The increment script and SET NX: values, misses, Redis's refusals mapped to
// their own codes, and hostile shapes as EBACKEND (never a value).
void test_incr_and_add_replies(void **) {
    assert_int_equal(*rr::incremented(*one(":42\r\n"), kWhere), 42);
    assert_int_equal(*rr::incremented(*one(":-9223372036854775808\r\n"), kWhere), INT64_MIN);
    assert_false(rr::incremented(*one("$-1\r\n"), kWhere).has_value());  // no such key
    Failure f = failure_of([&] {
        rr::incremented(*one("-ERR Error running script (call to f_4c4b): @user_script:1: ERR value is not an "
                             "integer or out of range\r\n"),
                        kWhere);
    });
    assert_int_equal(f.code, CACHEKIT_EUNSUPPORTED);
    assert_true(contains(f.message, "not a decimal 64-bit integer"));
    f = failure_of([&] { rr::incremented(*one("-ERR increment or decrement would overflow\r\n"), kWhere); });
    assert_int_equal(f.code, CACHEKIT_ETOOBIG);
    f = failure_of([&] {
        rr::incremented(*one("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"), kWhere);
    });
    assert_int_equal(f.code, CACHEKIT_EUNSUPPORTED);
    expect_backend_error([&] { rr::incremented(*one("-READONLY You can't write\r\n"), kWhere); }, "incr script",
                         "READONLY");
    assert_int_equal(*rr::incremented(*one("$19\r\n9223372036854775807\r\n"), kWhere), INT64_MAX);
    expect_backend_error([&] { rr::incremented(*one("$3\r\nabc\r\n"), kWhere); }, "incr script", "type 1");
    expect_backend_error([&] { rr::incremented(*one("$0\r\n\r\n"), kWhere); }, "incr script", "type 1");
    expect_backend_error([&] { rr::incremented(*one("$3\r\n42 \r\n"), kWhere); }, "incr script", "type 1");
    expect_backend_error([&] { rr::incremented(*one("$19\r\n9223372036854775808\r\n"), kWhere); }, "incr script",
                         "type 1");
    expect_backend_error([&] { rr::incremented(*one("+OK\r\n"), kWhere); }, "incr script", "type 5");
    expect_backend_error([&] { rr::incremented(*one("*1\r\n:1\r\n"), kWhere); }, "incr script", "type 2");

    assert_true(rr::added(*one("+OK\r\n"), kWhere));
    assert_false(rr::added(*one("$-1\r\n"), kWhere));  // the key exists
    expect_backend_error([&] { rr::added(*one("+QUEUED\r\n"), kWhere); }, "SET NX", "type 5");
    expect_backend_error([&] { rr::added(*one(":1\r\n"), kWhere); }, "SET NX", "type 3");
    expect_backend_error([&] { rr::added(*one("-OOM command not allowed\r\n"), kWhere); }, "SET NX", "OOM");
}

struct MgetOutputs {
    std::vector<cachekit_buf> outs;
    std::vector<bool> found;
    MgetOutputs(size_t n, size_t first) : outs(n, cachekit_buf{nullptr, 0, 0}), found(first + n, false) {}
    ~MgetOutputs() {
        for (cachekit_buf &b : outs) cachekit::buf_release(&b);
    }
    std::string_view out(size_t i) const { return cachekit::buf_view(outs[i]); }
};

void test_mget_element_mapping(void **) {
    // Results land at found[first + i] and outs[i].
    MgetOutputs m(3, 2);
    Reply r = one("*3\r\n$1\r\na\r\n$-1\r\n$3\r\nc\0c\r\n"s);
    assert_true(rr::mget(*r, 3, m.outs.data(), m.found, 2, kWhere).empty());
    assert_true((m.found == std::vector<bool>{false, false, true, false, true}));
    assert_true(m.out(0) == "a");
    assert_int_equal(m.outs[1].size, 0);
    assert_true(m.out(2) == "c\0c"s);

    // Elements of other types are misses, as nil is.
    MgetOutputs odd(4, 0);
    r = one("*4\r\n:1\r\n-ERR inside\r\n*1\r\n$1\r\nx\r\n+OK\r\n");
    assert_true(rr::mget(*r, 4, odd.outs.data(), odd.found, 0, kWhere).empty());
    assert_true((odd.found == std::vector<bool>(4, false)));
}

void test_mget_wrong_shapes_change_nothing(void **) {
    struct Case {
        std::string bytes;
        std::string detail;
    };
    const Case cases[] = {
        {"*2\r\n$1\r\na\r\n$1\r\nb\r\n", "type 2"},  // two elements for three keys
        {"*4\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n", "type 2"},
        {"*0\r\n", "type 2"},
        {"*-1\r\n", "type 4"},
        {"-ERR max number of clients reached\r\n", "ERR max number of clients reached"},
        {"$3\r\nabc\r\n", "type 1"},
    };
    for (const Case &c : cases) {
        MgetOutputs m(3, 0);
        std::string error = rr::mget(*one(c.bytes), 3, m.outs.data(), m.found, 0, kWhere);
        if (!starts_with(error, kWhere) || !contains(error, "MGET") || !contains(error, c.detail))
            fail_msg("MGET of %s: \"%s\"", c.bytes.c_str(), error.c_str());
        assert_true((m.found == std::vector<bool>(3, false)));
        for (const cachekit_buf &b : m.outs) assert_null(b.ptr);
    }
}

void test_scan_pages(void **) {
    // (the page's views point into the reply: it must outlive them)
    rr::ScanPage page;
    Reply r = one("*2\r\n$1\r\n0\r\n*0\r\n");
    rr::scan_page(*r, kWhere, page);
    assert_true(page.cursor == "0");
    assert_false(page.more);
    assert_true(page.keys.empty());

    r = one("*2\r\n$3\r\n176\r\n*3\r\n$4\r\nns:a\r\n$0\r\n\r\n$3\r\nb\0b\r\n"s);
    rr::scan_page(*r, kWhere, page);
    assert_true(page.cursor == "176");
    assert_true(page.more);
    assert_int_equal(page.keys.size(), 3);
    assert_true(page.keys[0] == "ns:a");
    assert_true(page.keys[1].empty());
    assert_true(page.keys[2] == "b\0b"s);

    // The last page: keys and cursor 0. The key vector is reused, not appended to.
    r = one("*2\r\n$1\r\n0\r\n*1\r\n$1\r\nz\r\n");
    rr::scan_page(*r, kWhere, page);
    assert_false(page.more);
    assert_int_equal(page.keys.size(), 1);
    assert_true(page.keys[0] == "z");
    // Any cursor other than "0" continues (the server's business to honour it).
    r = one("*2\r\n$2\r\n00\r\n*0\r\n");
    rr::scan_page(*r, kWhere, page);
    assert_true(page.more);
}

void test_scan_wrong_shapes(void **) {
    struct Case {
        const char *bytes;
        const char *detail;
    };
    const Case cases[] = {
        {"*1\r\n$1\r\n0\r\n", "type 2"},                                   // no batch
        {"*3\r\n$1\r\n0\r\n*0\r\n*0\r\n", "type 2"},                       // one element too many
        {"*0\r\n", "type 2"},
        {"*2\r\n:0\r\n*0\r\n", "type 2"},                                 // integer cursor
        {"*2\r\n$-1\r\n*0\r\n", "type 2"},                                // nil cursor
        {"*2\r\n$1\r\n0\r\n$1\r\nk\r\n", "type 2"},                       // batch not an array
        {"*2\r\n$1\r\n0\r\n*-1\r\n", "type 2"},                           // nil batch
        {"*2\r\n$1\r\n0\r\n*2\r\n$1\r\nk\r\n:7\r\n", "type 3"},           // a key that is an integer
        {"*2\r\n$1\r\n0\r\n*1\r\n$-1\r\n", "type 4"},                     // a nil key
        {"*2\r\n$1\r\n0\r\n*1\r\n*1\r\n$1\r\nk\r\n", "type 2"},           // a key that is an array
        {"*2\r\n$1\r\n0\r\n*1\r\n-ERR in batch\r\n", "ERR in batch"},     // an error among the keys
        {"-ERR invalid cursor\r\n", "ERR invalid cursor"},
        {"+OK\r\n", "type 5"},
    };
    for (const Case &c : cases) {
        rr::ScanPage page;
        expect_backend_error([&] { rr::scan_page(*one(c.bytes), kWhere, page); }, "SCAN", c.detail);
    }
}

void test_describe(void **) {
    assert_true(rr::describe(*one("-ERR x y\r\n"), kWhere, "CMD") == std::string(kWhere) + ": CMD: ERR x y");
    assert_true(rr::describe(*one("-\r\n"), kWhere, "CMD") == std::string(kWhere) + ": CMD: ");
    assert_true(rr::describe(*one(":5\r\n"), kWhere, "CMD") == std::string(kWhere) + ": CMD: unexpected reply of type 3");
    assert_true(rr::text(*one(":5\r\n")).empty());
    assert_true(rr::text(*one("*0\r\n")).empty());
    assert_true(rr::text(*one("+hi\r\n")) == "hi");
    assert_true(rr::is_error(*one("-\r\n")));
    assert_false(rr::is_error(*one("+ERR\r\n")));
}

// What hiredis does with hostile streams before anything is mapped.
void test_hostile_streams(void **) {
    std::string error;
    // Declared lengths far past the bytes: no reply, no error, nothing allocated for the bulk.
    assert_int_equal(parse("$9223372036854775807\r\nabc", &error).size(), 0);
    assert_true(error.empty());
    assert_int_equal(parse("*1000000\r\n:1\r\n:2\r\n", &error).size(), 0);
    assert_true(error.empty());
    // An array header hiredis would calloc 16 GiB for: refused by the reader's guard.
    assert_int_equal(parse("*2147483647\r\n", &error).size(), 0);
    assert_true(contains(error, "Out of memory"));
    // Lengths out of range, malformed numbers, RESP3 types, nesting past 7.
    const char *rejected[] = {"*2147483648\r\n", "*-2\r\n", "$-2\r\n", "$99999999999999999999\r\n", ":12x\r\n",
                              ":99999999999999999999\r\n", "%1\r\n+a\r\n+b\r\n", "_\r\n", "#t\r\n",
                              "*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n:1\r\n"};
    for (const char *bytes : rejected) {
        error.clear();
        std::vector<Reply> got = parse(bytes, &error);
        if (!got.empty() || error.empty()) fail_msg("%s: %zu replies, error \"%s\"", bytes, got.size(), error.c_str());
    }
    // Replies before a broken one are still delivered (and mapped normally).
    error.clear();
    std::vector<Reply> got = parse("+OK\r\n:3\r\n!oops\r\n", &error);
    assert_int_equal(got.size(), 2);
    assert_true(rr::is_ok(*got[0]));
    assert_int_equal(rr::integer(*got[1], kWhere, "EXISTS"), 3);
    assert_false(error.empty());
    // Arrays nested 7 levels below the top one are fine.
    Reply deep = one("*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n:1\r\n");
    expect_backend_error([&] { rr::integer(*deep, kWhere, "EXISTS"); }, "EXISTS", "type 2");
}

// A pipeline's replies come out in order, also when a reply is split across reads.
void test_pipelines_and_split_reads(void **) {
    std::vector<Reply> got = parse("+OK\r\n$-1\r\n:2\r\n*2\r\n$1\r\n0\r\n*0\r\n");
    assert_int_equal(got.size(), 4);
    rr::expect_ok(*got[0], kWhere, "SET");
    assert_true(rr::lock_taken(*got[0], kWhere));
    assert_false(rr::lock_taken(*got[1], kWhere));
    assert_int_equal(rr::integer(*got[2], kWhere, "UNLINK"), 2);
    rr::ScanPage page;
    rr::scan_page(*got[3], kWhere, page);
    assert_false(page.more);

    const std::string stream = "*2\r\n$5\r\nhello\r\n$-1\r\n";
    for (size_t cut = 1; cut < stream.size(); ++cut) {
        resp::Reader reader(kMaxElements);
        Reply reply;
        assert_true(reader.feed(std::string_view(stream).substr(0, cut)));
        assert_true(reader.next(reply));
        assert_null(reply.get());
        assert_true(reader.feed(std::string_view(stream).substr(cut)));
        assert_true(reader.next(reply));
        assert_non_null(reply.get());
        MgetOutputs m(2, 0);
        assert_true(rr::mget(*reply, 2, m.outs.data(), m.found, 0, kWhere).empty());
        assert_true(m.found[0] && !m.found[1]);
        assert_true(m.out(0) == "hello");
    }
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_get_values_and_misses),
        cmocka_unit_test(test_take_value_hands_the_string_over),
        cmocka_unit_test(test_get_of_other_types_is_an_error),
        cmocka_unit_test(test_status_replies),
        cmocka_unit_test(test_integers_and_ttls),
        cmocka_unit_test(test_lock_and_unlock_replies),
        cmocka_unit_test(test_incr_and_add_replies),
        cmocka_unit_test(test_mget_element_mapping),
        cmocka_unit_test(test_mget_wrong_shapes_change_nothing),
        cmocka_unit_test(test_scan_pages),
        cmocka_unit_test(test_scan_wrong_shapes),
        cmocka_unit_test(test_describe),
        cmocka_unit_test(test_hostile_streams),
        cmocka_unit_test(test_pipelines_and_split_reads),
    };
    return cmocka_run_group_tests_name("l2_redis_replies", tests, nullptr, nullptr);
}
