// wire-format.json: the ByteStorage envelope (cachekit_envelope_unwrap reads
// every vector; cachekit_envelope_wrap is judged by decoding its output, as
// LZ4 bytes may legally differ) and the published limits.
#include "conformance_support.hpp"

#include <csetjmp>
#include <cstdarg>
extern "C" {
#include <cmocka.h>
}

using namespace ckconf;

namespace {

const char *const kFile = "wire-format.json";
Json V;
Report R(kFile);

// Unwrap `envelope` and compare with `input` and `format`; then wrap `input`
// ourselves and check it unwraps to the same bytes and format.
void check_envelope(Checks &c, const Bytes &envelope, const Bytes &input, const std::string &format) {
    Buf out, fmt;
    if (c.ok(cachekit_envelope_unwrap(out.p(), fmt.p(), envelope.data(), envelope.size()), "cachekit_envelope_unwrap")) {
        if (out.bytes() != input)
            c.add("unwrap: expected " + std::to_string(input.size()) + " bytes " +
                  (input.size() <= 64 ? to_hex(input) : std::string()) + ", got " + std::to_string(out.b.size) +
                  " bytes " + (out.b.size <= 64 ? out.hex() : std::string()));
        c.expect(fmt.text() == format, "format: expected " + format + ", got " + fmt.text());
    }
    Buf wrapped, back, back_fmt;
    if (!c.ok(cachekit_envelope_wrap(wrapped.p(), input.data(), input.size(), format.c_str()), "cachekit_envelope_wrap"))
        return;
    if (c.ok(cachekit_envelope_unwrap(back.p(), back_fmt.p(), wrapped.b.ptr, wrapped.b.size),
             "cachekit_envelope_unwrap(own envelope)")) {
        c.expect(back.bytes() == input, "own envelope did not round-trip to the input");
        c.expect(back_fmt.text() == format, "own envelope format: expected " + format + ", got " + back_fmt.text());
    }
    // Writers emit the canonical bin form: 94 then bin8/16/32.
    c.expect(wrapped.b.size > 1 && static_cast<uint8_t>(wrapped.b.ptr[0]) == 0x94 &&
                 (static_cast<uint8_t>(wrapped.b.ptr[1]) == 0xc4 || static_cast<uint8_t>(wrapped.b.ptr[1]) == 0xc5 ||
                  static_cast<uint8_t>(wrapped.b.ptr[1]) == 0xc6),
             "own envelope is not the canonical 94 + bin form");
    // The checksum field is the same xxh3 in both envelopes.
    try {
        c.equal_hex(envelope_checksum_hex(wrapped.bytes()), envelope_checksum_hex(envelope),
                    "checksum of own envelope vs the vector's");
    } catch (const std::exception &e) {
        c.add(std::string("cannot read an envelope checksum: ") + e.what());
    }
}

void test_vectors(void **state) {
    (void)state;
    int failures = run_category(R, V, "vectors", [](const Json &v, Checks &c) {
        Bytes envelope = from_hex(v.at("envelope_hex").get<std::string>());
        Bytes input = from_hex(v.at("input_hex").get<std::string>());
        c.expect(envelope.size() == v.at("envelope_size").get<size_t>(), "envelope_size disagrees with envelope_hex");
        c.expect(input.size() == v.at("input_size").get<size_t>(), "input_size disagrees with input_hex");
        check_envelope(c, envelope, input, v.at("format").get<std::string>());
        c.note(v.contains("envelope_encoding") ? "bin form" : "legacy integer-array form");
    });
    assert_int_equal(failures, 0);
}

void test_constructed_vectors(void **state) {
    (void)state;
    int failures = run_category(R, V, "constructed_vectors", [](const Json &v, Checks &c) {
        Bytes envelope = construct_segments(v.at("envelope_construction"));
        Bytes input = construct_segments(v.at("input_construction"));
        c.expect(envelope.size() == v.at("envelope_size").get<size_t>(), "constructed envelope has the wrong size");
        c.expect(input.size() == v.at("original_size").get<size_t>(), "constructed input has the wrong size");
        c.equal_hex(envelope_checksum_hex(envelope), v.at("checksum_hex").get<std::string>(),
                    "checksum field of the constructed envelope");
        // check_envelope also compares the checksum the library computes for
        // the input (in its own envelope) with the vector's.
        check_envelope(c, envelope, input, v.at("format").get<std::string>());
    });
    assert_int_equal(failures, 0);
}

void test_limits(void **state) {
    (void)state;
    Checks c;
    const Json &l = V.at("limits");
    c.expect(l.at("max_compressed_size").get<uint64_t>() == CACHEKIT_ENVELOPE_MAX_SIZE,
             "max_compressed_size != CACHEKIT_ENVELOPE_MAX_SIZE");
    c.expect(l.at("max_uncompressed_size").get<uint64_t>() == CACHEKIT_ENVELOPE_MAX_SIZE,
             "max_uncompressed_size != CACHEKIT_ENVELOPE_MAX_SIZE");
    c.expect(l.at("max_compression_ratio").get<uint64_t>() == CACHEKIT_MAX_COMPRESSION_RATIO,
             "max_compression_ratio != CACHEKIT_MAX_COMPRESSION_RATIO");
    std::printf("%s limits: %s\n", kFile, c.passed() ? "match the header" : c.detail().c_str());
    assert_true(c.passed());
}

}  // namespace

int main(void) {
    V = load_vectors(kFile);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vectors),
        cmocka_unit_test(test_constructed_vectors),
        cmocka_unit_test(test_limits),
    };
    int rc = cmocka_run_group_tests_name("wire-format.json", tests, nullptr, nullptr);
    R.summary();
    return rc;
}
