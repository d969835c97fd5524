// The RESP guard (src/l2/redis/resp_guard.hpp) on hand-written bytes: well-formed
// replies of each command's shape pass in any chunking; a bulk string or a
// reply over the limit, an array the command cannot answer, an endless line,
// a bad header and stray bytes are refused from the first offending byte,
// with the reason named.
#include <string>
#include <string_view>

#include "l2/redis/resp_guard.hpp"

#include "l2_test_support.hpp"

using cachekit::l2::ReplyShape;
using cachekit::l2::RespGuard;
using namespace std::string_literals;

namespace {

// Feed `bytes` whole and one byte at a time: both must agree.
bool passes(std::initializer_list<ReplyShape> shapes, std::string_view bytes, uint64_t limit = 1 << 20,
            std::string *why = nullptr, RespGuard::Refusal *kind = nullptr) {
    RespGuard whole(limit), bytewise(limit);
    for (const ReplyShape &s : shapes) {
        whole.expect(s);
        bytewise.expect(s);
    }
    const bool a = whole.feed(bytes.data(), bytes.size());
    bool b = true;
    for (size_t i = 0; i < bytes.size() && b; ++i) b = bytewise.feed(bytes.data() + i, 1);
    assert_int_equal(a, b);
    assert_string_equal(whole.why().c_str(), bytewise.why().c_str());
    if (why) *why = whole.why();
    if (kind) *kind = whole.refusal();
    if (a) assert_int_equal(whole.pending(), 0);
    return a;
}

void refused(std::initializer_list<ReplyShape> shapes, std::string_view bytes, const char *reason,
             RespGuard::Refusal expected_kind = RespGuard::Refusal::Malformed, uint64_t limit = 1 << 20) {
    std::string why;
    RespGuard::Refusal kind;
    assert_false(passes(shapes, bytes, limit, &why, &kind));
    if (why.find(reason) == std::string::npos) fail_msg("refused for \"%s\", expected \"%s\"", why.c_str(), reason);
    assert_int_equal(int(kind), int(expected_kind));
}

void test_well_formed_replies_pass(void **) {
    const ReplyShape scalar = ReplyShape::scalar();
    assert_true(passes({scalar}, "$5\r\nhello\r\n"));
    assert_true(passes({scalar}, "$0\r\n\r\n"));
    assert_true(passes({scalar}, "$-1\r\n"));
    assert_true(passes({scalar}, "+OK\r\n"));
    assert_true(passes({scalar}, "-ERR wrong\rtype\r\n"));  // a lone CR is text, as for hiredis
    assert_true(passes({scalar}, ":-12345\r\n"));
    assert_true(passes({scalar}, "$4\r\n\r\n\r\n\r\n"));  // CRLF inside a bulk string is data
    // GET + PTTL pipelined, in one chunk.
    assert_true(passes({scalar, scalar}, "$2\r\nv1\r\n:1500\r\n"));
    // MGET of 3 keys: values, a miss, an odd element.
    assert_true(passes({ReplyShape::array(3)}, "*3\r\n$1\r\na\r\n$-1\r\n:7\r\n"));
    assert_true(passes({ReplyShape::array(3)}, "*-1\r\n"));
    assert_true(passes({ReplyShape::array(3)}, "-WRONGTYPE x\r\n"));
    // SCAN: [cursor, [keys]], an empty page too.
    const ReplyShape scan = ReplyShape::nested(2, 1000);
    assert_true(passes({scan}, "*2\r\n$3\r\n123\r\n*2\r\n$1\r\na\r\n$1\r\nb\r\n"));
    assert_true(passes({scan, scalar}, "*2\r\n$1\r\n0\r\n*0\r\n:3\r\n"));
}

void test_partial_reply_is_pending(void **) {
    RespGuard g(1024);
    g.expect(ReplyShape::scalar());
    assert_true(g.feed("$10\r\nabc", 8));
    assert_int_equal(g.pending(), 1);
    assert_true(g.feed("defghij\r\n", 9));
    assert_int_equal(g.pending(), 0);
}

void test_oversized_bulk_refused_at_its_header(void **) {
    // Refused from "$2000000000\r\n" alone: not one payload byte is needed.
    refused({ReplyShape::scalar()}, "$2000000000\r\n", "a bulk string of 2000000000 bytes",
            RespGuard::Refusal::TooBig, 100 << 20);
    // Exactly at the limit (payload + CRLF + header) passes; one byte more does not.
    const std::string value(100, 'x');
    const std::string reply = "$100\r\n" + value + "\r\n";  // 108 bytes
    assert_true(passes({ReplyShape::scalar()}, reply, reply.size()));
    refused({ReplyShape::scalar()}, reply, "over the reply limit of 107", RespGuard::Refusal::TooBig, reply.size() - 1);
}

// Fed in three pieces cut at `a` and `b`: the verdict and reason of the
// whole feed, and no reply left pending when it passes. Returns the verdict.
bool same_in_three_pieces(std::initializer_list<ReplyShape> shapes, std::string_view bytes, uint64_t limit) {
    RespGuard whole(limit);
    for (const ReplyShape &s : shapes) whole.expect(s);
    const bool verdict = whole.feed(bytes.data(), bytes.size());
    for (size_t a = 0; a <= bytes.size(); ++a) {
        for (size_t b = a; b <= bytes.size(); ++b) {
            RespGuard g(limit);
            for (const ReplyShape &s : shapes) g.expect(s);
            bool ok = g.feed(bytes.data(), a);
            ok = ok && g.feed(bytes.data() + a, b - a);
            ok = ok && g.feed(bytes.data() + b, bytes.size() - b);
            if (ok != verdict || g.why() != whole.why())
                fail_msg("cut at %zu and %zu: %d \"%s\", whole: %d \"%s\"", a, b, int(ok), g.why().c_str(),
                         int(verdict), whole.why().c_str());
            if (ok) assert_int_equal(g.pending(), 0);
        }
    }
    return verdict;
}

// A bulk body is skipped by its declared length, whatever it holds and
// wherever the chunks end: bytes in it that look like RESP (lines, headers,
// CRLF) are data, never structure.
void test_bulk_bodies_split_at_every_boundary(void **) {
    const std::string body = "*3\r\n$-1\r\n+OK\r\n:7\r\n" + std::string(20, 'v') + "\r\n";
    const std::string bulk = "$" + std::to_string(body.size()) + "\r\n" + body + "\r\n";
    const ReplyShape scalar = ReplyShape::scalar();
    // GET + PTTL pipelined, and two values in a row.
    assert_true(same_in_three_pieces({scalar, scalar}, bulk + ":1500\r\n", 1 << 20));
    assert_true(same_in_three_pieces({scalar, scalar}, bulk + bulk, 1 << 20));
    // MGET: values, a nil and an empty one.
    assert_true(same_in_three_pieces({ReplyShape::array(3)}, "*3\r\n" + bulk + "$-1\r\n$0\r\n\r\n", 1 << 20));
    // Exactly at the limit, split anywhere, still passes; a byte less does not.
    assert_true(same_in_three_pieces({scalar}, bulk, bulk.size()));
    assert_false(same_in_three_pieces({scalar}, bulk, bulk.size() - 1));
    // A body one byte longer than declared: refused at that byte, however cut.
    assert_false(same_in_three_pieces({scalar}, "$" + std::to_string(body.size()) + "\r\n" + body + "x\r\n", 1 << 20));
    // A body cut short by the next reply's bytes is still body: the CRLF check comes at its declared end.
    assert_true(same_in_three_pieces({scalar, scalar}, "$10\r\nabc\r\n:1\r\nx\r\n:2\r\n", 1 << 20));
}

// A declared bulk length past the limit is refused at its header, before
// any body byte, in any chunking, up to the largest length RESP can state.
void test_bulk_length_over_the_limit(void **) {
    const ReplyShape scalar = ReplyShape::scalar();
    refused({scalar}, "$9223372036854775807\r\n", "a bulk string of 9223372036854775807 bytes",
            RespGuard::Refusal::TooBig, 100 << 20);
    refused({scalar}, "$1025\r\n", "a bulk string of 1025 bytes, over the reply limit of 1024",
            RespGuard::Refusal::TooBig, 1024);
    // The header's own bytes count: 1018 + CRLF + "$1018\r\n" (7) passes a 1027-byte limit, not 1026.
    assert_true(same_in_three_pieces({scalar}, "$1018\r\n" + std::string(1018, 'b') + "\r\n", 1027));
    refused({scalar}, "$1018\r\n", "a bulk string of 1018 bytes", RespGuard::Refusal::TooBig, 1026);
    // In an array, the budget left after the earlier elements.
    refused({ReplyShape::array(2)}, "*2\r\n$500\r\n" + std::string(500, 'a') + "\r\n$500\r\n",
            "a bulk string of 500 bytes", RespGuard::Refusal::TooBig, 1000);
    assert_false(same_in_three_pieces({scalar}, "$2000000000\r\n", 100 << 20));
}

void test_total_reply_bytes_bounded(void **) {
    // Each MGET value fits; together they do not.
    std::string reply = "*3\r\n";
    for (int i = 0; i < 3; ++i) reply += "$40\r\n" + std::string(40, 'v') + "\r\n";
    assert_true(passes({ReplyShape::array(3)}, reply, reply.size()));
    refused({ReplyShape::array(3)}, reply, "the reply passed the limit of 100 bytes", RespGuard::Refusal::TooBig, 100);
    // Each pipelined reply has its own budget.
    const std::string one = "$40\r\n" + std::string(40, 'v') + "\r\n";
    assert_true(passes({ReplyShape::scalar(), ReplyShape::scalar()}, one + one, one.size()));
    // A long run of tiny elements is bounded by the total too.
    std::string many = "*1000\r\n";
    for (int i = 0; i < 1000; ++i) many += ":1\r\n";
    refused({ReplyShape::array(1000)}, many, "the reply passed the limit of 500 bytes", RespGuard::Refusal::TooBig, 500);
}

void test_arrays_the_command_cannot_answer(void **) {
    refused({ReplyShape::scalar()}, "*2147483647\r\n", "an array where the command answers none");
    refused({ReplyShape::scalar()}, "*1\r\n", "an array where the command answers none");
    refused({ReplyShape::array(3)}, "*4\r\n", "an array of 4 elements where at most 3 can come");
    refused({ReplyShape::array(3)}, "*2147483647\r\n", "an array of 2147483647 elements");
    refused({ReplyShape::array(3)}, "*2\r\n*1\r\n", "arrays nested deeper than the command answers");
    refused({ReplyShape::nested(2, 1000)}, "*3\r\n", "at most 2 can come");
    refused({ReplyShape::nested(2, 1000)}, "*2\r\n$1\r\n0\r\n*1001\r\n", "an array of 1001 elements");
    refused({ReplyShape::nested(2, 1000)}, "*2\r\n$1\r\n0\r\n*1\r\n*1\r\n", "nested deeper");
}

void test_endless_lines_refused(void **) {
    refused({ReplyShape::scalar()}, "+" + std::string(RespGuard::kMaxLine + 1, 'a'), "a status line longer than 8192");
    refused({ReplyShape::scalar()}, "-" + std::string(RespGuard::kMaxLine + 1, 'a'), "an error line longer");
    assert_true(passes({ReplyShape::scalar()}, "+" + std::string(RespGuard::kMaxLine, 'a') + "\r\n"));
    refused({ReplyShape::scalar()}, ":" + std::string(100, '1'), "an integer line longer than 24");
    refused({ReplyShape::scalar()}, "$" + std::string(100, '1'), "a bulk length line longer than 24");
    refused({ReplyShape::array(1)}, "*" + std::string(100, '1'), "an array length line longer than 24");
}

void test_bad_bytes_refused(void **) {
    refused({ReplyShape::scalar()}, "$abc\r\n", "a bulk length line reading \"abc\"");
    refused({ReplyShape::scalar()}, "$-2\r\n", "a bulk length line reading \"-2\"");
    refused({ReplyShape::scalar()}, "$99999999999999999999\r\n", "a bulk length line reading");
    refused({ReplyShape::scalar()}, "$\r\n", "a bulk length line reading");
    refused({ReplyShape::array(3)}, "*x\r\n", "an array length line reading \"x\"");
    refused({ReplyShape::scalar()}, ":1+\r\n", "an integer line reading \"1+\"");
    refused({ReplyShape::array(3)}, "*-0\r\n", "an array length line reading \"-0\"");
    refused({ReplyShape::scalar()}, "$05\r\nhello\r\n", "a bulk length line reading \"05\"");
    refused({ReplyShape::scalar()}, "$1\r\rx", "a CR without LF in a length line");
    refused({ReplyShape::scalar()}, "$3\r\nabcXY", "a bulk string not followed by CRLF");
    refused({ReplyShape::scalar()}, "%2\r\n", "unknown reply type byte 0x25");  // RESP3 map
    refused({ReplyShape::scalar()}, "\x00"s, "unknown reply type byte 0x00");
    refused({ReplyShape::scalar()}, "+OK\r\n+EXTRA\r\n", "bytes after the last reply expected");
    refused({}, "+OK\r\n", "bytes after the last reply expected");
}

void test_refusal_is_final_and_reset_clears_it(void **) {
    RespGuard g(1024);
    g.expect(ReplyShape::scalar());
    assert_false(g.feed("*5\r\n", 4));
    assert_false(g.feed("+OK\r\n", 5));  // dead until reset
    g.reset();
    g.expect(ReplyShape::scalar());
    assert_true(g.feed("+OK\r\n", 5));
    assert_int_equal(int(g.refusal()), int(RespGuard::Refusal::None));
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_well_formed_replies_pass),
        cmocka_unit_test(test_partial_reply_is_pending),
        cmocka_unit_test(test_oversized_bulk_refused_at_its_header),
        cmocka_unit_test(test_bulk_bodies_split_at_every_boundary),
        cmocka_unit_test(test_bulk_length_over_the_limit),
        cmocka_unit_test(test_total_reply_bytes_bounded),
        cmocka_unit_test(test_arrays_the_command_cannot_answer),
        cmocka_unit_test(test_endless_lines_refused),
        cmocka_unit_test(test_bad_bytes_refused),
        cmocka_unit_test(test_refusal_is_final_and_reset_clears_it),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
