// Which check refused a malformed input, where every check gives one error
// code (requirement_coverage.json, WIRE-8, WIRE-9, WIRE-21, WIRE-22, IOP-19):
// the frame parser must refuse each python-frame.json error row by the check
// its rejected_by names, seen in the error message, not by a later check that
// happens to catch it too, and an interop reader a CK frame by its trailing
// bytes; the envelope's pre-scan, not its typed decode, must refuse
// reject_envelope_slots_overclaim; and each payload_reject_vectors row,
// a sound envelope, must be refused by the guard on the payload it unwraps.
#include "conformance_support.hpp"

#include <map>

#include <csetjmp>
#include <cstdarg>
extern "C" {
#include <cmocka.h>
}

using namespace ckconf;

namespace {

Json FRAME, WIRE;
Report R_frame("python-frame.json"), R_wire("wire-format.json");


std::string last_message() { return cachekit_error_last_message(); }

void test_frame_rows_are_refused_by_their_own_check(void **) {
    // What the parser's message says for each check.
    const std::map<std::string, std::string> says = {
        {"prefix_length", "at least 7 bytes"},
        {"version", "only version 3 is defined"},
        {"header_length", "declared header length"},
        {"magic", "magic bytes"},
        {"serializer_name", "records no serializer name"},
    };
    int failures = run_category(R_frame, FRAME, "error_vectors", [&](const Json &v, Checks &c) {
        if (!v.contains("rejected_by")) {
            // A frame given to an interop reader: refused as one document
            // with bytes after it, not as a truncated or malformed one.
            Bytes frame = from_hex(str(v, "frame_hex"));
            c.code(cachekit_msgpack_check(frame.data(), frame.size(), 0), CACHEKIT_ETRAILING,
                   "cachekit_msgpack_check (the interop reader's one-document check)");
            c.note("trailing bytes");
            return;
        }
        auto it = says.find(str(v, "rejected_by"));
        if (it == says.end()) {
            c.add("unknown rejected_by " + str(v, "rejected_by"));
            return;
        }
        Bytes frame = from_hex(str(v, "frame_hex"));
        Buf s, m;
        size_t off = 0;
        if (c.code(cachekit_frame_decode(s.p(), m.p(), &off, frame.data(), frame.size()), CACHEKIT_EFRAME,
                   "cachekit_frame_decode")) {
            const std::string msg = last_message();
            c.expect(msg.find(it->second) != std::string::npos,
                     "refused by another check than " + str(v, "rejected_by") + ": " + msg);
            c.note(str(v, "rejected_by"));
        }
    });
    assert_int_equal(failures, 0);
}

void test_the_envelope_pre_scan_refuses_an_overclaim(void **) {
    int failures = run_category(R_wire, WIRE, "reject_vectors", [&](const Json &v, Checks &c) {
        if (v.value("reject_check", "") != "decode_bounds") {
            c.covered_elsewhere("not a pre-scan row (the wire-format test reads it)");
            return;
        }
        Bytes env = from_hex(str(v, "envelope_hex"));
        Buf out, fmt;
        if (c.code(cachekit_envelope_unwrap(out.p(), fmt.p(), env.data(), env.size()), CACHEKIT_EDESERIALIZE,
                   "cachekit_envelope_unwrap"))
            c.expect(last_message().find("Overclaim") != std::string::npos,
                     "refused by the typed decode, not the pre-scan: " + last_message());
    });
    assert_int_equal(failures, 0);
}

void test_the_payload_guard_refuses_what_a_sound_envelope_holds(void **) {
    int failures = run_category(R_wire, WIRE, "payload_reject_vectors", [&](const Json &v, Checks &c) {
        Bytes env = from_hex(str(v, "envelope_hex"));
        Buf payload, fmt;
        if (!c.ok(cachekit_envelope_unwrap(payload.p(), fmt.p(), env.data(), env.size()), "cachekit_envelope_unwrap"))
            return;
        c.code(cachekit_msgpack_check(payload.b.ptr, payload.b.size, 0), CACHEKIT_EOVERCLAIM,
               "cachekit_msgpack_check(unwrapped payload)");
    });
    assert_int_equal(failures, 0);
}

}  // namespace

int main(void) {
    FRAME = load_vectors("python-frame.json");
    WIRE = load_vectors("wire-format.json");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_frame_rows_are_refused_by_their_own_check),
        cmocka_unit_test(test_the_envelope_pre_scan_refuses_an_overclaim),
        cmocka_unit_test(test_the_payload_guard_refuses_what_a_sound_envelope_holds),
    };
    int rc = cmocka_run_group_tests_name("requirements: which check refused it", tests, nullptr, nullptr);
    R_frame.summary();
    R_wire.summary();
    return rc;
}
