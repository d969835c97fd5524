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
    }, "keyring.vectors");
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
    }, "default_tenant.vectors");
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
    }, "master_key_input.accept_vectors");
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
    }, "master_key_input.reject_vectors");
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
    }, "master_key_input.raw_reject_vectors");
    assert_int_equal(failures, 0);
}

// The `vectors` row named `name`, or nullptr.
const Json *vector_named(const std::string &name) {
    for (const auto &v : V.at("vectors"))
        if (str(v, "name") == name) return &v;
    return nullptr;
}

// A row of the top-level key's rows as this reader opens it: the keys
// derived from the file's master key and tenant, the AAD built from the
// row's fields (checked against aad_hex) and the row's ciphertext.
struct SealedRow {
    cachekit_derived_keys keys;
    Buf aad;
    Bytes sealed;
    // False when deriving or building the AAD failed (recorded in c).
    bool load(Checks &c, const Json &v) {
        const std::string &tenant = str(V, "tenant_id");
        if (!derive_from_hex(c, str(V, "master_key_hex"), tenant.c_str(), keys)) return false;
        if (!vector_aad(c, v, tenant.c_str(), aad)) return false;
        sealed = from_hex(str(v, "ciphertext_hex"));
        return true;
    }
    // cachekit_crypto_decrypt under the row's own AAD.
    int decrypt(Buf &pt) const {
        return cachekit_crypto_decrypt(pt.p(), keys.encryption, aad.b.ptr, aad.b.size, sealed.data(), sealed.size());
    }
};

void test_aad_reject_vectors(void **state) {
    (void)state;
    int failures = run_category(R, V, "aad_reject_vectors", [](const Json &v, Checks &c) {
        const std::string &tenant = str(V, "tenant_id");
        // The AAD this reader builds from the row's (one flipped) fields.
        SealedRow row;
        if (!row.load(c, v)) return;
        const cachekit_derived_keys &keys = row.keys;
        const Buf &aad = row.aad;
        const Bytes &sealed = row.sealed;
        Buf pt;
        // Exactly AuthenticationFailed: no retry with another AAD variant
        // turns it into a value (or into a later container error).
        c.code(row.decrypt(pt), CACHEKIT_EAUTH, "cachekit_crypto_decrypt(the row's AAD)");
        cachekit_keyring *ring = nullptr;
        if (c.ok(cachekit_keyring_new(&ring, str(V, "master_key_hex").c_str(), nullptr), "cachekit_keyring_new")) {
            c.code(cachekit_keyring_decrypt(ring, pt.p(), nullptr, tenant.c_str(), nullptr, aad.b.ptr, aad.b.size,
                                            sealed.data(), sealed.size()),
                   CACHEKIT_EAUTH, "cachekit_keyring_decrypt(the row's AAD, no fingerprint)");
            c.code(cachekit_keyring_decrypt(ring, pt.p(), nullptr, tenant.c_str(), keys.fingerprint, aad.b.ptr,
                                            aad.b.size, sealed.data(), sealed.size()),
                   CACHEKIT_EAUTH, "cachekit_keyring_decrypt(the row's AAD, fingerprint)");
            cachekit_keyring_free(ring);
        }
        // The same ciphertext opens under the AAD it was sealed with
        // (`sealed_as`): only the flipped field is refused.
        const Json *orig = vector_named(str(v, "sealed_as"));
        if (!orig) {
            c.add("sealed_as names no row of vectors: " + str(v, "sealed_as"));
            return;
        }
        c.expect(str(*orig, "ciphertext_hex") == str(v, "ciphertext_hex"), "ciphertext differs from sealed_as's");
        Buf orig_aad;
        if (!vector_aad(c, *orig, tenant.c_str(), orig_aad)) return;
        if (c.ok(cachekit_crypto_decrypt(pt.p(), keys.encryption, orig_aad.b.ptr, orig_aad.b.size, sealed.data(),
                                         sealed.size()),
                 "cachekit_crypto_decrypt(sealed_as's AAD)"))
            c.equal_hex(pt.hex(), str(*orig, "plaintext_hex"), "plaintext under sealed_as's AAD");
        c.note("AuthenticationFailed; opens as " + str(v, "sealed_as"));
    });
    assert_int_equal(failures, 0);
}

// An encrypted interop-mode cache (the core's plain-MessagePack reader:
// 4-component AAD, compressed False, exactly one document) over a memory
// backend with the entry planted; returns the get's status.
int interop_cache_read(const std::string &cache_key, const Bytes &stored, Buf &out) {
    MemoryCache mc([](cachekit_cache_options &o) {
        o.format = CACHEKIT_FORMAT_INTEROP;
        o.encryption = CACHEKIT_ON;
        o.master_key_hex = str(V, "master_key_hex").c_str();
        o.tenant = str(V, "tenant_id").c_str();
        o.fail_closed = CACHEKIT_ON;
    });
    return mc.get_planted(cache_key, stored, out);
}

