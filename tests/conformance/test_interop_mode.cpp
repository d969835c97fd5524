// interop-mode.json: interop/v1 keys and canonical arguments
// (cachekit_key_interop), canonical values, readers, AAD and encryption.
#include "conformance_support.hpp"

#include <set>

#include <csetjmp>
#include <cstdarg>
extern "C" {
#include <cmocka.h>
}

using namespace ckconf;

namespace {

const char *const kFile = "interop-mode.json";
Json V;
Report R(kFile);

const char *const kIntRangeReason =
    "rejected at encoding: MessagePack cannot carry it; the wrapper rejects it";
const char *const kNaiveReason =
    "covered elsewhere: a naive datetime is rejected by the language wrapper before it reaches the core";

// The error vectors this program expects to end at encoding, by reason. A
// vector that fails to encode for a reason not listed here is a FAIL, so an
// encoder bug cannot hide a vector. (The newer copy of the file adds
// reject_int_overflow_in_map and reject_int_underflow_in_list.)
const std::set<std::string> kIntRangeVectors = {
    "reject_int_overflow",         "reject_int_underflow",         "reject_int_overflow_in_list",
    "reject_int_underflow_in_map", "reject_int_overflow_in_map",   "reject_int_underflow_in_list",
};
const std::set<std::string> kNaiveVectors = {"reject_naive_datetime", "reject_naive_datetime_nested"};

// The reader_reject_vectors' `error` reasons, by the status code that names
// each. A reason not listed is a FAIL, so a new vector cannot pass unnamed.
int reader_error_code(const std::string &reason) {
    if (reason.find("trailing bytes") != std::string::npos) return CACHEKIT_ETRAILING;
    return 0;
}

void test_key_vectors(void **state) {
    (void)state;
    int failures = run_category(R, V, "key_vectors", [](const Json &v, Checks &c) {
        Bytes args = encode_tagged(v.at("args"));
        Buf key, canonical;
        int rc = cachekit_key_interop(key.p(), canonical.p(), v.at("namespace").get<std::string>().c_str(),
                                      v.at("operation").get<std::string>().c_str(), args.data(), args.size());
        if (!c.ok(rc, "cachekit_key_interop")) return;
        c.expect(key.text() == v.at("expected_key").get<std::string>(),
                 "key: expected " + v.at("expected_key").get<std::string>() + ", got " + key.text());
        c.equal_hex(canonical.hex(), v.at("canonical_args_hex").get<std::string>(), "canonical args");
        // The canonical bytes are a fixed point of the ARGS profile.
        Bytes canon = canonical.bytes();
        Buf again;
        if (c.ok(cachekit_msgpack_canonical(again.p(), canon.data(), canon.size(), CACHEKIT_PROFILE_ARGS),
                 "cachekit_msgpack_canonical(canonical args)"))
            c.expect(again.bytes() == canon, "canonical args are not a fixed point of the ARGS profile");
    });
    assert_int_equal(failures, 0);
}

void test_value_vectors(void **state) {
    (void)state;
    int failures = run_category(R, V, "value_vectors", [](const Json &v, Checks &c) {
        Bytes value = encode_tagged(v.at("value"));
        Buf canonical;
        if (!c.ok(cachekit_msgpack_canonical(canonical.p(), value.data(), value.size(), CACHEKIT_PROFILE_VALUE),
                  "cachekit_msgpack_canonical(VALUE)"))
            return;
        c.equal_hex(canonical.hex(), v.at("canonical_msgpack_hex").get<std::string>(), "canonical value");
        c.ok(cachekit_msgpack_check(canonical.b.ptr, canonical.b.size, 0), "cachekit_msgpack_check(canonical)");
    });
    assert_int_equal(failures, 0);
}

void test_error_vectors(void **state) {
    (void)state;
    int failures = run_category(R, V, "error_vectors", [](const Json &v, Checks &c) {
        const std::string name = v.at("name").get<std::string>();
        // Namespace and operation default to valid segments when absent, so
        // only the arguments can be what is rejected.
        std::string ns = v.contains("namespace") ? v["namespace"].get<std::string>() : "users";
        std::string op = v.contains("operation") ? v["operation"].get<std::string>() : "get_user";
        Bytes args;
        try {
            args = encode_tagged(v.at("args"));
        } catch (const EncodeError &e) {
            if (e.kind == EncodeError::IntRange && kIntRangeVectors.count(name)) c.covered_elsewhere(kIntRangeReason);
            else if (e.kind == EncodeError::NaiveDatetime && kNaiveVectors.count(name)) c.covered_elsewhere(kNaiveReason);
            else c.add(std::string("could not encode the arguments: ") + e.what());
            return;
        }
        if (kIntRangeVectors.count(name) || kNaiveVectors.count(name)) {
            c.add("expected to be unencodable, but it encoded");
            return;
        }
        Buf key, canonical;
        int rc = cachekit_key_interop(key.p(), canonical.p(), ns.c_str(), op.c_str(), args.data(), args.size());
        if (c.rejects(rc, "cachekit_key_interop")) c.note("rejected: " + std::string(cachekit_error_name(rc)));
        else c.add("key " + key.text());
    });
    assert_int_equal(failures, 0);
}

void test_reader_accept_vectors(void **state) {
    (void)state;
    int failures = run_category(R, V, "reader_accept_vectors", [](const Json &v, Checks &c) {
        Bytes doc = from_hex(v.at("input_hex").get<std::string>());
        c.ok(cachekit_msgpack_check(doc.data(), doc.size(), 0), "cachekit_msgpack_check");
        Buf json;
        if (!c.ok(cachekit_msgpack_to_json(json.p(), doc.data(), doc.size()), "cachekit_msgpack_to_json")) return;
        if (!v.contains("value")) {
            c.note("no tagged value to compare; decoded");
            return;
        }
        Json want = expected_rendering(v["value"]);
        Json got = Json::parse(json.text());
        c.expect(got == want, "rendered as " + got.dump() + ", expected " + want.dump());
    });
    assert_int_equal(failures, 0);
}

void test_reader_reject_vectors(void **state) {
    (void)state;
    int failures = run_category(R, V, "reader_reject_vectors", [](const Json &v, Checks &c) {
        Bytes doc = from_hex(v.at("input_hex").get<std::string>());
        const int want = reader_error_code(v.at("error").get<std::string>());
        if (want == 0) {
            c.add("no status code is mapped to the vector's error \"" + v["error"].get<std::string>() + "\"");
            return;
        }
        if (c.code(cachekit_msgpack_check(doc.data(), doc.size(), 0), want, "cachekit_msgpack_check"))
            c.note(cachekit_error_name(want));
        Buf out;
        c.code(cachekit_msgpack_to_json(out.p(), doc.data(), doc.size()), want, "cachekit_msgpack_to_json");
        Buf canonical;
        c.code(cachekit_msgpack_canonical(canonical.p(), doc.data(), doc.size(), CACHEKIT_PROFILE_VALUE), want,
               "cachekit_msgpack_canonical(VALUE)");
    });
    assert_int_equal(failures, 0);
}

void test_aad_vectors(void **state) {
    (void)state;
    int failures = run_category(R, V, "aad_vectors", [](const Json &v, Checks &c) {
        Buf aad;
        if (c.ok(cachekit_crypto_aad(aad.p(), v.at("tenant_id").get<std::string>().c_str(),
                                     v.at("cache_key").get<std::string>().c_str(),
                                     v.at("format").get<std::string>().c_str(), v.at("compressed").get<bool>(), nullptr),
                 "cachekit_crypto_aad"))
            c.equal_hex(aad.hex(), v.at("aad_hex").get<std::string>(), "aad");
    });
    assert_int_equal(failures, 0);
}

void test_encryption_vectors(void **state) {
    (void)state;
    int failures = run_category(R, V, "encryption_vectors", [](const Json &v, Checks &c) {
        std::string mk_hex = v.at("master_key_hex").get<std::string>();
        unsigned char master[CACHEKIT_KEY_SIZE];
        if (!c.ok(cachekit_master_key_from_hex(master, mk_hex.c_str(), mk_hex.size()), "cachekit_master_key_from_hex"))
            return;
        const std::string tenant = v.at("tenant_id").get<std::string>();
        cachekit_derived_keys keys;
        if (!c.ok(cachekit_crypto_derive(&keys, master, sizeof master, tenant.c_str()), "cachekit_crypto_derive")) return;
        c.equal_hex(to_hex(keys.fingerprint, sizeof keys.fingerprint), v.at("derived_key_fingerprint_hex").get<std::string>(), "fingerprint");

        Buf aad;
        if (!c.ok(cachekit_crypto_aad(aad.p(), tenant.c_str(), v.at("cache_key").get<std::string>().c_str(),
                                      v.at("format").get<std::string>().c_str(), v.at("compressed").get<bool>(), nullptr),
                  "cachekit_crypto_aad"))
            return;
        c.equal_hex(aad.hex(), v.at("aad_hex").get<std::string>(), "aad");

        Bytes plain = from_hex(v.at("plaintext_hex").get<std::string>());
        Bytes nonce = from_hex(v.at("nonce_hex").get<std::string>());
        Bytes sealed = from_hex(v.at("ciphertext_hex").get<std::string>());
        if (nonce.size() != CACHEKIT_NONCE_SIZE) {
            c.add("nonce_hex is not 12 bytes");
            return;
        }
        Buf ct, pt;
        if (c.ok(cachekit_crypto_encrypt(ct.p(), keys.encryption, aad.b.ptr, aad.b.size, plain.data(), plain.size(),
                                         nonce.data()),
                 "cachekit_crypto_encrypt"))
            c.equal_hex(ct.hex(), v.at("ciphertext_hex").get<std::string>(), "ciphertext");
        if (c.ok(cachekit_crypto_decrypt(pt.p(), keys.encryption, aad.b.ptr, aad.b.size, sealed.data(), sealed.size()),
                 "cachekit_crypto_decrypt"))
            c.equal_hex(pt.hex(), v.at("plaintext_hex").get<std::string>(), "plaintext");
    });
    assert_int_equal(failures, 0);
}

}  // namespace

int main(void) {
    V = load_vectors(kFile);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_key_vectors),
        cmocka_unit_test(test_value_vectors),
        cmocka_unit_test(test_error_vectors),
        cmocka_unit_test(test_reader_accept_vectors),
        cmocka_unit_test(test_reader_reject_vectors),
        cmocka_unit_test(test_aad_vectors),
        cmocka_unit_test(test_encryption_vectors),
    };
    int rc = cmocka_run_group_tests_name("interop-mode.json", tests, nullptr, nullptr);
    R.summary();
    return rc;
}
