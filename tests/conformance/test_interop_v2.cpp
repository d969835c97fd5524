// interop-v2.json (DRAFT): the compressed interop container
// (cachekit_container_v2_unwrap / _wrap), its rejects, AAD and encryption.
#include "conformance_support.hpp"

#include <csetjmp>
#include <cstdarg>
extern "C" {
#include <cmocka.h>
}

using namespace ckconf;

namespace {

const char *const kFile = "interop-v2.json";
Json V;
Report R(kFile);


// Our own container of `value` with `method` must unwrap to `value`.
void check_roundtrip(Checks &c, const Bytes &value, int method, Buf &wrapped) {
    Buf back;
    if (!c.ok(cachekit_container_v2_wrap(wrapped.p(), value.data(), value.size(), method),
              "cachekit_container_v2_wrap(method " + std::to_string(method) + ")"))
        return;
    if (c.ok(cachekit_container_v2_unwrap(back.p(), wrapped.b.ptr, wrapped.b.size), "cachekit_container_v2_unwrap(own)"))
        c.expect(back.bytes() == value, "own container (method " + std::to_string(method) + ") did not round-trip");
}

void test_container_vectors(void **state) {
    (void)state;
    int failures = run_category(R, V, "container_vectors", [](const Json &v, Checks &c) {
        Bytes container = from_hex(str(v, "container_hex"));
        Bytes value = from_hex(str(v, "value_msgpack_hex"));
        c.expect(value.size() == v.at("original_size").get<size_t>(), "value_msgpack_hex length != original_size");
        // The pinned value bytes are the VALUE-profile encoding of `value`.
        Bytes encoded = encode_tagged(v.at("value"));
        Buf canon;
        if (c.ok(cachekit_msgpack_canonical(canon.p(), encoded.data(), encoded.size(), CACHEKIT_PROFILE_VALUE),
                 "cachekit_msgpack_canonical(value)"))
            c.equal_hex(canon.hex(), to_hex(value), "canonical value vs value_msgpack_hex");

        Buf out;
        if (c.ok(cachekit_container_v2_unwrap(out.p(), container.data(), container.size()), "cachekit_container_v2_unwrap"))
            c.equal_hex(out.hex(), to_hex(value), "unwrapped value");

        const int method = v.at("method").get<int>();
        Buf wrapped;
        check_roundtrip(c, value, method, wrapped);
        // Method 0 is deterministic: a canonical writer reproduces the
        // container exactly (except the deliberately non-canonical vector).
        if (method == CACHEKIT_V2_METHOD_NONE && str(v, "name") != "method0_noncanonical_widths" && wrapped.b.ptr)
            c.equal_hex(wrapped.hex(), str(v, "container_hex"), "method 0 container");
        // And the other method round-trips too.
        Buf other;
        check_roundtrip(c, value, method == 0 ? CACHEKIT_V2_METHOD_LZ4 : CACHEKIT_V2_METHOD_NONE, other);
    });
    assert_int_equal(failures, 0);
}

void test_constructed_container_vectors(void **state) {
    (void)state;
    int failures = run_category(R, V, "constructed_container_vectors", [](const Json &v, Checks &c) {
        Bytes container = construct_segments(v.at("container_construction"));
        Bytes value = construct_segments(v.at("value_construction"));
        c.expect(container.size() == v.at("container_len").get<size_t>(), "constructed container has the wrong size");
        c.expect(value.size() == v.at("original_size").get<size_t>(), "constructed value has the wrong size");
        Buf out;
        if (c.ok(cachekit_container_v2_unwrap(out.p(), container.data(), container.size()), "cachekit_container_v2_unwrap"))
            c.expect(out.bytes() == value, "unwrapped value differs from value_construction");
        Buf wrapped;
        check_roundtrip(c, value, v.at("method").get<int>(), wrapped);
    });
    assert_int_equal(failures, 0);
}

void test_reject_vectors(void **state) {
    (void)state;
    int failures = run_category(R, V, "reject_vectors", [](const Json &v, Checks &c) {
        Bytes container = from_hex(str(v, "container_hex"));
        Buf out;
        int rc = cachekit_container_v2_unwrap(out.p(), container.data(), container.size());
        if (c.rejects(rc, "cachekit_container_v2_unwrap")) c.note(cachekit_error_name(rc));
    });
    assert_int_equal(failures, 0);
}

void test_aad_vectors(void **state) {
    (void)state;
    int failures = run_category(R, V, "aad_vectors", [](const Json &v, Checks &c) {
        Buf aad, v1;
        if (c.ok(cachekit_crypto_aad(aad.p(), str(v, "tenant_id").c_str(), str(v, "cache_key").c_str(),
                                     str(v, "format").c_str(), v.at("compressed").get<bool>(), nullptr),
                 "cachekit_crypto_aad"))
            c.equal_hex(aad.hex(), str(v, "aad_hex"), "aad");
        if (v.contains("v1_aad_hex_for_comparison") &&
            c.ok(cachekit_crypto_aad(v1.p(), str(v, "tenant_id").c_str(), str(v, "cache_key").c_str(),
                                     str(v, "format").c_str(), 0, nullptr),
                 "cachekit_crypto_aad(v1)"))
            c.equal_hex(v1.hex(), str(v, "v1_aad_hex_for_comparison"), "v1 aad");
    });
    assert_int_equal(failures, 0);
}

bool derive(Checks &c, const Json &v, cachekit_derived_keys &keys) {
    const std::string &hex = str(v, "master_key_hex");
    unsigned char master[CACHEKIT_KEY_SIZE];
    if (!c.ok(cachekit_master_key_from_hex(master, hex.c_str(), hex.size()), "cachekit_master_key_from_hex")) return false;
    return c.ok(cachekit_crypto_derive(&keys, master, sizeof master, str(v, "tenant_id").c_str()),
                "cachekit_crypto_derive");
}

void test_encryption_vectors(void **state) {
    (void)state;
    int failures = run_category(R, V, "encryption_vectors", [](const Json &v, Checks &c) {
        cachekit_derived_keys keys;
        if (!derive(c, v, keys)) return;
        c.equal_hex(to_hex(keys.fingerprint, sizeof keys.fingerprint), str(v, "derived_key_fingerprint_hex"),
                    "fingerprint");
        Buf aad;
        if (!c.ok(cachekit_crypto_aad(aad.p(), str(v, "tenant_id").c_str(), str(v, "cache_key").c_str(),
                                      str(v, "format").c_str(), v.at("compressed").get<bool>(), nullptr),
                  "cachekit_crypto_aad"))
            return;
        c.equal_hex(aad.hex(), str(v, "aad_hex"), "aad");
        Bytes plain = from_hex(str(v, "plaintext_hex"));
        Bytes nonce = from_hex(str(v, "nonce_hex"));
        Bytes sealed = from_hex(str(v, "ciphertext_hex"));
        if (nonce.size() != CACHEKIT_NONCE_SIZE) {
            c.add("nonce_hex is not 12 bytes");
            return;
        }
        Buf ct, pt, value;
        if (c.ok(cachekit_crypto_encrypt(ct.p(), keys.encryption, aad.b.ptr, aad.b.size, plain.data(), plain.size(),
                                         nonce.data()),
                 "cachekit_crypto_encrypt"))
            c.equal_hex(ct.hex(), str(v, "ciphertext_hex"), "ciphertext");
        if (c.ok(cachekit_crypto_decrypt(pt.p(), keys.encryption, aad.b.ptr, aad.b.size, sealed.data(), sealed.size()),
                 "cachekit_crypto_decrypt")) {
            c.equal_hex(pt.hex(), str(v, "plaintext_hex"), "plaintext");
            // The plaintext is a v2 container; it opens.
            c.ok(cachekit_container_v2_unwrap(value.p(), pt.b.ptr, pt.b.size), "cachekit_container_v2_unwrap(plaintext)");
        }
    });
    assert_int_equal(failures, 0);
}

void test_crypto_reject_vectors(void **state) {
    (void)state;
    int failures = run_category(R, V, "crypto_reject_vectors", [](const Json &v, Checks &c) {
        cachekit_derived_keys keys;
        if (!derive(c, v, keys)) return;
        Bytes aad = from_hex(str(v, "aad_hex"));
        Bytes sealed = from_hex(str(v, "ciphertext_hex"));
        Buf pt;
        if (c.code(cachekit_crypto_decrypt(pt.p(), keys.encryption, aad.data(), aad.size(), sealed.data(), sealed.size()),
                   CACHEKIT_EAUTH, "cachekit_crypto_decrypt"))
            c.note("AuthenticationFailed");
    });
    assert_int_equal(failures, 0);
}

}  // namespace

int main(void) {
    V = load_vectors(kFile);
    if (!cachekit_crypto_available())
        std::printf("note: AES-256-GCM is unavailable on this CPU; the encryption vectors will fail\n");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_container_vectors),
        cmocka_unit_test(test_constructed_container_vectors),
        cmocka_unit_test(test_reject_vectors),
        cmocka_unit_test(test_aad_vectors),
        cmocka_unit_test(test_encryption_vectors),
        cmocka_unit_test(test_crypto_reject_vectors),
    };
    int rc = cmocka_run_group_tests_name("interop-v2.json", tests, nullptr, nullptr);
    R.summary();
    return rc;
}
