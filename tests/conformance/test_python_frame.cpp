// python-frame.json: the reference Python SDK's CK v3 frame
// (cachekit_frame_decode / cachekit_frame_encode), the envelope inside it and
// the frames that must be refused.
#include "conformance_support.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <utility>
#include <vector>

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


// The payload offset computed from the frame layout itself (7 + hlen).
size_t layout_payload_offset(const Bytes &frame) {
    if (frame.size() < 7) throw std::runtime_error("frame shorter than 7 bytes");
    uint32_t hlen = (uint32_t(frame[3]) << 24) | (uint32_t(frame[4]) << 16) | (uint32_t(frame[5]) << 8) | frame[6];
    if (7 + uint64_t(hlen) > frame.size()) throw std::runtime_error("header past the end");
    return 7 + hlen;
}

// A plaintext auto-mode reader of the core: format, integrity, a name.
struct ReaderConfig {
    int format;
    int integrity;
    const char *name;
};

// Which of the core's readers return each frame_vectors row's value: the
// "default" reader (CACHEKIT_FORMAT_AUTO), the "auto" one
// (CACHEKIT_FORMAT_AUTO_PYTHON), both integrity on, and "default" with
// integrity off. The others must miss on it as a serializer mismatch. Rows
// with no MessagePack value (raw bytes, Arrow) are not for these readers.
struct ReaderOutcome {
    bool applies;
    bool default_reads, auto_reads, raw_default_reads;
};
const std::map<std::string, ReaderOutcome> kReaderOutcomes = {
    {"raw_payload_frame", {false, false, false, false}},
    {"arrow_dataframe_write", {false, false, false, false}},
    {"arrow_compression_off_write", {false, false, false, false}},
    {"default_saas_write_msgpack_bytestorage", {true, true, false, false}},
    {"default_saas_write_msgpack_bytestorage_bin", {true, true, false, false}},
    {"std_alias_write", {true, true, false, false}},
    // Recorded as "auto": only the auto reader.
    {"auto_serializer_write", {true, false, true, false}},
    {"pythonic_alias_write", {true, false, true, false}},
    // A class name, or an alias recorded as given: no reader here matches.
    {"standard_serializer_instance_write", {true, false, false, false}},
    {"std_recorded_as_given_frame", {true, false, false, false}},
    // Integrity off: the raw MessagePack reader only.
    {"integrity_checking_off_write", {true, false, false, true}},
};

// Plant `frame` and read it through a plaintext cache configured as
// `reader` (fail_closed, so a refusal is named). Returns the get's status.
int plaintext_read(const ReaderConfig &reader, const Bytes &frame, Buf &out, std::string &message) {
    MemoryCache mc([&](cachekit_cache_options &o) {
        o.format = reader.format;
        o.integrity = reader.integrity;
        o.fail_closed = CACHEKIT_ON;
    });
    message.clear();
    return mc.get_planted("python-frame-reader", frame, out, &message);
}

// What an auto-mode cache (format CACHEKIT_FORMAT_AUTO or _AUTO_PYTHON,
// integrity on, no encryption) stores for `value`: put through a cache over
// a memory backend, read back raw.
Bytes cache_written_frame(int format, const Bytes &value) {
    const std::string key = "python-frame-writer";
    MemoryCache mc([&](cachekit_cache_options &o) { o.format = format; });
    Buf raw;
    int rc = mc.rc();
    if (rc == 0) rc = cachekit_cache_put(mc.cache(), "", key.data(), key.size(), value.data(), value.size(), 0);
    if (rc == 0) rc = cachekit_backend_get(mc.backend(), raw.p(), key.data(), key.size());
    if (rc) throw std::runtime_error("writing through a cache: " + describe_rc(rc));
    return raw.bytes();
}

