/* Every str the protocol decodes must be valid UTF-8 (issue 12), one test
 * per place, with the error each gets:
 *  - the envelope's format: DeserializationFailed (CACHEKIT_EDESERIALIZE),
 *    as the reference decoder rejects it (step 2 of the retrieve order);
 *  - the strs of a value read from an interop/v2 container, at any depth:
 *    CACHEKIT_EDESERIALIZE (the reference reader decodes them);
 *  - the CK frame header's strings (serializer name, metadata keys and
 *    values, raw or as \u escapes): CACHEKIT_EFRAME, like every malformed
 *    frame;
 *  - interop arguments and values (canonical profiles) and auto-mode
 *    arguments: CACHEKIT_EUNSUPPORTED (the header's pinned code for values
 *    a canonical profile does not admit);
 *  - auto-mode key parts (namespace, module, qualname, serializer):
 *    CACHEKIT_EINVAL (see also test_hostile_inputs: test_auto_key_utf8).
 * Each kind of invalid sequence: a stray byte, a cut sequence, a surrogate,
 * an overlong form and a code point past U+10FFFF. Public API only. */
#include "unit_support.h"

/* Five invalid 3-byte sequences (ASCII padded where shorter). */
static const char *const kInvalid[] = {
    "\xff" "ab",        /* a byte that never starts a sequence */
    "a\xe2\x82",        /* a 3-byte sequence cut short */
    "\xed\xa0\x80",     /* U+D800, a surrogate */
    "\xc0\xaf" "a",     /* an overlong '/' */
    "\xf4\x90\x80",     /* past U+10FFFF (cut as well) */
};
#define INVALID_COUNT (sizeof kInvalid / sizeof kInvalid[0])

/* An envelope of "\xc0" (nil) whose format is `format` (3 bytes). */
static void envelope_with_format(cachekit_buf *env, const char *format) {
    assert_ok(cachekit_envelope_wrap(env, "\xc0", 1, "xyz"));
    /* The format is the envelope's last element: fixstr(3) then its bytes. */
    assert_int_equal((uint8_t)env->ptr[env->size - 4], 0xa3);
    memcpy(env->ptr + env->size - 3, format, 3);
}

static void test_envelope_format_must_be_utf8(void **state) {
    cachekit_buf env = CACHEKIT_BUF_INIT, out = CACHEKIT_BUF_INIT, format = CACHEKIT_BUF_INIT;
    (void)state;
    for (size_t i = 0; i < INVALID_COUNT; ++i) {
        envelope_with_format(&env, kInvalid[i]);
        assert_rc(cachekit_envelope_unwrap(&out, &format, env.ptr, env.size), CACHEKIT_EDESERIALIZE);
        assert_non_null(strstr(cachekit_error_last_message(), "UTF-8"));
    }
    envelope_with_format(&env, "\xc3\xa9z"); /* "éz" */
    assert_ok(cachekit_envelope_unwrap(&out, &format, env.ptr, env.size));
    assert_int_equal(format.size, 3);
    assert_memory_equal(format.ptr, "\xc3\xa9z", 3);
    cachekit_buf_dispose(&env);
    cachekit_buf_dispose(&out);
    cachekit_buf_dispose(&format);
}

static void test_container_v2_value_strings_must_be_utf8(void **state) {
    cachekit_buf c = CACHEKIT_BUF_INIT, out = CACHEKIT_BUF_INIT;
    (void)state;
    for (size_t i = 0; i < INVALID_COUNT; ++i) {
        /* ["ok", {"k": <bad>}] and {<bad>: 1}, through both methods. */
        uint8_t nested[12] = {0x92, 0xa2, 'o', 'k', 0x81, 0xa1, 'k', 0xa3, 0, 0, 0};
        uint8_t key[6] = {0x81, 0xa3, 0, 0, 0, 0x01};
        memcpy(nested + 8, kInvalid[i], 3);
        memcpy(key + 2, kInvalid[i], 3);
        for (int method = CACHEKIT_V2_METHOD_NONE; method <= CACHEKIT_V2_METHOD_LZ4; ++method) {
            assert_ok(cachekit_container_v2_wrap(&c, nested, 11, method));
            assert_rc(cachekit_container_v2_unwrap(&out, c.ptr, c.size), CACHEKIT_EDESERIALIZE);
            assert_ok(cachekit_container_v2_wrap(&c, key, sizeof key, method));
            assert_rc(cachekit_container_v2_unwrap(&out, c.ptr, c.size), CACHEKIT_EDESERIALIZE);
        }
    }
    static const uint8_t fine[] = {0x91, 0xa2, 0xc3, 0xa9}; /* ["é"] */
    assert_ok(cachekit_container_v2_wrap(&c, fine, sizeof fine, CACHEKIT_V2_METHOD_LZ4));
    assert_ok(cachekit_container_v2_unwrap(&out, c.ptr, c.size));
    assert_int_equal(out.size, sizeof fine);
    cachekit_buf_dispose(&c);
    cachekit_buf_dispose(&out);
}

/* A CK v3 frame around `header` (JSON text) and a 1-byte payload. */
static void frame_with_header(bytes *f, const char *header) {
    const size_t n = strlen(header);
    const uint8_t prefix[7] = {'C', 'K', 3, (uint8_t)(n >> 24), (uint8_t)(n >> 16), (uint8_t)(n >> 8), (uint8_t)n};
    f->n = 0;
    bytes_put(f, prefix, sizeof prefix);
    bytes_put(f, header, n);
    bytes_put(f, "\xc0", 1);
}

