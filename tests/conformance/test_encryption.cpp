// encryption.json: AES-256-GCM known answers with AAD v0x03, HKDF key
// derivation and fingerprints, keyring rotation, the default tenant, and the
// master-key input rules.
#include "conformance_support.hpp"

#include <cstring>

#include <csetjmp>
#include <cstdarg>
extern "C" {
#include <cmocka.h>
}

using namespace ckconf;

namespace {

const char *const kFile = "encryption.json";
Json V;
Report R(kFile);

const std::string &str(const Json &v, const char *field) { return v.at(field).get_ref<const std::string &>(); }

bool derive_from_hex(Checks &c, const std::string &hex, const char *tenant, cachekit_derived_keys &keys) {
    unsigned char master[CACHEKIT_KEY_SIZE];
    if (!c.ok(cachekit_master_key_from_hex(master, hex.c_str(), hex.size()), "cachekit_master_key_from_hex"))
        return false;
    return c.ok(cachekit_crypto_derive(&keys, master, sizeof master, tenant), "cachekit_crypto_derive");
}

// The AAD of a vector (tenant NULL = "default"), checked against aad_hex.
bool vector_aad(Checks &c, const Json &v, const char *tenant, Buf &aad) {
    if (!c.ok(cachekit_crypto_aad(aad.p(), tenant, str(v, "cache_key").c_str(), str(v, "format").c_str(),
                                  v.at("compressed").get<bool>(), opt_cstr(v, "original_type")),
              "cachekit_crypto_aad"))
        return false;
    c.equal_hex(aad.hex(), str(v, "aad_hex"), "aad");
    return true;
}

// Decrypt, re-encrypt with the vector's nonce, and check that tampering with
// the ciphertext or the AAD fails authentication.
void check_sealed(Checks &c, const unsigned char key[CACHEKIT_KEY_SIZE], const Buf &aad, const Json &v) {
    Bytes sealed = from_hex(str(v, "ciphertext_hex"));
    Bytes plain = from_hex(str(v, "plaintext_hex"));
    Buf pt, ct;
    if (c.ok(cachekit_crypto_decrypt(pt.p(), key, aad.b.ptr, aad.b.size, sealed.data(), sealed.size()),
             "cachekit_crypto_decrypt"))
        c.equal_hex(pt.hex(), str(v, "plaintext_hex"), "plaintext");
    if (sealed.size() < CACHEKIT_NONCE_SIZE + CACHEKIT_TAG_SIZE) {
        c.add("ciphertext shorter than nonce + tag");
        return;
    }
    if (c.ok(cachekit_crypto_encrypt(ct.p(), key, aad.b.ptr, aad.b.size, plain.data(), plain.size(), sealed.data()),
             "cachekit_crypto_encrypt(nonce = first 12 bytes)"))
        c.equal_hex(ct.hex(), str(v, "ciphertext_hex"), "re-encrypted ciphertext");
    // One flipped byte in the nonce, the body (or first tag byte) and the tag.
    for (size_t at : {size_t(0), size_t(CACHEKIT_NONCE_SIZE), sealed.size() - 1}) {
        Bytes t = sealed;
        t[at] ^= 0x01;
        c.code(cachekit_crypto_decrypt(pt.p(), key, aad.b.ptr, aad.b.size, t.data(), t.size()), CACHEKIT_EAUTH,
               "decrypt with byte " + std::to_string(at) + " flipped");
    }
    Bytes wrong(reinterpret_cast<const uint8_t *>(aad.b.ptr), reinterpret_cast<const uint8_t *>(aad.b.ptr) + aad.b.size);
    wrong.back() ^= 0x01;
    c.code(cachekit_crypto_decrypt(pt.p(), key, wrong.data(), wrong.size(), sealed.data(), sealed.size()),
           CACHEKIT_EAUTH, "decrypt with a wrong AAD");
}

void test_vectors(void **state) {
    (void)state;
    int failures = run_category(R, V, "vectors", [](const Json &v, Checks &c) {
        const std::string &tenant = str(V, "tenant_id");
        cachekit_derived_keys keys;
        if (!derive_from_hex(c, str(V, "master_key_hex"), tenant.c_str(), keys)) return;
        c.equal_hex(to_hex(keys.fingerprint, sizeof keys.fingerprint), str(V, "derived_key_fingerprint_hex"),
                    "fingerprint");
        Buf aad;
        if (!vector_aad(c, v, tenant.c_str(), aad)) return;
        check_sealed(c, keys.encryption, aad, v);
        c.note(v.contains("original_type") ? "5-component AAD" : "4-component AAD");
    });
    assert_int_equal(failures, 0);
}

void test_keyring(void **state) {
    (void)state;
    const Json &kr = V.at("keyring");
    const std::string &tenant = str(kr, "tenant_id");
    // Entries by id, with their fingerprints checked once.
    std::string k1_hex, k2_hex, k1_fp, k2_fp;
    for (const auto &e : kr.at("entries")) {
        if (str(e, "id") == "k1") k1_hex = str(e, "master_key_hex"), k1_fp = str(e, "derived_key_fingerprint_hex");
        if (str(e, "id") == "k2") k2_hex = str(e, "master_key_hex"), k2_fp = str(e, "derived_key_fingerprint_hex");
    }
    assert_false(k1_hex.empty() || k2_hex.empty());

    int failures = run_category(R, kr, "vectors", [&](const Json &v, Checks &c) {
        const bool by_k1 = str(v, "encrypted_with") == "k1";
        const std::string &fp_hex = str(v, "key_fingerprint_hex");
        c.equal_hex(fp_hex, by_k1 ? k1_fp : k2_fp, "key_fingerprint_hex vs the entry's fingerprint");
        cachekit_derived_keys keys;
        if (derive_from_hex(c, by_k1 ? k1_hex : k2_hex, tenant.c_str(), keys))
            c.equal_hex(to_hex(keys.fingerprint, sizeof keys.fingerprint), fp_hex, "derived fingerprint");
        Buf aad;
        if (!vector_aad(c, v, tenant.c_str(), aad)) return;
        Bytes sealed = from_hex(str(v, "ciphertext_hex"));
        Bytes fp = from_hex(fp_hex);

        // current = k2, previous = k1.
        cachekit_keyring *ring = nullptr;
        if (!c.ok(cachekit_keyring_new(&ring, k2_hex.c_str(), k1_hex.c_str()), "cachekit_keyring_new(k2, [k1])")) return;
        unsigned char cur_fp[CACHEKIT_FINGERPRINT_SIZE];
        if (c.ok(cachekit_keyring_fingerprint(ring, cur_fp, tenant.c_str()), "cachekit_keyring_fingerprint"))
            c.equal_hex(to_hex(cur_fp, sizeof cur_fp), k2_fp, "keyring current fingerprint");
        const int want_index = by_k1 ? 1 : 0;
        for (bool with_fp : {true, false}) {
            Buf pt;
            int index = -1;
            std::string call = with_fp ? "cachekit_keyring_decrypt(fingerprint)" : "cachekit_keyring_decrypt(no fingerprint)";
            if (c.ok(cachekit_keyring_decrypt(ring, pt.p(), &index, tenant.c_str(), with_fp ? fp.data() : nullptr,
                                              aad.b.ptr, aad.b.size, sealed.data(), sealed.size()),
                     call)) {
                c.equal_hex(pt.hex(), str(v, "plaintext_hex"), call + " plaintext");
                c.expect(index == want_index, call + ": key_index " + std::to_string(index) + ", expected " +
                                                  std::to_string(want_index));
            }
        }
        cachekit_keyring_free(ring);

        // A keyring of only k2 cannot open k1's entry by fingerprint.
        ring = nullptr;
        if (!c.ok(cachekit_keyring_new(&ring, k2_hex.c_str(), nullptr), "cachekit_keyring_new(k2)")) return;
        Buf pt;
        int rc = cachekit_keyring_decrypt(ring, pt.p(), nullptr, tenant.c_str(), fp.data(), aad.b.ptr, aad.b.size,
                                          sealed.data(), sealed.size());
        if (by_k1) {
            c.code(rc, CACHEKIT_EKEYNOTFOUND, "k2-only keyring given k1's fingerprint");
            rc = cachekit_keyring_decrypt(ring, pt.p(), nullptr, tenant.c_str(), nullptr, aad.b.ptr, aad.b.size,
                                          sealed.data(), sealed.size());
            c.code(rc, CACHEKIT_EAUTH, "k2-only keyring without a fingerprint");
        } else if (c.ok(rc, "k2-only keyring given k2's fingerprint")) {
            c.equal_hex(pt.hex(), str(v, "plaintext_hex"), "k2-only keyring plaintext");
        }
        cachekit_keyring_free(ring);
    });
    assert_int_equal(failures, 0);
}

void test_default_tenant(void **state) {
    (void)state;
    const Json &dt = V.at("default_tenant");
    int failures = run_category(R, dt, "vectors", [&](const Json &v, Checks &c) {
        c.expect(str(dt, "tenant_id") == "default", "tenant_id is not \"default\"");
        cachekit_derived_keys keys, named;
        if (!derive_from_hex(c, str(V, "master_key_hex"), nullptr, keys)) return;
        c.equal_hex(to_hex(keys.fingerprint, sizeof keys.fingerprint), str(dt, "derived_key_fingerprint_hex"),
                    "fingerprint (tenant NULL)");
        if (derive_from_hex(c, str(V, "master_key_hex"), "default", named))
            c.expect(std::memcmp(&keys, &named, sizeof keys) == 0, "tenant NULL and \"default\" derive different keys");
        Buf aad;
        if (!vector_aad(c, v, nullptr, aad)) return;
        check_sealed(c, keys.encryption, aad, v);
        // The keyring's default tenant too.
        cachekit_keyring *ring = nullptr;
        if (c.ok(cachekit_keyring_new(&ring, str(V, "master_key_hex").c_str(), nullptr), "cachekit_keyring_new")) {
            Bytes sealed = from_hex(str(v, "ciphertext_hex"));
            Buf pt;
            if (c.ok(cachekit_keyring_decrypt(ring, pt.p(), nullptr, nullptr, keys.fingerprint, aad.b.ptr, aad.b.size,
                                              sealed.data(), sealed.size()),
                     "cachekit_keyring_decrypt(tenant NULL)"))
                c.equal_hex(pt.hex(), str(v, "plaintext_hex"), "keyring plaintext");
            cachekit_keyring_free(ring);
        }
    });
    assert_int_equal(failures, 0);
}

void test_master_key_accept(void **state) {
    (void)state;
    const Json &mk = V.at("master_key_input");
    int failures = run_category(R, mk, "accept_vectors", [&](const Json &v, Checks &c) {
        const char *tenant = str(mk, "tenant_id") == "default" ? nullptr : str(mk, "tenant_id").c_str();
        cachekit_derived_keys keys;
        if (!derive_from_hex(c, str(v, "master_key_hex"), tenant, keys)) return;
        c.equal_hex(to_hex(keys.fingerprint, sizeof keys.fingerprint), str(v, "derived_key_fingerprint_hex"),
                    "fingerprint");
        Buf aad;
        if (!vector_aad(c, v, tenant, aad)) return;
        check_sealed(c, keys.encryption, aad, v);
        // The same key through the raw-bytes entry points.
        Bytes raw = from_hex(str(v, "master_key_hex"));
        cachekit_derived_keys raw_keys;
        if (c.ok(cachekit_crypto_derive(&raw_keys, raw.data(), raw.size(), tenant), "cachekit_crypto_derive(raw)"))
            c.expect(std::memcmp(&raw_keys, &keys, sizeof keys) == 0, "raw and hex keys derive differently");
        cachekit_keyring *ring = nullptr;
        if (c.ok(cachekit_keyring_new_raw(&ring, raw.data(), raw.size(), nullptr, 0), "cachekit_keyring_new_raw")) {
            Bytes sealed = from_hex(str(v, "ciphertext_hex"));
            Buf pt;
            if (c.ok(cachekit_keyring_decrypt(ring, pt.p(), nullptr, tenant, nullptr, aad.b.ptr, aad.b.size,
                                              sealed.data(), sealed.size()),
                     "cachekit_keyring_decrypt"))
                c.equal_hex(pt.hex(), str(v, "plaintext_hex"), "keyring plaintext");
            cachekit_keyring_free(ring);
        }
    });
    assert_int_equal(failures, 0);
}

void test_master_key_reject(void **state) {
    (void)state;
    const Json &mk = V.at("master_key_input");
    // A valid key to pair a rejected key with, as current or previous.
    const std::string good = str(mk.at("accept_vectors").at(0), "master_key_hex");
    int failures = run_category(R, mk, "reject_vectors", [&](const Json &v, Checks &c) {
        const std::string &hex = str(v, "master_key_hex");
        unsigned char out[CACHEKIT_KEY_SIZE];
        c.code(cachekit_master_key_from_hex(out, hex.c_str(), hex.size()), CACHEKIT_EINVAL,
               "cachekit_master_key_from_hex");
        cachekit_keyring *ring = nullptr;
        int rc = cachekit_keyring_new(&ring, hex.c_str(), nullptr);
        c.code(rc, CACHEKIT_EINVAL, "cachekit_keyring_new(current)");
        c.expect(ring == nullptr, "cachekit_keyring_new(current) left a keyring");
        cachekit_keyring_free(ring);
        ring = nullptr;
        // As a previous key (no comma in any row, so it is one list entry).
        if (hex.find(',') == std::string::npos) {
            rc = cachekit_keyring_new(&ring, good.c_str(), hex.c_str());
            c.code(rc, CACHEKIT_EINVAL, "cachekit_keyring_new(previous)");
            cachekit_keyring_free(ring);
        }
    });
    assert_int_equal(failures, 0);
}

void test_master_key_raw_reject(void **state) {
    (void)state;
    const Json &mk = V.at("master_key_input");
    int failures = run_category(R, mk, "raw_reject_vectors", [&](const Json &v, Checks &c) {
        Bytes raw = from_hex(str(v, "raw_key_hex"));
        cachekit_derived_keys keys;
        c.code(cachekit_crypto_derive(&keys, raw.data(), raw.size(), nullptr), CACHEKIT_EINVAL,
               "cachekit_crypto_derive");
        cachekit_keyring *ring = nullptr;
        c.code(cachekit_keyring_new_raw(&ring, raw.data(), raw.size(), nullptr, 0), CACHEKIT_EINVAL,
               "cachekit_keyring_new_raw");
        c.expect(ring == nullptr, "cachekit_keyring_new_raw left a keyring");
        cachekit_keyring_free(ring);
    });
    assert_int_equal(failures, 0);
}

}  // namespace

int main(void) {
    V = load_vectors(kFile);
    if (!cachekit_crypto_available()) {
        std::printf("SKIP %s: AES-256-GCM needs AES-NI and PCLMUL, which this CPU lacks\n", kFile);
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vectors),
        cmocka_unit_test(test_keyring),
        cmocka_unit_test(test_default_tenant),
        cmocka_unit_test(test_master_key_accept),
        cmocka_unit_test(test_master_key_reject),
        cmocka_unit_test(test_master_key_raw_reject),
    };
    int rc = cmocka_run_group_tests_name("encryption.json", tests, nullptr, nullptr);
    R.summary();
    return rc;
}