// `frame` re-padded as cachekit-py 0.24.1's SerializationWrapper.wrap_prefix
// (align=64, offset=22) pads an uncompressed Arrow write: spaces after the
// JSON header, counted in the header length, until 22 + prefix length is a
// multiple of 64. A frame that is already aligned gets 64 spaces, so every
// row reads a padded header.
Bytes padded_like_024(const Bytes &frame) {
    const size_t off = layout_payload_offset(frame);
    size_t pad = (64 - (22 + off) % 64) % 64;
    if (pad == 0) pad = 64;
    const size_t hlen = off - 7 + pad;
    Bytes out(frame.begin(), frame.begin() + static_cast<std::ptrdiff_t>(off));
    out.insert(out.end(), pad, uint8_t(' '));
    out.insert(out.end(), frame.begin() + static_cast<std::ptrdiff_t>(off), frame.end());
    for (int i = 0; i < 4; ++i) out[3 + i] = uint8_t(hlen >> (24 - 8 * i));
    return out;
}

// What the frame reader's message says for each layer an error vector's
// `rejected_by` names (the layers check in this order).
const char *layer_phrase(const std::string &layer) {
    if (layer == "prefix_length") return "at least 7 bytes";
    if (layer == "magic") return "magic";
    if (layer == "version") return "version";
    if (layer == "header_length") return "declared header length";
    if (layer == "serializer_name") return "records no serializer name";
    return nullptr;
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

        // cachekit-py 0.24.x pads the header with ASCII spaces (counted in
        // the header length) so the body lands on a 64-byte boundary of a
        // file-backend entry (14-byte file header + 8-byte Arrow checksum
        // before it): the same frame padded that way reads the same.
        {
            Bytes padded = padded_like_024(frame);
            Buf ps, pm;
            size_t poff = 0;
            if (c.ok(cachekit_frame_decode(ps.p(), pm.p(), &poff, padded.data(), padded.size()),
                     "cachekit_frame_decode(header padded with spaces)")) {
                c.expect(ps.text() == serializer.text() && pm.text() == meta.text(),
                         "the padded header decodes to another serializer or metadata");
                c.expect(poff == layout_payload_offset(padded) && (22 + poff) % 64 == 0,
                         "padded frame: payload offset " + std::to_string(poff) + " is not past the padding");
                c.expect(Bytes(padded.begin() + static_cast<std::ptrdiff_t>(poff), padded.end()) == payload,
                         "padded frame: the payload differs");
            }
        }

        // The cache's own auto-mode writer: for the frames it can write (the
        // default and auto serializers, integrity on, plaintext) its prefix
        // and header equal the vector's byte for byte. cachekit-py 0.24.1 pads
        // only uncompressed plaintext Arrow (wrap_prefix align=64), so for
        // these it writes no padding either.
        if (v.contains("payload_envelope") && hdr.at("m").value("compressed", false) && !hdr.at("m").contains("encrypted") &&
            (str(hdr, "s") == "default" || str(hdr, "s") == "auto")) {
            Bytes written = cache_written_frame(str(hdr, "s") == "auto" ? CACHEKIT_FORMAT_AUTO_PYTHON : CACHEKIT_FORMAT_AUTO,
                                                from_hex(str(v["payload_envelope"], "inner_msgpack_hex")));
            size_t woff = 0;
            try {
                woff = layout_payload_offset(written);
            } catch (const std::exception &e) {
                c.add(std::string("the cache's frame: ") + e.what());
            }
            if (woff) {
                c.expect(woff == want_off && std::equal(frame.begin(), frame.begin() + static_cast<std::ptrdiff_t>(want_off), written.begin()),
                         "the cache writes another prefix/header: " +
                             std::string(written.begin() + 7, written.begin() + static_cast<std::ptrdiff_t>(woff)));
                Buf inner;
                if (c.ok(cachekit_envelope_unwrap(inner.p(), nullptr, written.data() + woff, written.size() - woff),
                         "cachekit_envelope_unwrap(the cache's payload)"))
                    c.equal_hex(inner.hex(), str(v["payload_envelope"], "inner_msgpack_hex"), "the cache's payload");
                c.note("the cache's writer: same header, no padding");
            }
        }

        // Planted under the core's readers, the recorded name decides (no
        // alias resolution: a frame recording "std" is not "default"'s).
        auto expected = kReaderOutcomes.find(str(v, "name"));
        if (expected == kReaderOutcomes.end()) {
            c.add("no reader outcome is listed for this frame");
        } else if (expected->second.applies) {
            for (const auto &[reader, reads] : std::initializer_list<std::pair<ReaderConfig, bool>>{
                     {{CACHEKIT_FORMAT_AUTO, CACHEKIT_ON, "default"}, expected->second.default_reads},
                     {{CACHEKIT_FORMAT_AUTO_PYTHON, CACHEKIT_ON, "auto"}, expected->second.auto_reads},
                     {{CACHEKIT_FORMAT_AUTO, CACHEKIT_OFF, "default, integrity off"}, expected->second.raw_default_reads}}) {
                Buf out;
                std::string msg;
                int rc = plaintext_read(reader, frame, out, msg);
                if (reads) {
                    if (c.ok(rc, std::string("read by the ") + reader.name + " reader") && v.contains("payload_envelope"))
                        c.equal_hex(out.hex(), str(v["payload_envelope"], "inner_msgpack_hex"),
                                    std::string("value read by the ") + reader.name + " reader");
                    else if (rc == 0 && v.contains("expected_payload_hex"))
                        c.equal_hex(out.hex(), str(v, "expected_payload_hex"), std::string("value read by the ") + reader.name + " reader");
                } else {
                    c.expect(rc == CACHEKIT_ECORRUPT && msg.find("refused (serializer_mismatch)") != std::string::npos,
                             std::string("the ") + reader.name + " reader must miss on it as a mismatch, got " +
                                 describe_rc(rc));
                }
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
        // Every other row is the frame reader's: InvalidFrame, with the
        // message of the layer `rejected_by` names.
        const std::string layer = v.value("rejected_by", "");
        const char *phrase = layer_phrase(layer);
        if (!phrase) {
            c.add("no frame-reader layer is mapped to rejected_by \"" + layer + "\"");
            return;
        }
        Buf s, m;
        size_t off = 0;
        int rc = cachekit_frame_decode(s.p(), m.p(), &off, frame.data(), frame.size());
        if (!c.code(rc, CACHEKIT_EFRAME, "cachekit_frame_decode")) return;
        const std::string msg = cachekit_error_last_message();
        c.expect(msg.find(phrase) != std::string::npos,
                 "InvalidFrame, but the message \"" + msg + "\" does not name the " + layer + " layer (\"" + phrase + "\")");
        c.note("InvalidFrame: " + msg);
        // The cache's auto-mode read runs the same frame reader: refused as a
        // bad frame (corrupt), also the other SDKs' containers without the
        // magic, never sniffed into a value.
        for (int format : {CACHEKIT_FORMAT_AUTO, CACHEKIT_FORMAT_AUTO_PYTHON}) {
            Buf out;
            std::string why;
            int got = plaintext_read({format, CACHEKIT_ON, "auto-mode"}, frame, out, why);
            c.expect(got == CACHEKIT_ECORRUPT && why.find("refused (corrupt)") != std::string::npos &&
                         why.find(phrase) != std::string::npos,
                     "auto-mode cache read: expected a corrupt refusal naming the " + layer + " layer, got " +
                         describe_rc(got) + (why.empty() ? "" : " (" + why + ")"));
        }
    });
    assert_int_equal(failures, 0);
}