void test_decrypted_container(void **state) {
    (void)state;
    const Json &dc = V.at("decrypted_container");
    int failures = run_category(R, dc, "vectors", [](const Json &v, Checks &c) {
        SealedRow row;
        if (!row.load(c, v)) return;
        Buf pt;
        // The row is sealed under the AAD of the reader it names.
        if (!c.ok(row.decrypt(pt), "cachekit_crypto_decrypt")) return;
        c.equal_hex(pt.hex(), str(v, "plaintext_hex"), "plaintext");
        const std::string &reader = str(v, "reader");
        const std::string &outcome = str(v, "outcome");
        if (reader == "plain_msgpack" || reader == "interop") {
            // The core's reader with this AAD is an encrypted interop cache.
            Buf out;
            int rc = interop_cache_read(str(v, "cache_key"), row.sealed, out);
            if (outcome == "not_unwrapped") {
                // The plaintext is one document: it is the value, as is.
                if (c.ok(rc, "cachekit_cache_get (interop, encrypted)"))
                    c.equal_hex(out.hex(), str(v, "plaintext_hex"), "value (the plaintext, not what it wraps)");
                c.note("not_unwrapped: the value is the plaintext document");
            } else if (outcome == "error") {
                if (c.code(rc, CACHEKIT_ECORRUPT, "cachekit_cache_get (interop, encrypted, fail_closed)")) {
                    const std::string msg = cachekit_error_last_message();
                    c.expect(msg.find("refused (corrupt)") != std::string::npos,
                             "message does not say the entry was refused as corrupt: " + msg);
                    c.note("Corrupt: " + msg.substr(0, 120));
                }
            } else {
                c.add("outcome " + outcome + " is not one this test knows");
            }
        } else if (reader == "bytestorage_envelope") {
            // No cache profile of ours builds this AAD (auto mode adds
            // original_type): the codec's envelope reader is the container.
            c.expect(outcome == "error", "outcome " + outcome + " is not error");
            Buf out;
            if (c.code(cachekit_envelope_unwrap(out.p(), nullptr, pt.b.ptr, pt.b.size), CACHEKIT_EDESERIALIZE,
                       "cachekit_envelope_unwrap(plaintext)"))
                c.note("DeserializationFailed: the plaintext is no envelope, and nothing falls back");
        } else if (reader == "arrow_checksummed" || reader == "orjson_checksummed") {
            c.covered_elsewhere("libcachekit has no " + reader.substr(0, reader.find('_')) +
                                " container reader (auto mode reads only MessagePack serializers; a frame naming "
                                "another is a serializer mismatch); decryption under the row's AAD checked");
        } else {
            c.add("reader " + reader + " is not one this test knows");
        }
    }, "decrypted_container.vectors");
    assert_int_equal(failures, 0);
}

void test_keyring_configuration(void **state) {
    (void)state;
    const Json &cfg = V.at("keyring").at("configuration");
    int failures = run_category(R, cfg, "vectors", [](const Json &v, Checks &c) {
        const std::string &current = str(v, "current_master_key_hex");
        const std::string previous = join_keys(v.at("decrypt_only_master_keys_hex"));
        const bool accept = str(v, "verdict") == "accept";
        if (!accept && str(v, "verdict") != "reject") {
            c.add("verdict " + str(v, "verdict") + " is neither accept nor reject");
            return;
        }
        cachekit_keyring *ring = nullptr;
        int rc = cachekit_keyring_new(&ring, current.c_str(), previous.c_str());
        if (accept) c.ok(rc, "cachekit_keyring_new");
        else c.code(rc, CACHEKIT_EINVAL, "cachekit_keyring_new");
        if (!accept) c.expect(ring == nullptr, "a refused keyring was returned");
        cachekit_keyring_free(ring);
        // The same configuration given to a cache (as CACHEKIT_MASTER_KEY and
        // CACHEKIT_PREVIOUS_MASTER_KEYS would give it) is judged at load.
        cachekit_cache_options o;
        cachekit_cache_options_init(&o, sizeof o);
        o.backend_url = "none";
        o.encryption = CACHEKIT_ON;
        o.master_key_hex = current.c_str();
        o.previous_keys_hex = previous.c_str();
        cachekit_cache *cache = nullptr;
        rc = cachekit_cache_new(&cache, &o);
        if (accept) c.ok(rc, "cachekit_cache_new");
        else if (c.code(rc, CACHEKIT_EINVAL, "cachekit_cache_new")) c.note(std::string("InvalidArgument: ") + cachekit_error_last_message());
        cachekit_cache_free(cache);
    }, "keyring.configuration.vectors");
    assert_int_equal(failures, 0);
}

}  // namespace

int main(void) {
    V = load_vectors(kFile);
    if (!cachekit_crypto_available()) {
        std::printf("SKIP %s: AES-256-GCM is unavailable (cachekit_crypto_available() is 0)\n", kFile);
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vectors),
        cmocka_unit_test(test_keyring),
        cmocka_unit_test(test_default_tenant),
        cmocka_unit_test(test_master_key_accept),
        cmocka_unit_test(test_master_key_reject),
        cmocka_unit_test(test_master_key_raw_reject),
        cmocka_unit_test(test_aad_reject_vectors),
        cmocka_unit_test(test_decrypted_container),
        cmocka_unit_test(test_keyring_configuration),
    };
    int rc = cmocka_run_group_tests_name("encryption.json", tests, nullptr, nullptr);
    R.summary();
    return rc;
}
