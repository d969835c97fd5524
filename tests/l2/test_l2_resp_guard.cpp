// The RESP guard (src/l2/resp_guard.hpp) on hand-written bytes: well-formed
// replies of each command's shape pass in any chunking; a bulk string or a
// reply over the limit, an array the command cannot answer, an endless line,
// a bad header and stray bytes are refused from the first offending byte,
// with the reason named.
#include <string>
#include <string_view>

#include "l2/resp_guard.hpp"

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
        cmocka_unit_test(test_total_reply_bytes_bounded),
        cmocka_unit_test(test_arrays_the_command_cannot_answer),
        cmocka_unit_test(test_endless_lines_refused),
        cmocka_unit_test(test_bad_bytes_refused),
        cmocka_unit_test(test_refusal_is_final_and_reset_clears_it),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