// ---- encrypted_reader + encrypted_read_vectors ---------------------------

// An auto-mode cache configured as `encrypted_reader` says (master key,
// tenant; the default serializer, integrity on) over a memory backend, L1 off
// so every get reads the planted entry.
struct Reader {
    MemoryCache mc;
    Reader(const Json &cfg, int fail_closed)
        : mc([&](cachekit_cache_options &o) {
              o.format = CACHEKIT_FORMAT_AUTO;
              o.integrity = CACHEKIT_ON;
              o.encryption = CACHEKIT_ON;
              o.master_key_hex = cfg.at("master_key_hex").get_ref<const std::string &>().c_str();
              o.tenant = cfg.at("tenant_id").get_ref<const std::string &>().c_str();
              o.fail_closed = fail_closed;
          }) {
        if (mc.rc() != 0) throw std::runtime_error("cachekit_cache_new: " + describe_rc(mc.rc()));
    }
    // Plant `stored` under `key` and read it through the cache.
    int read(const std::string &key, const Bytes &stored, Buf &out) { return mc.get_planted(key, stored, out); }
};

// What a fail-closed read of each row must answer: the status code and the
// refusal the message names (cache entry refused (<verdict>)). Either of two
// refusals where the row allows both. A row not listed is a FAIL.
struct ReadRefusal {
    int code;
    std::vector<std::string> verdicts;
};
const std::map<std::string, ReadRefusal> kReadRefusals = {
    // The header's "encrypted": false must not downgrade an encrypted cache.
    {"forged_plaintext_encrypted_false", {CACHEKIT_ECORRUPT, {"downgrade"}}},
    // Another serializer and no encryption: whichever is refused first.
    {"forged_plaintext_orjson", {CACHEKIT_ECORRUPT, {"serializer_mismatch", "downgrade"}}},
    // The fingerprint names a key this keyring lacks (another master key,
    // or the reader's master key for another tenant).
    {"ciphertext_key_not_in_keyring", {CACHEKIT_EKEYNOTFOUND, {"wrong_key"}}},
    {"ciphertext_other_tenant", {CACHEKIT_EKEYNOTFOUND, {"wrong_key"}}},
    // Authenticates, but the plaintext is not the configured envelope.
    {"ciphertext_plain_msgpack_not_envelope", {CACHEKIT_ECORRUPT, {"corrupt"}}},
    // Claims the other container: this reader reads only its configured one,
    // so the entry is another configuration's (refused before decryption).
    {"ciphertext_plain_msgpack_claims_uncompressed", {CACHEKIT_ECORRUPT, {"serializer_mismatch"}}},
    // The recorded name is checked on ciphertext too.
    {"ciphertext_serializer_name_auto", {CACHEKIT_ECORRUPT, {"serializer_mismatch"}}},
    {"ciphertext_serializer_name_missing", {CACHEKIT_ECORRUPT, {"corrupt"}}},
};

