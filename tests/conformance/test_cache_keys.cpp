// cache-keys.json: auto-mode keys of the reference Python SDK through
// cachekit_key_auto, from the MessagePack of [args, kwargs].
#include "conformance_support.hpp"

#include <csetjmp>
#include <cstdarg>
extern "C" {
#include <cmocka.h>
}

using namespace ckconf;

namespace {

const char *const kFile = "cache-keys.json";
Json V;
Report R(kFile);

// Calls cachekit_key_auto with the vector's fields; `serializer` overrides
// the vector's serializer_type.
int key_auto(const Json &v, const char *serializer, Buf &out) {
    Bytes args = encode_auto_args(v.at("args"), v.at("kwargs"));
    return cachekit_key_auto(out.p(), opt_cstr(v, "namespace"), v.at("function_module").get<std::string>().c_str(),
                             v.at("function_qualname").get<std::string>().c_str(), args.data(), args.size(),
                             v.at("integrity_checking").get<bool>() ? 1 : 0, serializer);
}

void test_vectors(void **state) {
    (void)state;
    int failures = run_category(R, V, "vectors", [](const Json &v, Checks &c) {
        Buf key;
        if (c.ok(key_auto(v, v.at("serializer_type").get<std::string>().c_str(), key), "cachekit_key_auto"))
            c.expect(key.text() == v.at("expected_key").get<std::string>(),
                     "key: expected " + v.at("expected_key").get<std::string>() + ", got " + key.text());
    });
    assert_int_equal(failures, 0);
}

void test_error_vectors(void **state) {
    (void)state;
    int failures = run_category(R, V, "error_vectors", [](const Json &v, Checks &c) {
        const Json &s = v.at("serializer_type");
        Buf key, code;
        if (s.is_string()) {
            // The identity as given (""), to both entry points.
            const char *id = s.get_ref<const std::string &>().c_str();
            if (c.code(key_auto(v, id, key), CACHEKIT_EINVAL, "cachekit_key_auto"))
                c.note("cachekit_key_auto: InvalidArgument");
            c.code(cachekit_serializer_code(code.p(), id), CACHEKIT_EINVAL, "cachekit_serializer_code");
        } else if (s.is_null()) {
            if (c.code(key_auto(v, nullptr, key), CACHEKIT_EINVAL, "cachekit_key_auto(NULL)"))
                c.note("NULL identity: InvalidArgument");
            c.code(cachekit_serializer_code(code.p(), nullptr), CACHEKIT_EINVAL, "cachekit_serializer_code(NULL)");
        } else {
            // A non-string identity (the integer 0) cannot be passed through
            // a const char * API; the nearest input is NULL, which must be
            // rejected. It passes only through that rejection.
            if (c.code(key_auto(v, nullptr, key), CACHEKIT_EINVAL, "cachekit_key_auto(NULL)"))
                c.note("covered: non-string identity cannot be passed to the C API; rejected as NULL");
            c.code(cachekit_serializer_code(code.p(), nullptr), CACHEKIT_EINVAL, "cachekit_serializer_code(NULL)");
        }
    });
    assert_int_equal(failures, 0);
}

// A serializer given by its class: the reference SDK keys an object
// serializer by the identity "<custom>:" + class name. Checked when this test
// was written: BLAKE2b-16 of "<custom>:ArrowSerializer" is 2263 and of
// "<custom>:auto" is f932, the codes these vectors expect, so the vectors are
// run through that identity.
void test_serializer_object_vectors(void **state) {
    (void)state;
    int failures = run_category(R, V, "serializer_object_vectors", [](const Json &v, Checks &c) {
        std::string identity = "<custom>:" + v.at("serializer_class").get<std::string>();
        std::string expected = v.at("expected_key").get<std::string>();
        Buf code, key;
        if (c.ok(cachekit_serializer_code(code.p(), identity.c_str()), "cachekit_serializer_code")) {
            std::string suffix = expected.substr(expected.rfind(':') + 2);  // after ":1" / ":0"
            c.expect(code.text() == suffix, "serializer code of " + identity + ": expected " + suffix + ", got " +
                                                code.text());
        }
        if (c.ok(key_auto(v, identity.c_str(), key), "cachekit_key_auto"))
            c.expect(key.text() == expected, "key: expected " + expected + ", got " + key.text());
        c.note("as identity " + identity);
    });
    assert_int_equal(failures, 0);
}

}  // namespace

int main(void) {
    V = load_vectors(kFile);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vectors),
        cmocka_unit_test(test_error_vectors),
        cmocka_unit_test(test_serializer_object_vectors),
    };
    int rc = cmocka_run_group_tests_name("cache-keys.json", tests, nullptr, nullptr);
    R.summary();
    return rc;
}
