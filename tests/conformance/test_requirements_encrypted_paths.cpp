// The encrypting cache's own paths, which the sealed vectors cannot show
// (requirement_coverage.json, ENC-5, ENC-6, ENC-10, IOP-19). No SDK can seal
// with a fixed nonce, so the write path is judged by decrypting what it
// stores under the aad_hex of the vector of the same shape: an auto-mode
// write with integrity on (standard_serializer_default) and off
// (standard_serializer_integrity_off), and an interop write
// (interop_key_aad). The read path: a decrypted interop document followed by
// stray bytes, one or several, is refused, and a decrypted auto-mode entry
// is read in the container the cache is configured for, never sniffed
// (ENC-2, ENC-3).
#include "conformance_support.hpp"

#include <csetjmp>
#include <cstdarg>
extern "C" {
#include <cmocka.h>
}

using namespace ckconf;

namespace {

Json ENC, IOP;
Report R_enc("encryption.json"), R_iop("interop-mode.json");


// An encrypting cache over a memory backend of its own.
struct EncryptingCache : MemoryCache {
    EncryptingCache(int format, bool integrity, bool fail_closed, const std::string &master_hex, const std::string &tenant)
        : MemoryCache([&](cachekit_cache_options &o) {
              o.format = format;
              o.integrity = integrity ? CACHEKIT_ON : CACHEKIT_OFF;
              o.encryption = CACHEKIT_ON;
              o.master_key_hex = master_hex.c_str();
              o.previous_keys_hex = "";
              o.tenant = tenant.c_str();
              o.fail_closed = fail_closed ? CACHEKIT_ON : CACHEKIT_OFF;
          }) {
        assert_int_equal(rc(), CACHEKIT_OK);
    }
    Bytes stored(const std::string &key) {
        Buf raw;
        assert_int_equal(cachekit_backend_get(backend(), raw.p(), key.data(), key.size()), CACHEKIT_OK);
        return raw.bytes();
    }
};

bool derive(Checks &c, const std::string &master_hex, const std::string &tenant, cachekit_derived_keys &keys) {
    unsigned char master[CACHEKIT_KEY_SIZE];
    return c.ok(cachekit_master_key_from_hex(master, master_hex.c_str(), master_hex.size()), "cachekit_master_key_from_hex") &&
           c.ok(cachekit_crypto_derive(&keys, master, sizeof master, tenant.c_str()), "cachekit_crypto_derive");
}

// Decrypt `sealed` under the vector's own aad_hex: it opens only if our
// writer built exactly those AAD bytes.
bool opens_under_vector_aad(Checks &c, const cachekit_derived_keys &keys, const Json &v, const Bytes &sealed, Buf &plain) {
    Bytes aad = from_hex(str(v, "aad_hex"));
    return c.ok(cachekit_crypto_decrypt(plain.p(), keys.encryption, aad.data(), aad.size(), sealed.data(), sealed.size()),
                "cachekit_crypto_decrypt(stored ciphertext, the vector's aad_hex)");
}

// ENC-5, ENC-6, ENC-10: auto-mode writes, integrity on and off.
void test_auto_writes_seal_under_the_reference_aad(void **) {
    if (!cachekit_crypto_available()) skip();
    // The inner MessagePack both standard_serializer rows carry.
    const Bytes payload = from_hex("83a7757365725f69642aa46e616d65a863616368656b6974a6616374697665c3");
    int failures = run_category(R_enc, ENC, "vectors", [&](const Json &v, Checks &c) {
        const std::string &name = str(v, "name");
        if (name != "standard_serializer_default" && name != "standard_serializer_integrity_off") {
            c.covered_elsewhere("not the shape of an auto-mode write (test_encryption.cpp reads it)");
            return;
        }
        const bool integrity = v.at("compressed").get<bool>();
        EncryptingCache ec(CACHEKIT_FORMAT_AUTO, integrity, true, str(ENC, "master_key_hex"), str(ENC, "tenant_id"));
        const std::string &key = str(v, "cache_key");
        if (!c.ok(cachekit_cache_put(ec.cache(), "test", key.data(), key.size(), payload.data(), payload.size(), 60.0),
                  "cachekit_cache_put"))
            return;
        Bytes frame = ec.stored(key);
        Buf s, m;
        size_t off = 0;
        if (!c.ok(cachekit_frame_decode(s.p(), m.p(), &off, frame.data(), frame.size()), "cachekit_frame_decode")) return;
        Json meta = Json::parse(m.text());
        c.expect(meta.value("format", "") == str(v, "format") && meta.value("compressed", !integrity) == integrity &&
                     meta.value("original_type", "") == str(v, "original_type"),
                 "frame metadata " + meta.dump() + " is not the vector's shape");
        cachekit_derived_keys keys;
        if (!derive(c, str(ENC, "master_key_hex"), str(ENC, "tenant_id"), keys)) return;
        Buf plain;
        if (!opens_under_vector_aad(c, keys, v, Bytes(frame.begin() + std::ptrdiff_t(off), frame.end()), plain)) return;
        if (integrity) {
            Buf inner, fmt;
            if (c.ok(cachekit_envelope_unwrap(inner.p(), fmt.p(), plain.b.ptr, plain.b.size), "cachekit_envelope_unwrap"))
                c.expect(inner.bytes() == payload, "the sealed envelope does not hold the payload");
        } else {
            c.expect(plain.bytes() == payload, "the sealed bytes are not the payload");
        }
        c.note(integrity ? "integrity on: compressed True" : "integrity off: compressed False");
    });
    assert_int_equal(failures, 0);
}

const Json &roundtrip_vector() { return IOP.at("encryption_vectors").at(0); }

// ENC-5, ENC-6, ENC-10: an interop write seals under interop_key_aad's bytes.
void test_interop_writes_seal_under_the_reference_aad(void **) {
    if (!cachekit_crypto_available()) skip();
    const Json &rt = roundtrip_vector();
    int failures = run_category(R_iop, IOP, "aad_vectors", [&](const Json &v, Checks &c) {
        EncryptingCache ec(CACHEKIT_FORMAT_INTEROP, false, true, str(rt, "master_key_hex"), str(v, "tenant_id"));
        const std::string &key = str(v, "cache_key");
        const Bytes payload = from_hex(str(rt, "plaintext_hex"));
        if (!c.ok(cachekit_cache_put(ec.cache(), "users", key.data(), key.size(), payload.data(), payload.size(), 60.0),
                  "cachekit_cache_put"))
            return;
        cachekit_derived_keys keys;
        if (!derive(c, str(rt, "master_key_hex"), str(v, "tenant_id"), keys)) return;
        Buf plain;
        if (opens_under_vector_aad(c, keys, v, ec.stored(key), plain))
            c.expect(plain.bytes() == payload, "the sealed bytes are not the payload");
    });
    assert_int_equal(failures, 0);
}

// IOP-19 after a decrypt: exactly one document, whatever follows it.
void test_decrypted_interop_reads_refuse_stray_bytes(void **) {
    if (!cachekit_crypto_available()) skip();
    const Json &rt = roundtrip_vector();
    const std::string &key = str(rt, "cache_key"), &tenant = str(rt, "tenant_id");
    const Bytes doc = from_hex(str(rt, "plaintext_hex"));
    Checks c;
    cachekit_derived_keys keys;
    assert_true(derive(c, str(rt, "master_key_hex"), tenant, keys));
    Buf aad;
    assert_int_equal(cachekit_crypto_aad(aad.p(), tenant.c_str(), key.c_str(), "msgpack", false, nullptr), CACHEKIT_OK);
    const unsigned char nonce[CACHEKIT_NONCE_SIZE] = {9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 1, 2};
    const Bytes tails[] = {{}, {0x00}, {0xc0, 0xc0}, {0x91, 0x01, 0x02}, Bytes(64, 0x00)};
    for (const Bytes &tail : tails) {
        Bytes pt = doc;
        pt.insert(pt.end(), tail.begin(), tail.end());
        Buf sealed;
        assert_int_equal(cachekit_crypto_encrypt(sealed.p(), keys.encryption, aad.b.ptr, aad.b.size, pt.data(), pt.size(), nonce),
                         CACHEKIT_OK);
        for (bool fail_closed : {false, true}) {
            EncryptingCache ec(CACHEKIT_FORMAT_INTEROP, false, fail_closed, str(rt, "master_key_hex"), tenant);
            assert_int_equal(cachekit_backend_set(ec.backend(), key.data(), key.size(), sealed.b.ptr, sealed.b.size, 0.0),
                             CACHEKIT_OK);
            Buf out;
            int rc = cachekit_cache_get(ec.cache(), out.p(), nullptr, "users", key.data(), key.size());
            if (tail.empty()) {
                assert_int_equal(rc, CACHEKIT_OK);
                assert_true(out.bytes() == doc);
            } else {
                assert_int_equal(rc, fail_closed ? CACHEKIT_ECORRUPT : CACHEKIT_ENOTFOUND);
            }
        }
    }
}

// The legacy integer-array form of a bin-form envelope (same fields).
Bytes legacy_form(const Buf &bin_envelope) {
    Bytes e = bin_envelope.bytes();
    assert_true(e.size() > 3 && e[0] == 0x94 && e[1] == 0xc4);
    const size_t n = e[2];
    Bytes out = {0x94};
    if (n < 16) out.push_back(uint8_t(0x90 | n));
    else out.insert(out.end(), {0xdc, 0x00, uint8_t(n)});
    for (size_t i = 0; i < n; ++i) {
        if (e[3 + i] > 0x7f) out.push_back(0xcc);
        out.push_back(e[3 + i]);
    }
    out.insert(out.end(), e.begin() + std::ptrdiff_t(3 + n), e.end());
    return out;
}

// ENC-2, ENC-3: after a decrypt the container is the one the reader is
// configured for, never sniffed, and a parse failure is a miss, not a
// fallback to the other container.
void test_the_decrypted_container_is_chosen_by_configuration(void **) {
    if (!cachekit_crypto_available()) skip();
    const std::string master = str(ENC, "master_key_hex"), tenant = str(ENC, "tenant_id"), key = "test:container";
    const Bytes doc = {0x81, 0xa1, 'a', 0x01};  // {"a": 1}
    Buf bin_envelope;
    assert_int_equal(cachekit_envelope_wrap(bin_envelope.p(), doc.data(), doc.size(), "msgpack"), CACHEKIT_OK);
    const Bytes envelope = bin_envelope.bytes(), legacy = legacy_form(bin_envelope), json = text_bytes("{\"a\": 1}");
    struct Case {
        const char *what;
        bool integrity;
        Bytes plaintext;
        bool served;
        Bytes value;
    } cases[] = {
        {"envelope reader, bin envelope", true, envelope, true, doc},
        {"envelope reader, legacy envelope", true, legacy, true, doc},
        {"envelope reader, plain MessagePack", true, doc, false, {}},
        {"envelope reader, JSON", true, json, false, {}},
        {"plain reader, plain MessagePack", false, doc, true, doc},
        {"plain reader, an envelope (a value, not unwrapped)", false, envelope, true, envelope},
        {"plain reader, JSON", false, json, false, {}},
    };
    cachekit_derived_keys keys;
    Checks dc;
    assert_true(derive(dc, master, tenant, keys));
    const unsigned char nonce[CACHEKIT_NONCE_SIZE] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    int wrong = 0;
    for (const Case &k : cases) {
        EncryptingCache ec(CACHEKIT_FORMAT_AUTO, k.integrity, false, master, tenant);
        // A real write gives the frame header; its payload is replaced by
        // the case's plaintext, sealed under the AAD this reader builds.
        assert_int_equal(cachekit_cache_put(ec.cache(), "test", key.data(), key.size(), doc.data(), doc.size(), 60.0),
                         CACHEKIT_OK);
        Bytes frame = ec.stored(key);
        Buf s, m, aad, sealed, out;
        size_t off = 0;
        assert_int_equal(cachekit_frame_decode(s.p(), m.p(), &off, frame.data(), frame.size()), CACHEKIT_OK);
        assert_int_equal(cachekit_crypto_aad(aad.p(), tenant.c_str(), key.c_str(), "msgpack", k.integrity, "msgpack"),
                         CACHEKIT_OK);
        assert_int_equal(cachekit_crypto_encrypt(sealed.p(), keys.encryption, aad.b.ptr, aad.b.size, k.plaintext.data(),
                                                 k.plaintext.size(), nonce),
                         CACHEKIT_OK);
        Bytes planted(frame.begin(), frame.begin() + std::ptrdiff_t(off));
        Bytes body = sealed.bytes();
        planted.insert(planted.end(), body.begin(), body.end());
        assert_int_equal(cachekit_backend_set(ec.backend(), key.data(), key.size(), planted.data(), planted.size(), 0.0),
                         CACHEKIT_OK);
        int rc = cachekit_cache_get(ec.cache(), out.p(), nullptr, "test", key.data(), key.size());
        const bool ok = k.served ? rc == CACHEKIT_OK && out.bytes() == k.value : rc == CACHEKIT_ENOTFOUND;
        if (!ok) {
            print_error("%s: %s%s\n", k.what, cachekit_error_name(rc), rc == CACHEKIT_OK ? (" " + out.hex()).c_str() : "");
            ++wrong;
        }
    }
    assert_int_equal(wrong, 0);
}

}  // namespace

int main(void) {
    ENC = load_vectors("encryption.json");
    IOP = load_vectors("interop-mode.json");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_auto_writes_seal_under_the_reference_aad),
        cmocka_unit_test(test_interop_writes_seal_under_the_reference_aad),
        cmocka_unit_test(test_decrypted_interop_reads_refuse_stray_bytes),
        cmocka_unit_test(test_the_decrypted_container_is_chosen_by_configuration),
    };
    int rc = cmocka_run_group_tests_name("requirements: encrypted write and read paths", tests, nullptr, nullptr);
    R_enc.summary();
    R_iop.summary();
    return rc;
}