// The value every row's plaintext is built from (python-frame.json's
// default write): {"user_id": 42, "name": "cachekit", "active": true}.
const char *const kDefaultWriteValueHex = "83a7757365725f69642aa46e616d65a863616368656b6974a6616374697665c3";

// The same frame with its header's "s" set to "default" (added when absent),
// metadata and payload unchanged: what the row's generator checked reads back.
Bytes renamed_to_default(const Bytes &frame) {
    Json header = Json::parse(std::string(frame.begin() + 7, frame.begin() + static_cast<std::ptrdiff_t>(layout_payload_offset(frame))));
    Buf out;
    std::string m = header.at("m").dump();
    if (cachekit_frame_encode(out.p(), "default", m.c_str(), frame.data() + layout_payload_offset(frame),
                              frame.size() - layout_payload_offset(frame)) != 0)
        throw std::runtime_error("cachekit_frame_encode: " + describe_rc(cachekit_error_last_code()));
    return out.bytes();
}

void test_encrypted_reader(void **state) {
    (void)state;
    // The reader's configuration: every field the read vectors rely on.
    auto it = V.find("encrypted_reader");
    if (it == V.end() || !it->is_object()) {
        (R.fail)("encrypted_reader", "the vector file has no object named encrypted_reader");  // not cmocka's fail()
        fail();
    }
    Checks c;
    for (const char *field : {"master_key_hex", "tenant_id", "tenant_source", "cache_key"})
        c.expect(it->contains(field) && (*it)[field].is_string(), std::string("encrypted_reader has no string ") + field);
    if (c.passed()) {
        c.expect((*it)["tenant_source"] == "reader", "tenant_source is not \"reader\": the cache takes its tenant from its options");
        std::string mk = (*it)["master_key_hex"].get<std::string>();
        unsigned char key[CACHEKIT_KEY_SIZE];
        c.ok(cachekit_master_key_from_hex(key, mk.c_str(), mk.size()), "cachekit_master_key_from_hex(master_key_hex)");
    }
    c.report(R, "encrypted_reader");
    assert_true(c.passed());
}