static int decode_header(const char *header) {
    bytes f = {0};
    cachekit_buf s = CACHEKIT_BUF_INIT, m = CACHEKIT_BUF_INIT;
    size_t offset = 0;
    frame_with_header(&f, header);
    int rc = cachekit_frame_decode(&s, &m, &offset, f.p, f.n);
    cachekit_buf_dispose(&s);
    cachekit_buf_dispose(&m);
    free(f.p);
    return rc;
}

static void test_frame_header_strings_must_be_utf8(void **state) {
    char header[256];
    (void)state;
    for (size_t i = 0; i < INVALID_COUNT; ++i) {
        const char *bad = kInvalid[i];
        snprintf(header, sizeof header, "{\"s\": \"d%s\", \"m\": {}, \"v\": \"2.0\"}", bad); /* serializer */
        assert_rc(decode_header(header), CACHEKIT_EFRAME);
        snprintf(header, sizeof header, "{\"s\": \"default\", \"m\": {\"k%s\": 1}, \"v\": \"2.0\"}", bad); /* key */
        assert_rc(decode_header(header), CACHEKIT_EFRAME);
        snprintf(header, sizeof header, "{\"s\": \"default\", \"m\": {\"tenant_id\": \"%s\"}, \"v\": \"2.0\"}", bad);
        assert_rc(decode_header(header), CACHEKIT_EFRAME); /* value */
    }
    /* Escapes that would spell a surrogate alone. */
    assert_rc(decode_header("{\"s\": \"\\ud800\", \"m\": {}, \"v\": \"2.0\"}"), CACHEKIT_EFRAME);
    assert_rc(decode_header("{\"s\": \"default\", \"m\": {\"\\udc00\": 1}, \"v\": \"2.0\"}"), CACHEKIT_EFRAME);
    assert_rc(decode_header("{\"s\": \"default\", \"m\": {\"t\": \"\\ud800\\u0041\"}, \"v\": \"2.0\"}"), CACHEKIT_EFRAME);
    /* Valid non-ASCII, raw and escaped (a surrogate pair), decodes. */
    assert_ok(decode_header("{\"s\": \"d\xc3\xa9\", \"m\": {\"t\": \"\\ud83d\\ude00\"}, \"v\": \"2.0\"}"));
}

/* fixarray(1) of one fixstr(3) holding `s`, and the same as a map key. */
static void test_interop_and_auto_arguments_must_be_utf8(void **state) {
    cachekit_buf out = CACHEKIT_BUF_INIT, canonical = CACHEKIT_BUF_INIT;
    (void)state;
    for (size_t i = 0; i < INVALID_COUNT; ++i) {
        uint8_t arg[5] = {0x91, 0xa3}, key[7] = {0x91, 0x81, 0xa3, 0, 0, 0, 0x01};
        uint8_t auto_args[6] = {0x92, 0x91, 0xa3, 0, 0, 0};
        memcpy(arg + 2, kInvalid[i], 3);
        memcpy(key + 3, kInvalid[i], 3);
        memcpy(auto_args + 3, kInvalid[i], 3);
        uint8_t auto_full[7];
        memcpy(auto_full, auto_args, 6);
        auto_full[6] = 0x80; /* [[str], {}] */
        assert_rc(cachekit_key_interop(&out, &canonical, "users", "get", arg, sizeof arg), CACHEKIT_EUNSUPPORTED);
        assert_rc(cachekit_key_interop(&out, &canonical, "users", "get", key, sizeof key), CACHEKIT_EUNSUPPORTED);
        assert_rc(cachekit_msgpack_canonical(&out, arg, sizeof arg, CACHEKIT_PROFILE_ARGS), CACHEKIT_EUNSUPPORTED);
        assert_rc(cachekit_msgpack_canonical(&out, arg, sizeof arg, CACHEKIT_PROFILE_VALUE), CACHEKIT_EUNSUPPORTED);
        assert_rc(cachekit_key_auto(&out, "ns", "m", "f", auto_full, sizeof auto_full, 1, "std"),
                  CACHEKIT_EUNSUPPORTED);
    }
    cachekit_buf_dispose(&out);
    cachekit_buf_dispose(&canonical);
}

static void test_auto_key_parts_must_be_utf8(void **state) {
    static const uint8_t args[] = {0x92, 0x90, 0x80};
    cachekit_buf out = CACHEKIT_BUF_INIT;
    char part[8];
    (void)state;
    for (size_t i = 0; i < INVALID_COUNT; ++i) {
        snprintf(part, sizeof part, "x%s", kInvalid[i]);
        assert_einval(cachekit_key_auto(&out, part, "m", "f", args, sizeof args, 1, "std"));
        assert_einval(cachekit_key_auto(&out, "ns", part, "f", args, sizeof args, 1, "std"));
        assert_einval(cachekit_key_auto(&out, "ns", "m", part, args, sizeof args, 1, "std"));
        assert_einval(cachekit_key_auto(&out, "ns", "m", "f", args, sizeof args, 1, part));
    }
    cachekit_buf_dispose(&out);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_envelope_format_must_be_utf8),
        cmocka_unit_test(test_container_v2_value_strings_must_be_utf8),
        cmocka_unit_test(test_frame_header_strings_must_be_utf8),
        cmocka_unit_test(test_interop_and_auto_arguments_must_be_utf8),
        cmocka_unit_test(test_auto_key_parts_must_be_utf8),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
