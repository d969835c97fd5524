// The per-thread memo of the last CK frame header (src/cache/frame_facts):
// entries whose headers differ, read alternately on one thread, each decode
// by their own header; a header edited after a read is parsed afresh; a
// malformed header is refused every time, never answered from the memo.
#include <memory>
#include <string>

#include "cache/stored_value.hpp"
#include "codec/keyring.hpp"
#include "util/buffer.hpp"
#include "cache_test_util.hpp"

namespace {

using cachekit::Buffer;
using cachekit::cache::ValueFormat;
using cachekit::cache::Verdict;

const std::string kPayload = ct::mp_str("the payload, long enough to be worth compressing: aaaaaaaaaaaaaaaaaaaaaaaaaaaa");

std::string stored(const ValueFormat &fmt, const std::string &key) {
    Buffer out;
    cachekit::cache::encode_stored(fmt, key, kPayload, out.get());
    return std::string(out.view());
}

Verdict read(const ValueFormat &fmt, const std::string &key, const std::string &entry, std::string *payload) {
    Buffer out;
    std::string why;
    Verdict v = cachekit::cache::decode_stored(fmt, key, entry, out.get(), &why);
    *payload = std::string(out.view());
    return v;
}

void test_alternating_headers_decode_by_their_own(void **) {
    auto keyring = cachekit::crypto::Keyring::from_hex(ct::kMasterKeyHex, "");
    ValueFormat compressed, raw, sealed_a, sealed_b;
    raw.integrity = false;
    sealed_a.keyring = sealed_b.keyring = keyring.get();
    sealed_a.tenant = "tenant-a";
    sealed_b.tenant = "tenant-b";
    const std::string k = "ns:f:func:m.f:args:1";
    const std::string e_compressed = stored(compressed, k), e_raw = stored(raw, k);
    const std::string e_a = stored(sealed_a, k), e_b = stored(sealed_b, k);
    for (int round = 0; round < 3; ++round) {
        std::string p;
        assert_true(read(compressed, k, e_compressed, &p) == Verdict::Ok && p == kPayload);
        assert_true(read(raw, k, e_raw, &p) == Verdict::Ok && p == kPayload);
        assert_true(read(sealed_a, k, e_a, &p) == Verdict::Ok && p == kPayload);
        assert_true(read(sealed_b, k, e_b, &p) == Verdict::Ok && p == kPayload);
        // Each tenant's key opens only its own entries, whatever header came before.
        assert_true(read(sealed_b, k, e_a, &p) != Verdict::Ok);
        assert_true(read(sealed_a, k, e_a, &p) == Verdict::Ok);
        // A plaintext reader is refused an encrypted entry right after reading a plaintext one.
        assert_true(read(compressed, k, e_compressed, &p) == Verdict::Ok);
        assert_true(read(compressed, k, e_a, &p) == Verdict::WrongKey);
    }
}

void test_a_header_edited_after_a_read_is_parsed_afresh(void **) {
    ValueFormat fmt;
    const std::string k = "ns:f:func:m.f:args:2";
    const std::string entry = stored(fmt, k);
    std::string p;
    assert_true(read(fmt, k, entry, &p) == Verdict::Ok && p == kPayload);
    // Same length, the header now says uncompressed: parsed afresh, it claims
    // the other container, which this reader (integrity on) refuses; facts
    // remembered from the first header would have read it as before.
    std::string edited = entry;
    const size_t at = edited.find("\"compressed\": true");
    assert_true(at != std::string::npos);
    edited.replace(at, 18, "\"compressed\": null");
    assert_true(read(fmt, k, edited, &p) == Verdict::SerializerMismatch);
    // And a header broken after a good read is refused, not remembered.
    std::string broken = entry;
    broken[broken.find('{')] = '[';
    assert_true(read(fmt, k, entry, &p) == Verdict::Ok);
    assert_true(read(fmt, k, broken, &p) == Verdict::Corrupt);
    assert_true(read(fmt, k, broken, &p) == Verdict::Corrupt);
    // A cut-short header right after the good one.
    assert_true(read(fmt, k, entry, &p) == Verdict::Ok);
    assert_true(read(fmt, k, entry.substr(0, 20), &p) == Verdict::Corrupt);
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_alternating_headers_decode_by_their_own),
        cmocka_unit_test(test_a_header_edited_after_a_read_is_parsed_afresh),
    };
    return cmocka_run_group_tests_name("cache_frame_facts", tests, nullptr, nullptr);
}
