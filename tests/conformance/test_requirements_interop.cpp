// Interop-mode requirements no vector can reach (requirement_coverage.json
// names each test here): the segment grammar as an allow-list over every
// byte, arguments outside the data model (other ext types, non-string map
// keys, lone surrogates), the reader's acceptance of every well-formed map
// key, and the 32-bit length tier of the canonical encoding.
#include "conformance_support.hpp"

#include <csetjmp>
#include <cstdarg>
extern "C" {
#include <cmocka.h>
}

using namespace ckconf;

namespace {

// The grammar: ^[a-z0-9][a-z0-9._-]{0,63}$ (protocol.md 1b).
bool first_allowed(unsigned c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool later_allowed(unsigned c) { return first_allowed(c) || c == '.' || c == '_' || c == '-'; }

int interop_key(const std::string &ns, const std::string &op, const Bytes &args, Buf &canon) {
    Buf key;
    return cachekit_key_interop(key.p(), canon.p(), ns.c_str(), op.c_str(), args.data(), args.size());
}

int interop_key(const Bytes &args) {
    Buf canon;
    return interop_key("users", "get_user", args, canon);
}

// Every byte value, first and later, in both segments: accepted exactly
// when the grammar admits it, so a validator that bans a list of characters
// fails on the first one it forgot (IOP-2, IOP-3).
void test_segment_grammar_is_an_allow_list(void **) {
    const Bytes empty_args = {0x90};
    int wrong = 0;
    for (unsigned c = 1; c < 256; ++c) {
        const std::string ch(1, char(c));
        struct Case {
            const char *where;
            std::string ns, op;
            bool want;
        } cases[] = {
            {"namespace, first", ch, "op", first_allowed(c)},
            {"namespace, later", "a" + ch, "op", later_allowed(c)},
            {"operation, first", "users", ch, first_allowed(c)},
            {"operation, later", "users", "a" + ch, later_allowed(c)},
        };
        for (const Case &k : cases) {
            Buf canon;
            int rc = interop_key(k.ns, k.op, empty_args, canon);
            bool accepted = rc == CACHEKIT_OK;
            if (accepted != k.want || (!accepted && rc != CACHEKIT_ESEGMENT)) {
                print_error("byte 0x%02x (%s): got %s, want %s\n", c, k.where, cachekit_error_name(rc),
                            k.want ? "OK" : "InvalidSegment");
                ++wrong;
            }
        }
    }
    // Letters and digits outside ASCII, as UTF-8: never admitted.
    for (const char *s : {"caf\xc3\xa9", "\xef\xbc\xa1", "\xd9\xa1", "a\xe2\x80\xa5"}) {
        Buf canon;
        if (interop_key(s, "op", empty_args, canon) != CACHEKIT_ESEGMENT) ++wrong;
        if (interop_key("users", s, empty_args, canon) != CACHEKIT_ESEGMENT) ++wrong;
    }
    assert_int_equal(wrong, 0);
}

// Ext types other than the two input conventions (timestamp -1, set 83)
// are outside the data model: an error, never skipped (IOP-8).
void test_other_ext_types_are_rejected(void **) {
    const Bytes fixext1 = {0x91, 0xd4, 0x05, 0x00};
    const Bytes ext8 = {0x91, 0xc7, 0x02, 0x07, 0x01, 0x02};
    const Bytes nested = {0x91, 0x81, 0xa1, 'k', 0xd4, 0x05, 0x00};
    for (const Bytes &args : {fixext1, ext8, nested}) assert_int_equal(interop_key(args), CACHEKIT_EUNSUPPORTED);
}

// A map key that is not a string is an error at every level (IOP-13).
void test_non_string_map_keys_are_rejected(void **) {
    const Bytes keys[] = {
        {0x01}, {0xc0}, {0xc3}, {0xc4, 0x01, 'k'}, {0x91, 0x01}, {0x80}, {0xcb, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0},
    };
    for (const Bytes &k : keys) {
        Bytes top = {0x91, 0x81};
        top.insert(top.end(), k.begin(), k.end());
        top.push_back(0x02);
        Bytes in_list = {0x91, 0x91, 0x81};
        in_list.insert(in_list.end(), k.begin(), k.end());
        in_list.push_back(0x02);
        Bytes in_value = {0x91, 0x81, 0xa1, 'a', 0x81};
        in_value.insert(in_value.end(), k.begin(), k.end());
        in_value.push_back(0x02);
        for (const Bytes *args : {&top, &in_list, &in_value}) assert_int_equal(interop_key(*args), CACHEKIT_EUNSUPPORTED);
    }
}

// A lone surrogate (as the 3-byte sequence a WTF-8 or CESU-8 writer emits)
// is not a Unicode scalar value: rejected as an argument, a map key, a
// nested value and a set element, never replacement-encoded (IOP-10, IOP-11).
void test_lone_surrogates_are_rejected(void **) {
    const Bytes high = {0xed, 0xa0, 0x80}, low = {0xed, 0xb0, 0x80};
    for (const Bytes &s : {high, low}) {
        auto str = [&](Bytes prefix) {
            prefix.push_back(uint8_t(0xa0 | s.size()));
            prefix.insert(prefix.end(), s.begin(), s.end());
            return prefix;
        };
        Bytes arg = str({0x91});
        Bytes key = str({0x91, 0x81});
        key.push_back(0x01);
        Bytes nested = str({0x91, 0x91, 0x81, 0xa1, 'k'});
        Bytes set = str({0x91, 0xc7, uint8_t(2 + s.size()), 0x53, 0x91});
        for (const Bytes *args : {&arg, &key, &nested, &set}) {
            int rc = interop_key(*args);
            if (rc == CACHEKIT_OK) fail_msg("a lone surrogate was accepted in %s", to_hex(*args).c_str());
            assert_int_equal(rc, CACHEKIT_EUNSUPPORTED);
        }
    }
    // A surrogate pair spelt as two 3-byte halves is not UTF-8 either; the
    // same character in its 4-byte form is accepted.
    const Bytes cesu_pair = {0x91, 0xa6, 0xed, 0xa0, 0xbd, 0xed, 0xb8, 0x80};
    assert_int_equal(interop_key(cesu_pair), CACHEKIT_EUNSUPPORTED);
    const Bytes utf8 = {0x91, 0xa4, 0xf0, 0x9f, 0x98, 0x80};
    assert_int_equal(interop_key(utf8), CACHEKIT_OK);
}

// A reader accepts any well-formed document: map keys of every kind,
// including an integer key written at 64-bit width (IOP-18).
void test_reader_accepts_every_map_key_kind(void **) {
    const Bytes keys[] = {
        {0xc0},                                           // nil
        {0xc2},                                           // false
        {0xc4, 0x01, 'k'},                                // bin
        {0x92, 0x01, 0x02},                               // array
        {0x81, 0xa1, 'a', 0x01},                          // map
        {0xcf, 0, 0, 0, 0, 0, 0, 0, 0x01},                // uint64-wide 1
        {0xd3, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},  // int64-wide -1
        {0xcb, 0x3f, 0xf8, 0, 0, 0, 0, 0, 0},             // float64
        {0xd4, 0x05, 0x00},                               // ext
    };
    for (const Bytes &k : keys) {
        Bytes doc = {0x82};
        doc.insert(doc.end(), k.begin(), k.end());
        doc.insert(doc.end(), {0xa1, 'v', 0xa1, 'x', 0x02});
        int rc = cachekit_msgpack_check(doc.data(), doc.size(), 0);
        if (rc != CACHEKIT_OK) fail_msg("reader refused %s: %s", to_hex(doc).c_str(), cachekit_error_name(rc));
    }
}

// Lengths past 65535 take the 32-bit tier (str32, bin32, array32) in the
// canonical arguments, and a 32-bit header on a shorter item is narrowed
// (IOP-21: no vector reaches this tier).
void test_canonical_arguments_use_the_32_bit_tier(void **) {
    auto be32 = [](Bytes &b, uint32_t n) {
        for (int i = 3; i >= 0; --i) b.push_back(uint8_t(n >> (8 * i)));
    };
    for (uint32_t n : {65535u, 65536u}) {
        const uint8_t want16[] = {0xda, 0xc5, 0xdc}, want32[] = {0xdb, 0xc6, 0xdd};
        const uint8_t given[] = {0xdb, 0xc6, 0xdd};
        for (int kind = 0; kind < 3; ++kind) {
            Bytes args = {0x91, given[kind]};
            be32(args, n);
            args.insert(args.end(), n, kind == 2 ? uint8_t(0xc0) : uint8_t('a'));
            Buf canon;
            assert_int_equal(interop_key("t", "op", args, canon), CACHEKIT_OK);
            Bytes c = canon.bytes();
            const uint8_t want = n > 65535 ? want32[kind] : want16[kind];
            const size_t header = n > 65535 ? 5 : 3;
            assert_true(c.size() == 1 + header + n);
            assert_int_equal(c[0], 0x91);
            assert_int_equal(c[1], want);
        }
    }
}

}  // namespace

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_segment_grammar_is_an_allow_list),
        cmocka_unit_test(test_other_ext_types_are_rejected),
        cmocka_unit_test(test_non_string_map_keys_are_rejected),
        cmocka_unit_test(test_lone_surrogates_are_rejected),
        cmocka_unit_test(test_reader_accepts_every_map_key_kind),
        cmocka_unit_test(test_canonical_arguments_use_the_32_bit_tier),
    };
    return cmocka_run_group_tests_name("requirements: interop mode", tests, nullptr, nullptr);
}
