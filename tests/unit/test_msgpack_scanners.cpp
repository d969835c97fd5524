// The fast bounded scanner (scan_document) against the reference one
// (scan_document_precisely): same end offset or same error code, on
// generated documents covering every type byte, on each of their prefixes,
// on byte mutations, and at the depth limits. Then the facts it notes
// (temporal sentinel keys).
#include <cstdint>
#include <random>
#include <string>

#include "codec/msgpack_bounds.hpp"
#include "scan_outcomes.hpp"

#include "../l1/cmocka_cpp.hpp"  // last: it defines a fail() macro

namespace {

using cachekit::msgpack::kMaxDepth;
using cachekit::msgpack::kMinDepth;
using Bytes = std::basic_string<uint8_t>;
using scan_outcomes::outcome;

size_t compared = 0;

void same(const Bytes &b, uint32_t depth = kMaxDepth) {
    const int64_t fast = outcome(scan_outcomes::fast, b.data(), b.size(), depth);
    const int64_t reference = outcome(scan_outcomes::reference, b.data(), b.size(), depth);
    if (fast != reference || outcome(scan_outcomes::noting, b.data(), b.size(), depth) != reference) {
        std::string hex;
        for (size_t i = 0; i < b.size() && i < 64; ++i) hex += "0123456789abcdef"[b[i] >> 4], hex += "0123456789abcdef"[b[i] & 15];
        fail_msg("scanners disagree (fast %lld, reference %lld, depth %u) on %zu bytes: %s", (long long)fast,
                 (long long)reference, depth, b.size(), hex.c_str());
    }
    ++compared;
}

void put_be(Bytes &out, uint64_t v, int width) {
    for (int i = width - 1; i >= 0; --i) out.push_back(uint8_t(v >> (8 * i)));
}

// One random document, every header form reachable (depth-bounded).
void document(std::mt19937 &rng, Bytes &out, int depth) {
    const unsigned pick = rng() % (depth > 6 ? 12 : 16);
    auto n = [&](unsigned max) { return unsigned(rng() % (max + 1)); };
    auto body = [&](size_t len) { for (size_t i = 0; i < len; ++i) out.push_back(uint8_t(rng())); };
    switch (pick) {
    case 0: out.push_back(uint8_t(rng() % 0x80)); break;                    // positive fixint
    case 1: out.push_back(uint8_t(0xe0 + rng() % 0x20)); break;             // negative fixint
    case 2: out.push_back(uint8_t(0xc0 + (rng() % 3 == 0 ? 0 : 2 + rng() % 2))); break;  // nil, bools
    case 3: {  // floats and sized ints
        static const uint8_t kTypes[] = {0xca, 0xcb, 0xcc, 0xcd, 0xce, 0xcf, 0xd0, 0xd1, 0xd2, 0xd3};
        static const int kWidths[] = {4, 8, 1, 2, 4, 8, 1, 2, 4, 8};
        unsigned i = rng() % 10;
        out.push_back(kTypes[i]);
        body(size_t(kWidths[i]));
        break;
    }
    case 4: { unsigned len = n(31); out.push_back(uint8_t(0xa0 | len)); body(len); break; }  // fixstr
    case 5: {  // str8/16/32, bin8/16/32
        static const uint8_t kTypes[] = {0xd9, 0xda, 0xdb, 0xc4, 0xc5, 0xc6};
        static const int kWidths[] = {1, 2, 4, 1, 2, 4};
        unsigned i = rng() % 6, len = n(300);
        if (kWidths[i] == 1) len %= 256;
        out.push_back(kTypes[i]);
        put_be(out, len, kWidths[i]);
        body(len);
        break;
    }
    case 6: {  // fixext 1..16 and ext8/16/32
        static const uint8_t kFixed[] = {0xd4, 0xd5, 0xd6, 0xd7, 0xd8};
        static const size_t kFixedLen[] = {1, 2, 4, 8, 16};
        if (rng() % 2) {
            unsigned i = rng() % 5;
            out.push_back(kFixed[i]);
            out.push_back(uint8_t(rng()));
            body(kFixedLen[i]);
        } else {
            static const uint8_t kTypes[] = {0xc7, 0xc8, 0xc9};
            static const int kWidths[] = {1, 2, 4};
            unsigned i = rng() % 3, len = n(40);
            out.push_back(kTypes[i]);
            put_be(out, len, kWidths[i]);
            out.push_back(uint8_t(rng()));
            body(len);
        }
        break;
    }
    case 7: case 8: case 9: case 10: case 11: { unsigned len = n(4); out.push_back(uint8_t(0xa0 | len)); body(len); break; }
    default: {  // containers: fix, 16 and 32-bit forms
        const bool map = rng() % 2;
        const unsigned count = n(6), form = rng() % 3;
        if (form == 0) out.push_back(uint8_t((map ? 0x80 : 0x90) | count));
        else if (form == 1) out.push_back(map ? 0xde : 0xdc), put_be(out, count, 2);
        else out.push_back(map ? 0xdf : 0xdd), put_be(out, count, 4);
        for (unsigned i = 0; i < (map ? count * 2 : count); ++i) document(rng, out, depth + 1);
    }
    }
}

void test_generated_documents_prefixes_and_mutations(void **) {
    std::mt19937 rng(20261130);
    for (int round = 0; round < 400; ++round) {
        Bytes doc;
        document(rng, doc, 0);
        same(doc);
        Bytes trailing = doc;
        trailing.push_back(0x01);
        same(trailing);
        for (size_t cut = 0; cut < doc.size() && cut < 200; ++cut) same(doc.substr(0, cut));
        for (int m = 0; m < 40 && !doc.empty(); ++m) {
            Bytes mutated = doc;
            mutated[rng() % mutated.size()] = uint8_t(rng());
            same(mutated);
        }
    }
}

void test_every_type_byte_alone_and_with_length_fields(void **) {
    for (unsigned t = 0; t < 256; ++t) {
        for (size_t extra = 0; extra < 12; ++extra) {
            Bytes b(1, uint8_t(t));
            b.append(extra, uint8_t(extra % 3 == 0 ? 0x00 : extra % 3 == 1 ? 0x01 : 0xff));
            same(b);
        }
    }
}

void test_depth_limits(void **) {
    for (uint32_t limit : {kMinDepth, kMinDepth + 1, 100u, kMaxDepth}) {
        for (uint32_t nesting : {limit - 1, limit, limit + 1}) {
            for (uint8_t opener : {uint8_t(0x91), uint8_t(0x81)}) {
                Bytes b;
                for (uint32_t i = 0; i < nesting; ++i) {
                    b.push_back(opener);
                    if (opener == 0x81) b.push_back(0x00);  // the key of the one pair
                }
                b.push_back(0xc0);
                same(b, limit);
                Bytes empty_innermost(b.begin(), b.end() - 1);
                empty_innermost.push_back(0x90);  // an empty container counts as a level too
                same(empty_innermost, limit);
            }
        }
    }
}

void test_overclaims(void **) {
    // Declared lengths far beyond the input, in every width.
    for (const Bytes &b : {Bytes{0xdd, 0xff, 0xff, 0xff, 0xff, 0x00}, Bytes{0xdf, 0x7f, 0xff, 0xff, 0xff, 0x00, 0x00},
                           Bytes{0xde, 0x00, 0x02, 0x00, 0x00}, Bytes{0xdb, 0xff, 0xff, 0xff, 0xff, 0x41},
                           Bytes{0xc6, 0x00, 0x00, 0x01, 0x00, 0x41}, Bytes{0xc9, 0x00, 0x00, 0x00, 0x05, 0x01, 0x41},
                           Bytes{0x92, 0xc4, 0x02, 0x41}, Bytes{0x81, 0x01}})
        same(b);
}

bool temporal_keys(const Bytes &b) {
    cachekit::msgpack::DocumentFacts facts;
    cachekit::msgpack::check_document(b.data(), b.size(), kMaxDepth, &facts);
    return facts.temporal_keys;
}

Bytes str(const std::string &s, int form) {  // form 0: fixstr, 1: str8, 2: str16, 3: str32
    Bytes out;
    if (form == 0) out.push_back(uint8_t(0xa0 | s.size()));
    else if (form == 1) out.push_back(0xd9), put_be(out, s.size(), 1);
    else if (form == 2) out.push_back(0xda), put_be(out, s.size(), 2);
    else out.push_back(0xdb), put_be(out, s.size(), 4);
    out.append(s.begin(), s.end());
    return out;
}

void test_temporal_keys_are_noted_in_every_str_form(void **) {
    for (const char *key : {"__datetime__", "__date__", "__time__"}) {
        for (int form = 0; form < 4; ++form) {
            // {"user": {key: true, "value": "2026-11-30"}}
            Bytes doc{0x81};
            doc += str("user", 0);
            doc.push_back(0x82);
            doc += str(key, form);
            doc.push_back(0xc3);
            doc += str("value", 0) + str("2026-11-30", 0);
            assert_true(temporal_keys(doc));
            Bytes as_value{0x91};  // a sentinel key written as a plain string value still counts
            as_value += str(key, form);
            assert_true(temporal_keys(as_value));
        }
    }
}

void test_look_alikes_are_not_temporal_keys(void **) {
    const Bytes plain{0x82, 0xa2, 'i', 'd', 0x01, 0xa4, 'n', 'a', 'm', 'e', 0xa3, 'b', 'o', 'b'};
    assert_false(temporal_keys(plain));
    for (const char *s : {"__dates_", "__date_", "__datetime", "_date__x", "__times__", "x__date__", "__DATE__"})
        assert_false(temporal_keys(Bytes{0x91} + str(s, 0)));
    // The bytes of a key inside a bin body or a longer string are not a key.
    Bytes bin{0xc4, 0x09, 0xa8};
    bin += Bytes(reinterpret_cast<const uint8_t *>("__date__"), 8);
    assert_false(temporal_keys(bin));
    assert_false(temporal_keys(str("a __time__ b", 0)));
}

void test_invalid_depth_arguments_match(void **) {
    const Bytes b{0x90};
    same(b, kMinDepth - 1);
    same(b, kMaxDepth + 1);
    print_message("%zu inputs compared\n", compared);
}

}  // namespace

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_generated_documents_prefixes_and_mutations),
        cmocka_unit_test(test_every_type_byte_alone_and_with_length_fields),
        cmocka_unit_test(test_depth_limits),
        cmocka_unit_test(test_overclaims),
        cmocka_unit_test(test_temporal_keys_are_noted_in_every_str_form),
        cmocka_unit_test(test_look_alikes_are_not_temporal_keys),
        cmocka_unit_test(test_invalid_depth_arguments_match),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
