// wire-format.json: the ByteStorage envelope (cachekit_envelope_unwrap reads
// every vector; cachekit_envelope_wrap is judged by decoding its output, as
// LZ4 bytes may legally differ) and the published limits.
#include "conformance_support.hpp"

#include "alloc_meter.hpp"

#include <vector>

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

// ---- reject_vectors --------------------------------------------------------

// The error each step of the reference's Retrieve Flow (the vectors'
// `reject_step` numbering) names, as our status codes: 2 the typed decode
// (DeserializationFailed), 4 the size caps (InputTooLarge), 5 zero length and
// the ratio bound (DecompressionBomb), 6 the LZ4 decode (DecompressionFailed;
// a length error there may instead surface at 9), 8 ChecksumMismatch,
// 9 SizeValidationFailed.
std::vector<int> step_codes(const Json &v) {
    switch (v.at("reject_step").get<int>()) {
    case 2: return {CACHEKIT_EDESERIALIZE};
    case 4:
        // original_size past u32 may end at step 2's range-checked decode,
        // which the rows allow ("or a Retrieve Flow step-2 error").
        if (v.at("original_size").get<uint64_t>() > UINT32_MAX) return {CACHEKIT_ETOOBIG, CACHEKIT_EDESERIALIZE};
        return {CACHEKIT_ETOOBIG};
    case 5: return {CACHEKIT_EBOMB};
    case 6: return {CACHEKIT_EDECOMPRESS, CACHEKIT_ESIZE};
    case 8: return {CACHEKIT_ECHECKSUM};
    case 9: return {CACHEKIT_ESIZE};
    default: return {};
    }
}

// The allocation bound of the rows that name one: the read's live-bytes
// high-water stays below original_size.
bool has_allocation_bound(const Json &v) {
    return v.at("description").get<std::string>().find("allocation high-water") != std::string::npos;
}

void test_reject_vectors(void **state) {
    (void)state;
    // The meter must see the library's allocations, or a bound it reports
    // proves nothing: a 1 MiB buffer the library allocates shows up.
    if (alloc_meter::active()) {
        Buf big;
        alloc_meter::reset();
        assert_int_equal(cachekit_buf_reserve(big.p(), 1u << 20), 0);
        assert_true(alloc_meter::peak_since_reset() >= int64_t(1) << 20);
    }
    int failures = run_category(R, V, "reject_vectors", [](const Json &v, Checks &c) {
        Bytes envelope = from_hex(v.at("envelope_hex").get<std::string>());
        c.expect(envelope.size() == v.at("envelope_size").get<size_t>(), "envelope_size disagrees with envelope_hex");
        const std::vector<int> want = step_codes(v);
        if (want.empty()) {
            c.add("reject_step " + v.at("reject_step").dump() + " names no error this test knows");
            return;
        }
        Buf out, fmt;
        alloc_meter::reset();
        int rc = cachekit_envelope_unwrap(out.p(), fmt.p(), envelope.data(), envelope.size());
        const int64_t peak = alloc_meter::peak_since_reset();
        const std::string msg = rc ? cachekit_error_last_message() : "";
        bool named = false;
        for (int w : want) named = named || rc == w;
        if (!named) {
            std::string names;
            for (int w : want) names += (names.empty() ? "" : " or ") + std::string(cachekit_error_name(w));
            c.add("cachekit_envelope_unwrap: expected " + names + ", got " + describe_rc(rc));
            return;
        }
        // Step 2's two checks have their own messages: the bounded pre-scan
        // reports its error's name, the typed decode the field.
        const std::string check = v.value("reject_check", "");
        if (check == "decode_bounds")
            c.expect(msg.find("Overclaim") != std::string::npos || msg.find("Truncated") != std::string::npos ||
                         msg.find("DepthExceeded") != std::string::npos,
                     "the message does not name the pre-scan's error: " + msg);
        if (check == "typed_decode")
            c.expect(msg.find("not a ByteStorage envelope") != std::string::npos, "not the typed decode's message: " + msg);
        c.note(std::string(cachekit_error_name(rc)) + " at step " + v.at("reject_step").dump());
        if (has_allocation_bound(v)) {
            const int64_t bound = v.at("original_size").get<int64_t>();
            if (!alloc_meter::active()) {
                c.note("allocation bound not measured: a sanitizer owns malloc in this build");
            } else {
                c.expect(peak < bound, "allocation high-water " + std::to_string(peak) + " bytes is not below original_size " +
                                           std::to_string(bound));
                c.note("peak allocation " + std::to_string(peak) + " B < original_size " + std::to_string(bound) + " B");
            }
        }
    });
    assert_int_equal(failures, 0);
}

// ---- payload_reject_vectors and temporal_sentinel_vectors -------------------

// An auto-mode cache over a memory backend (default serializer, integrity
// on, L1 off, fail_closed as given) with `stored` planted under `key`.
struct PlantedRead {
    int rc = 0;
    std::string message;
    cachekit_lookup info = CACHEKIT_LOOKUP_INIT;
};

PlantedRead read_planted(const Bytes &stored, Buf &out, int fail_closed) {
    MemoryCache mc([&](cachekit_cache_options &o) { o.fail_closed = fail_closed; });
    PlantedRead r;
    r.rc = mc.get_planted("wire-format-vector", stored, out, &r.message, &r.info);
    return r;
}