void test_encrypted_read_vectors(void **state) {
    (void)state;
    const Json cfg = V.at("encrypted_reader");
    const std::string key = cfg.at("cache_key").get<std::string>();
    int failures = run_category(R, V, "encrypted_read_vectors", [&](const Json &v, Checks &c) {
        const std::string name = str(v, "name");
        Bytes frame = from_hex(str(v, "frame_hex"));
        // The frame is what the row says it is.
        Buf s, meta;
        size_t off = 0;
        const Json &hdr = v.at("expected_header");
        int drc = cachekit_frame_decode(s.p(), meta.p(), &off, frame.data(), frame.size());
        if (hdr.contains("s")) {
            if (c.ok(drc, "cachekit_frame_decode"))
                c.expect(Json::parse(meta.text()) == hdr.at("m"), "metadata differs from expected_header.m");
        } else {
            c.code(drc, CACHEKIT_EFRAME, "cachekit_frame_decode (no serializer name)");
        }
        if (str(v, "outcome") != "fail_closed") {
            c.add("outcome \"" + str(v, "outcome") + "\" is not one this test knows (fail_closed)");
            return;
        }
        auto want = kReadRefusals.find(name);
        if (want == kReadRefusals.end()) {
            c.add("no expected refusal is listed for this row");
            return;
        }
        // Fail closed: the named status and refusal.
        {
            Reader reader(cfg, CACHEKIT_ON);
            Buf out;
            int rc = reader.read(key, frame, out);
            const std::string msg = cachekit_error_last_message();
            if (rc == CACHEKIT_OK) {
                c.add("fail-closed read returned a value: " + out.hex());
            } else if (c.code(rc, want->second.code, "cachekit_cache_get (fail_closed)")) {
                bool named = false;
                for (const auto &verdict : want->second.verdicts)
                    named = named || msg.find("refused (" + verdict + ")") != std::string::npos;
                c.expect(named, "message \"" + msg + "\" does not name the expected refusal");
                c.note(cachekit_error_name(rc) + std::string(": ") + msg.substr(0, msg.find(')') + 1));
            }
        }
        // Fail open (the default policy): the same row is a miss.
        {
            Reader reader(cfg, CACHEKIT_OFF);
            Buf out;
            int rc = reader.read(key, frame, out);
            c.expect(rc == CACHEKIT_ENOTFOUND, "fail-open read: expected a miss, got " + describe_rc(rc));
        }
        // Where only the recorded name differs, the frame recording "default"
        // reads back as the value: the refusal above is the name's.
        if (name == "ciphertext_serializer_name_auto" || name == "ciphertext_serializer_name_missing") {
            Bytes fixed;
            if (name == "ciphertext_serializer_name_missing") {
                // Rebuild the header with "s" in front of the row's metadata.
                Buf out;
                std::string m = hdr.at("m").dump();
                size_t hlen = (size_t(frame[3]) << 24) | (size_t(frame[4]) << 16) | (size_t(frame[5]) << 8) | frame[6];
                if (!c.ok(cachekit_frame_encode(out.p(), "default", m.c_str(), frame.data() + 7 + hlen, frame.size() - 7 - hlen),
                          "cachekit_frame_encode"))
                    return;
                fixed = out.bytes();
            } else {
                fixed = renamed_to_default(frame);
            }
            Reader reader(cfg, CACHEKIT_ON);
            Buf out;
            if (c.ok(reader.read(key, fixed, out), "cachekit_cache_get (the same frame recording \"default\")"))
                c.equal_hex(out.hex(), kDefaultWriteValueHex, "value of the frame recording \"default\"");
        }
    });
    assert_int_equal(failures, 0);
}

}  // namespace

int main(void) {
    V = load_vectors(kFile);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_frame_vectors),
        cmocka_unit_test(test_error_vectors),
        cmocka_unit_test(test_encrypted_reader),
        cmocka_unit_test(test_encrypted_read_vectors),
    };
    int rc = cmocka_run_group_tests_name("python-frame.json", tests, nullptr, nullptr);
    R.summary();
    return rc;
}
