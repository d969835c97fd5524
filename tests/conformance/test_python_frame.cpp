// python-frame.json: the reference Python SDK's CK v3 frame
// (cachekit_frame_decode / cachekit_frame_encode), the envelope inside it and
// the frames that must be refused.
#include "conformance_support.hpp"

#include <cstring>

#include <csetjmp>
#include <cstdarg>
extern "C" {
#include <cmocka.h>
}

using namespace ckconf;

namespace {

const char *const kFile = "python-frame.json";
Json V;
Report R(kFile);

const std::string &str(const Json &v, const char *field) { return v.at(field).get_ref<const std::string &>(); }

// The payload offset computed from the frame layout itself (7 + hlen).
size_t layout_payload_offset(const Bytes &frame) {
    if (frame.size() < 7) throw std::runtime_error("frame shorter than 7 bytes");
    uint32_t hlen = (uint32_t(frame[3]) << 24) | (uint32_t(frame[4]) << 16) | (uint32_t(frame[5]) << 8) | frame[6];
    if (7 + uint64_t(hlen) > frame.size()) throw std::runtime_error("header past the end");
    return 7 + hlen;
}

void test_frame_vectors(void **state) {
    (void)state;
    int failures = run_category(R, V, "frame_vectors", [](const Json &v, Checks &c) {
        Bytes frame = from_hex(str(v, "frame_hex"));
        const Json &hdr = v.at("expected_header");
        Buf serializer, meta;
        size_t off = 0;
        if (!c.ok(cachekit_frame_decode(serializer.p(), meta.p(), &off, frame.data(), frame.size()),
                  "cachekit_frame_decode"))
            return;
        c.expect(serializer.text() == str(hdr, "s"), "serializer: expected " + str(hdr, "s") + ", got " + serializer.text());
        Json m = Json::parse(meta.text());  // ordered: key order is compared too
        c.expect(m == hdr.at("m"), "metadata: expected " + hdr.at("m").dump() + ", got " + m.dump());
        size_t want_off = layout_payload_offset(frame);
        c.expect(off == want_off, "payload offset " + std::to_string(off) + ", expected " + std::to_string(want_off));
        Bytes payload(frame.begin() + static_cast<std::ptrdiff_t>(std::min(off, frame.size())), frame.end());
        if (v.contains("expected_payload_hex"))
            c.equal_hex(to_hex(payload), str(v, "expected_payload_hex"), "payload");
        // The header's "v" is pinned too.
        std::string header_text(frame.begin() + 7, frame.begin() + static_cast<std::ptrdiff_t>(want_off));
        Json header = Json::parse(header_text);
        c.expect(header.value("v", "") == str(hdr, "v"), "frame header v is not " + str(hdr, "v"));

        // Encoding the same header and payload gives the frame byte for byte
        // (the header written with the reference SDK's separators).
        Buf encoded;
        std::string meta_text = hdr.at("m").dump();
        if (c.ok(cachekit_frame_encode(encoded.p(), str(hdr, "s").c_str(), meta_text.c_str(), payload.data(),
                                       payload.size()),
                 "cachekit_frame_encode")) {
            if (encoded.bytes() != frame) {
                Bytes e = encoded.bytes();
                std::string got_header;
                try {
                    got_header = std::string(e.begin() + 7, e.begin() + static_cast<std::ptrdiff_t>(layout_payload_offset(e)));
                } catch (const std::exception &ex) {
                    got_header = ex.what();
                }
                c.add("encoded frame differs from frame_hex: header " + got_header + ", expected " + header_text);
            }
        }

        if (v.contains("payload_envelope")) {
            const Json &pe = v["payload_envelope"];
            Buf inner, fmt, json;
            if (c.ok(cachekit_envelope_unwrap(inner.p(), fmt.p(), payload.data(), payload.size()),
                     "cachekit_envelope_unwrap(payload)")) {
                c.equal_hex(inner.hex(), str(pe, "inner_msgpack_hex"), "inner msgpack");
                c.expect(fmt.text() == str(pe, "format"), "envelope format: expected " + str(pe, "format") + ", got " + fmt.text());
                c.expect(inner.b.size == pe.at("original_size").get<size_t>(), "inner size != original_size");
                c.equal_hex(envelope_checksum_hex(payload), str(pe, "checksum_hex"), "envelope checksum field");
                if (c.ok(cachekit_msgpack_to_json(json.p(), inner.b.ptr, inner.b.size), "cachekit_msgpack_to_json")) {
                    Json value = Json::parse(json.text());
                    if (v.contains("value_json"))
                        c.expect(value == v["value_json"],
                                 "value: expected " + v["value_json"].dump() + ", got " + value.dump());
                }
            }
        }

        if (v.contains("arrow_detection")) {
            const Json &ad = v["arrow_detection"];
            size_t clen = ad.at("checksum_len").get<size_t>();
            size_t moff = ad.at("ipc_magic_offset").get<size_t>();
            const std::string &magic = str(ad, "ipc_magic");
            if (payload.size() < clen || payload.size() < moff + magic.size()) {
                c.add("payload too short for the Arrow envelope");
            } else {
                c.equal_hex(to_hex(payload.data(), clen), str(ad, "checksum_hex"), "arrow checksum bytes");
                c.expect(std::memcmp(payload.data() + moff, magic.data(), magic.size()) == 0,
                         "no " + magic + " magic at payload offset " + std::to_string(moff));
            }
        }
    });
    assert_int_equal(failures, 0);
}

void test_error_vectors(void **state) {
    (void)state;
    int failures = run_category(R, V, "error_vectors", [](const Json &v, Checks &c) {
        Bytes frame = from_hex(str(v, "frame_hex"));
        if (str(v, "name") == "ck_frame_fed_to_interop_reader") {
            // Not a frame error: an interop reader sees one fixint and
            // trailing bytes.
            int rc = cachekit_msgpack_check(frame.data(), frame.size(), 0);
            if (c.code(rc, CACHEKIT_ETRAILING, "cachekit_msgpack_check")) c.note("TrailingBytes");
            Buf out;
            c.code(cachekit_msgpack_to_json(out.p(), frame.data(), frame.size()), CACHEKIT_ETRAILING,
                   "cachekit_msgpack_to_json");
            return;
        }
        Buf s, m;
        size_t off = 0;
        int rc = cachekit_frame_decode(s.p(), m.p(), &off, frame.data(), frame.size());
        if (c.code(rc, CACHEKIT_EFRAME, "cachekit_frame_decode")) c.note("InvalidFrame");
    });
    assert_int_equal(failures, 0);
}

}  // namespace

int main(void) {
    V = load_vectors(kFile);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_frame_vectors),
        cmocka_unit_test(test_error_vectors),
    };
    int rc = cmocka_run_group_tests_name("python-frame.json", tests, nullptr, nullptr);
    R.summary();
    return rc;
}