// The CK v3 frame the reference SDK's default write puts around an envelope.
Bytes default_frame(const Bytes &envelope) {
    Buf frame;
    const char *meta = R"({"format": "msgpack", "encoding": "utf-8", "compressed": true, "original_type": "msgpack"})";
    if (cachekit_frame_encode(frame.p(), "default", meta, envelope.data(), envelope.size()) != 0)
        throw std::runtime_error("cachekit_frame_encode: " + describe_rc(cachekit_error_last_code()));
    return frame.bytes();
}

// decode-bounds.json's rules: which pre-scan errors a reject reason allows.
std::vector<int> reason_codes(const std::string &reason) {
    if (reason == "depth") return {CACHEKIT_EDEPTH, CACHEKIT_EOVERCLAIM};
    if (reason == "overclaim") return {CACHEKIT_EOVERCLAIM, CACHEKIT_ETRUNCATED};
    if (reason == "incomplete") return {CACHEKIT_ETRUNCATED};
    return {};
}

void test_payload_reject_vectors(void **state) {
    (void)state;
    int failures = run_category(R, V, "payload_reject_vectors", [](const Json &v, Checks &c) {
        Bytes envelope = from_hex(v.at("envelope_hex").get<std::string>());
        Bytes input = from_hex(v.at("input_hex").get<std::string>());
        c.expect(envelope.size() == v.at("envelope_size").get<size_t>(), "envelope_size disagrees with envelope_hex");
        // Every Retrieve Flow check accepts the envelope...
        Buf inner, fmt;
        if (!c.ok(cachekit_envelope_unwrap(inner.p(), fmt.p(), envelope.data(), envelope.size()), "cachekit_envelope_unwrap"))
            return;
        c.equal_hex(inner.hex(), to_hex(input), "unwrapped payload");
        c.equal_hex(envelope_checksum_hex(envelope), v.at("checksum_hex").get<std::string>(), "checksum field");
        // ...and the bounded check of the payload refuses it with its own error.
        std::vector<int> allowed;
        for (const auto &reason : v.at("reject_reasons")) {
            std::vector<int> codes = reason_codes(reason.get<std::string>());
            allowed.insert(allowed.end(), codes.begin(), codes.end());
        }
        int rc = cachekit_msgpack_check(inner.b.ptr, inner.b.size, 0);
        bool named = false;
        for (int w : allowed) named = named || rc == w;
        c.expect(named, "cachekit_msgpack_check(payload): " + describe_rc(rc) + " is not an error the reasons " +
                            v.at("reject_reasons").dump() + " allow");
        if (!named) return;
        const std::string scan = cachekit_error_name(rc);
        // The cache's read path (a default write's frame around the envelope)
        // runs the same pre-scan after the unwrap: refused, naming it.
        Buf out;
        PlantedRead closed = read_planted(default_frame(envelope), out, CACHEKIT_ON);
        if (c.code(closed.rc, CACHEKIT_ECORRUPT, "cachekit_cache_get (fail_closed)"))
            c.expect(closed.message.find(scan) != std::string::npos,
                     "the read's message does not name the pre-scan's " + scan + ": " + closed.message);
        PlantedRead open = read_planted(default_frame(envelope), out, CACHEKIT_OFF);
        c.expect(open.rc == CACHEKIT_ENOTFOUND, "fail-open read: expected a miss, got " + describe_rc(open.rc));
        c.note("unwraps; payload pre-scan " + scan + "; cache read refuses it");
    });
    assert_int_equal(failures, 0);
}

void test_temporal_sentinel_vectors(void **state) {
    (void)state;
    int failures = run_category(R, V, "temporal_sentinel_vectors", [](const Json &v, Checks &c) {
        Bytes payload = from_hex(v.at("payload_hex").get<std::string>());
        const Json &to = v.at("revives_to");
        // The payload is the sentinel map: {"__<type>__": true, "value": iso},
        // the sentinel key first.
        Buf json;
        if (!c.ok(cachekit_msgpack_check(payload.data(), payload.size(), 0), "cachekit_msgpack_check") ||
            !c.ok(cachekit_msgpack_to_json(json.p(), payload.data(), payload.size()), "cachekit_msgpack_to_json"))
            return;
        Json want = Json::object();
        want["__" + to.at("type").get<std::string>() + "__"] = true;
        want["value"] = to.at("iso");
        Json got = Json::parse(json.text());
        c.expect(got == want, "rendered as " + got.dump() + ", expected the sentinel map " + want.dump());
        // The core hands the map to the wrapper unchanged, and says a
        // sentinel may be in it (cachekit_lookup.temporal_keys): reviving it
        // as the language's own type is the wrapper's (they test it).
        Buf env;
        if (!c.ok(cachekit_envelope_wrap(env.p(), payload.data(), payload.size(), "msgpack"), "cachekit_envelope_wrap")) return;
        Buf out;
        PlantedRead r = read_planted(default_frame(env.bytes()), out, CACHEKIT_ON);
        if (!c.ok(r.rc, "cachekit_cache_get")) return;
        c.equal_hex(out.hex(), to_hex(payload), "value read back");
        c.expect(r.info.temporal_keys == 1, "cachekit_lookup.temporal_keys " + std::to_string(r.info.temporal_keys) + ", expected 1");
        c.note("sentinel map kept; temporal_keys 1; revival is the wrappers'");
    });
    assert_int_equal(failures, 0);
}

}  // namespace

int main(void) {
    V = load_vectors(kFile);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vectors),
        cmocka_unit_test(test_constructed_vectors),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_reject_vectors),
        cmocka_unit_test(test_payload_reject_vectors),
        cmocka_unit_test(test_temporal_sentinel_vectors),
    };
    int rc = cmocka_run_group_tests_name("wire-format.json", tests, nullptr, nullptr);
    R.summary();
    return rc;
}
