/* The C API contract: argument validation of every codec entry point, the
 * thread-local last error, status names, and cachekit_buf reuse. */
#include "unit_support.h"

static const uint8_t kDoc[] = {0x91, 0x2a}; /* [42] */
static const char kHex[] = "6161616161616161616161616161616161616161616161616161616161616161";

/* ---- Argument validation --------------------------------------------- */

static void test_msgpack_args(void **state) {
    cachekit_buf out = CACHEKIT_BUF_INIT;
    (void)state;
    /* cachekit_msgpack_check: NULL data with a length, max_depth range. */
    assert_einval(cachekit_msgpack_check(NULL, 1, 0));
    /* NULL with length 0 is an empty input, not an argument error. */
    assert_rc(cachekit_msgpack_check(NULL, 0, 0), CACHEKIT_ETRUNCATED);
    assert_einval(cachekit_msgpack_check(kDoc, sizeof kDoc, 31));
    assert_einval(cachekit_msgpack_check(kDoc, sizeof kDoc, 1));
    assert_einval(cachekit_msgpack_check(kDoc, sizeof kDoc, 1025));
    assert_einval(cachekit_msgpack_check(kDoc, sizeof kDoc, UINT32_MAX));
    assert_ok(cachekit_msgpack_check(kDoc, sizeof kDoc, 0));
    assert_ok(cachekit_msgpack_check(kDoc, sizeof kDoc, CACHEKIT_MSGPACK_MIN_DEPTH));
    assert_ok(cachekit_msgpack_check(kDoc, sizeof kDoc, CACHEKIT_MSGPACK_MAX_DEPTH));

    /* cachekit_msgpack_canonical: NULL out, NULL data, bad profiles. */
    assert_einval(cachekit_msgpack_canonical(NULL, kDoc, sizeof kDoc, CACHEKIT_PROFILE_ARGS));
    assert_einval(cachekit_msgpack_canonical(&out, NULL, 2, CACHEKIT_PROFILE_ARGS));
    assert_einval(cachekit_msgpack_canonical(&out, kDoc, sizeof kDoc, 0));
    assert_einval(cachekit_msgpack_canonical(&out, kDoc, sizeof kDoc, 4));
    assert_einval(cachekit_msgpack_canonical(&out, kDoc, sizeof kDoc, -1));
    assert_ok(cachekit_msgpack_canonical(&out, kDoc, sizeof kDoc, CACHEKIT_PROFILE_ARGS));
    assert_ok(cachekit_msgpack_canonical(&out, kDoc, sizeof kDoc, CACHEKIT_PROFILE_VALUE));
    assert_ok(cachekit_msgpack_canonical(&out, kDoc, sizeof kDoc, CACHEKIT_PROFILE_AUTO_ARGS));

    /* cachekit_msgpack_to_json. */
    assert_einval(cachekit_msgpack_to_json(NULL, kDoc, sizeof kDoc));
    assert_einval(cachekit_msgpack_to_json(&out, NULL, 2));
    assert_ok(cachekit_msgpack_to_json(&out, kDoc, sizeof kDoc));
    assert_string_equal(out.ptr, "[42]");
    cachekit_buf_dispose(&out);
}

static void test_key_args(void **state) {
    cachekit_buf out = CACHEKIT_BUF_INIT;
    static const uint8_t auto_args[] = {0x92, 0x91, 0x2a, 0x80}; /* [[42], {}] */
    (void)state;
    assert_einval(cachekit_serializer_code(NULL, "std"));
    assert_einval(cachekit_serializer_code(&out, NULL));
    assert_einval(cachekit_serializer_code(&out, ""));

    assert_einval(cachekit_key_auto(NULL, "ns", "m", "f", auto_args, sizeof auto_args, 1, "std"));
    assert_einval(cachekit_key_auto(&out, "ns", NULL, "f", auto_args, sizeof auto_args, 1, "std"));
    assert_einval(cachekit_key_auto(&out, "ns", "m", NULL, auto_args, sizeof auto_args, 1, "std"));
    assert_einval(cachekit_key_auto(&out, "ns", "m", "f", NULL, sizeof auto_args, 1, "std"));
    assert_einval(cachekit_key_auto(&out, "ns", "m", "f", auto_args, sizeof auto_args, 1, NULL));
    assert_einval(cachekit_key_auto(&out, "ns", "m", "f", auto_args, sizeof auto_args, 1, ""));
    assert_ok(cachekit_key_auto(&out, NULL, "m", "f", auto_args, sizeof auto_args, 1, "std"));
    assert_ok(cachekit_key_auto(&out, "", "m", "f", auto_args, sizeof auto_args, 0, "std"));
    assert_string_equal(out.ptr + out.size - 3, ":0s");
    assert_true(strncmp(out.ptr, "func:", 5) == 0); /* "" is no namespace */

    assert_einval(cachekit_key_interop(NULL, NULL, "users", "get_user", kDoc, sizeof kDoc));
    assert_einval(cachekit_key_interop(&out, NULL, NULL, "get_user", kDoc, sizeof kDoc));
    assert_einval(cachekit_key_interop(&out, NULL, "users", NULL, kDoc, sizeof kDoc));
    assert_einval(cachekit_key_interop(&out, NULL, "users", "get_user", NULL, sizeof kDoc));
    assert_ok(cachekit_key_interop(&out, NULL, "users", "get_user", kDoc, sizeof kDoc));
    assert_string_equal(out.ptr, "users:get_user:61598716255080080f6456eb065c2e51badfaa4320b0efe97469c29cffee8875");
    cachekit_buf_dispose(&out);
}

static void test_container_args(void **state) {
    cachekit_buf out = CACHEKIT_BUF_INIT, fmt = CACHEKIT_BUF_INIT, payload = CACHEKIT_BUF_INIT;
    size_t off = 0;
    (void)state;
    assert_einval(cachekit_envelope_wrap(NULL, "x", 1, "msgpack"));
    assert_einval(cachekit_envelope_wrap(&out, NULL, 1, "msgpack"));
    assert_ok(cachekit_envelope_wrap(&out, NULL, 0, NULL)); /* empty payload; NULL format = "msgpack" */
    assert_ok(cachekit_envelope_unwrap(&payload, &fmt, out.ptr, out.size));
    assert_int_equal(payload.size, 0);
    assert_string_equal(fmt.ptr, "msgpack");
    assert_einval(cachekit_envelope_unwrap(NULL, NULL, out.ptr, out.size));
    assert_einval(cachekit_envelope_unwrap(&out, NULL, NULL, 5));

    assert_einval(cachekit_frame_encode(NULL, "default", "{}", "x", 1));
    assert_einval(cachekit_frame_encode(&out, NULL, "{}", "x", 1));
    assert_einval(cachekit_frame_encode(&out, "default", NULL, "x", 1));
    assert_einval(cachekit_frame_encode(&out, "default", "{}", NULL, 1));
    assert_einval(cachekit_frame_encode(&out, "default", "[]", "x", 1));   /* not an object */
    assert_einval(cachekit_frame_encode(&out, "default", "{\"a\":", "x", 1)); /* not JSON */
    assert_ok(cachekit_frame_encode(&out, "default", "{}", "x", 1));
    assert_einval(cachekit_frame_decode(NULL, NULL, NULL, out.ptr, out.size));
    assert_einval(cachekit_frame_decode(NULL, NULL, &off, NULL, 8));
    assert_ok(cachekit_frame_decode(NULL, NULL, &off, out.ptr, out.size));
    assert_int_equal(off, out.size - 1);

    assert_einval(cachekit_container_v2_wrap(NULL, kDoc, sizeof kDoc, CACHEKIT_V2_METHOD_NONE));
    assert_einval(cachekit_container_v2_wrap(&out, NULL, 2, CACHEKIT_V2_METHOD_NONE));
    assert_einval(cachekit_container_v2_wrap(&out, kDoc, sizeof kDoc, 2));
    assert_einval(cachekit_container_v2_wrap(&out, kDoc, sizeof kDoc, -1));
    assert_ok(cachekit_container_v2_wrap(&out, kDoc, sizeof kDoc, CACHEKIT_V2_METHOD_LZ4));
    assert_einval(cachekit_container_v2_unwrap(NULL, out.ptr, out.size));
    assert_einval(cachekit_container_v2_unwrap(&fmt, NULL, out.size));

    assert_einval(cachekit_inspect(NULL, kDoc, sizeof kDoc, NULL, NULL, NULL));
    assert_einval(cachekit_inspect(&out, NULL, 3, NULL, NULL, NULL));
    assert_ok(cachekit_inspect(&out, kDoc, sizeof kDoc, NULL, NULL, NULL));
    assert_true(out.ptr[0] == '{');
    cachekit_buf_dispose(&out);
    cachekit_buf_dispose(&fmt);
    cachekit_buf_dispose(&payload);
}

static void test_crypto_args(void **state) {
    cachekit_buf out = CACHEKIT_BUF_INIT;
    unsigned char master[CACHEKIT_KEY_SIZE], fp[CACHEKIT_FINGERPRINT_SIZE];
    cachekit_derived_keys keys;
    cachekit_keyring *ring = NULL;
    char long_tenant[1026];
    unsigned char raw4[4 * CACHEKIT_KEY_SIZE];
    (void)state;

    assert_einval(cachekit_master_key_from_hex(NULL, kHex, 64));
    assert_einval(cachekit_master_key_from_hex(master, NULL, 64));
    assert_einval(cachekit_master_key_from_hex(master, kHex, 0));
    assert_ok(cachekit_master_key_from_hex(master, kHex, 64));

    assert_einval(cachekit_crypto_derive(NULL, master, 32, NULL));
    assert_einval(cachekit_crypto_derive(&keys, NULL, 32, NULL));
    assert_einval(cachekit_crypto_derive(&keys, master, 31, NULL));
    assert_einval(cachekit_crypto_derive(&keys, master, 0, NULL));
    assert_einval(cachekit_crypto_derive(&keys, master, 32, "")); /* tenant holds 1..1024 bytes */
    memset(long_tenant, 't', sizeof long_tenant - 1);
    long_tenant[1025] = '\0';
    assert_einval(cachekit_crypto_derive(&keys, master, 32, long_tenant));
    long_tenant[1024] = '\0';
    assert_ok(cachekit_crypto_derive(&keys, master, 32, long_tenant));

    assert_einval(cachekit_crypto_aad(NULL, NULL, "k", "msgpack", 0, NULL));
    assert_einval(cachekit_crypto_aad(&out, NULL, NULL, "msgpack", 0, NULL));
    assert_einval(cachekit_crypto_aad(&out, NULL, "k", NULL, 0, NULL));
    assert_ok(cachekit_crypto_aad(&out, NULL, "k", "msgpack", 0, NULL));

    assert_ok(cachekit_crypto_derive(&keys, master, 32, NULL));
    assert_einval(cachekit_crypto_encrypt(NULL, keys.encryption, "a", 1, "p", 1, NULL));
    assert_einval(cachekit_crypto_encrypt(&out, NULL, "a", 1, "p", 1, NULL));
    assert_einval(cachekit_crypto_encrypt(&out, keys.encryption, NULL, 1, "p", 1, NULL));
    assert_einval(cachekit_crypto_encrypt(&out, keys.encryption, "a", 1, NULL, 1, NULL));
    assert_ok(cachekit_crypto_encrypt(&out, keys.encryption, NULL, 0, NULL, 0, NULL));
    assert_int_equal(out.size, CACHEKIT_NONCE_SIZE + CACHEKIT_TAG_SIZE);
    {
        cachekit_buf pt = CACHEKIT_BUF_INIT;
        assert_einval(cachekit_crypto_decrypt(NULL, keys.encryption, NULL, 0, out.ptr, out.size));
        assert_einval(cachekit_crypto_decrypt(&pt, NULL, NULL, 0, out.ptr, out.size));
        assert_einval(cachekit_crypto_decrypt(&pt, keys.encryption, NULL, 1, out.ptr, out.size));
        assert_einval(cachekit_crypto_decrypt(&pt, keys.encryption, NULL, 0, NULL, out.size));
        assert_ok(cachekit_crypto_decrypt(&pt, keys.encryption, NULL, 0, out.ptr, out.size));
        assert_int_equal(pt.size, 0);
        cachekit_buf_dispose(&pt);
    }

    /* Keyrings. */
    assert_einval(cachekit_keyring_new(NULL, kHex, NULL));
    assert_einval(cachekit_keyring_new(&ring, NULL, NULL));
    assert_null(ring);
    assert_einval(cachekit_keyring_new(&ring, kHex, kHex)); /* previous repeats current */
    assert_einval(cachekit_keyring_new(&ring, kHex,
                                       "1111111111111111111111111111111111111111111111111111111111111111,"
                                       "2222222222222222222222222222222222222222222222222222222222222222,"
                                       "3333333333333333333333333333333333333333333333333333333333333333,"
                                       "4444444444444444444444444444444444444444444444444444444444444444"));
    assert_einval(cachekit_keyring_new(&ring, kHex, "1111111111111111111111111111111111111111111111111111111111111111,"));
    assert_null(ring);
    memset(raw4, 0x11, sizeof raw4);
    raw4[32] = 0x22;
    raw4[64] = 0x33;
    raw4[96] = 0x44;
    assert_einval(cachekit_keyring_new_raw(NULL, master, 32, NULL, 0));
    assert_einval(cachekit_keyring_new_raw(&ring, NULL, 32, NULL, 0));
    assert_einval(cachekit_keyring_new_raw(&ring, master, 31, NULL, 0));
    assert_einval(cachekit_keyring_new_raw(&ring, master, 32, NULL, 1));
    assert_einval(cachekit_keyring_new_raw(&ring, master, 32, raw4, 4));
    assert_einval(cachekit_keyring_new_raw(&ring, master, 32, master, 1)); /* previous repeats current */
    assert_ok(cachekit_keyring_new_raw(&ring, master, 32, raw4, 3));
    assert_non_null(ring);

    assert_einval(cachekit_keyring_fingerprint(NULL, fp, NULL));
    assert_einval(cachekit_keyring_fingerprint(ring, NULL, NULL));
    assert_ok(cachekit_keyring_fingerprint(ring, fp, NULL));
    assert_memory_equal(fp, keys.fingerprint, sizeof fp);
    assert_einval(cachekit_keyring_encrypt(NULL, &out, NULL, NULL, 0, "p", 1));
    assert_einval(cachekit_keyring_encrypt(ring, NULL, NULL, NULL, 0, "p", 1));
    assert_einval(cachekit_keyring_encrypt(ring, &out, NULL, NULL, 1, "p", 1));
    assert_einval(cachekit_keyring_encrypt(ring, &out, NULL, NULL, 0, NULL, 1));
    assert_ok(cachekit_keyring_encrypt(ring, &out, NULL, "a", 1, "p", 1));
    {
        cachekit_buf pt = CACHEKIT_BUF_INIT;
        int index = -1;
        assert_einval(cachekit_keyring_decrypt(NULL, &pt, NULL, NULL, NULL, "a", 1, out.ptr, out.size));
        assert_einval(cachekit_keyring_decrypt(ring, NULL, NULL, NULL, NULL, "a", 1, out.ptr, out.size));
        assert_einval(cachekit_keyring_decrypt(ring, &pt, NULL, NULL, NULL, NULL, 1, out.ptr, out.size));
        assert_einval(cachekit_keyring_decrypt(ring, &pt, NULL, NULL, NULL, "a", 1, NULL, out.size));
        assert_ok(cachekit_keyring_decrypt(ring, &pt, &index, NULL, NULL, "a", 1, out.ptr, out.size));
        assert_int_equal(index, 0);
        assert_int_equal(pt.size, 1);
        assert_int_equal(pt.ptr[0], 'p');
        cachekit_buf_dispose(&pt);
    }
    cachekit_keyring_free(ring);
    cachekit_keyring_free(NULL);
    cachekit_buf_dispose(&out);
}

/* A tenant id holds 1..1024 bytes (NULL means "default"): cachekit_crypto_derive
 * and cachekit_crypto_aad refuse "", so the keyring calls, which derive the
 * same keys for a tenant, must refuse it too rather than silently use the
 * "default" tenant's keys. */
static void test_empty_tenant(void **state) {
    cachekit_buf out = CACHEKIT_BUF_INIT, pt = CACHEKIT_BUF_INIT, aad = CACHEKIT_BUF_INIT;
    unsigned char master[CACHEKIT_KEY_SIZE], fp[CACHEKIT_FINGERPRINT_SIZE];
    cachekit_derived_keys keys;
    cachekit_keyring *ring = NULL;
    int rc_fp, rc_dec, rc_enc;
    (void)state;
    assert_ok(cachekit_master_key_from_hex(master, kHex, 64));
    assert_einval(cachekit_crypto_derive(&keys, master, 32, ""));
    assert_einval(cachekit_crypto_aad(&aad, "", "k", "msgpack", 0, NULL));
    assert_ok(cachekit_keyring_new(&ring, kHex, NULL));
    assert_ok(cachekit_keyring_encrypt(ring, &out, NULL, "a", 1, "p", 1));
    /* Collected first, asserted after the keyring is freed. */
    rc_fp = cachekit_keyring_fingerprint(ring, fp, "");
    rc_dec = cachekit_keyring_decrypt(ring, &pt, NULL, "", NULL, "a", 1, out.ptr, out.size);
    rc_enc = cachekit_keyring_encrypt(ring, &out, "", "a", 1, "p", 1);
    cachekit_keyring_free(ring);
    cachekit_buf_dispose(&out);
    cachekit_buf_dispose(&pt);
    cachekit_buf_dispose(&aad);
    if (rc_fp == CACHEKIT_OK) print_message("keyring_fingerprint(tenant \"\") succeeded: it derives for another tenant\n");
    assert_rc(rc_fp, CACHEKIT_EINVAL);
    assert_rc(rc_dec, CACHEKIT_EINVAL);
    assert_rc(rc_enc, CACHEKIT_EINVAL);
}

/* ---- The thread-local last error -------------------------------------- */

/* Observed and pinned here: a failure sets the code and a message; a later
 * SUCCESS does not clear them (the last error is "the last failure", not the
 * status of the last call); cachekit_error_clear does. A miss
 * (CACHEKIT_ENOTFOUND) sets no message. */
static void test_last_error(void **state) {
    cachekit_buf out = CACHEKIT_BUF_INIT;
    char saved[256];
    (void)state;
    cachekit_error_clear();
    assert_int_equal(cachekit_error_last_code(), 0);
    assert_string_equal(cachekit_error_last_message(), "");

    assert_rc(cachekit_msgpack_check(kDoc, 1, 0), CACHEKIT_EOVERCLAIM);
    assert_int_equal(cachekit_error_last_code(), CACHEKIT_EOVERCLAIM);
    assert_true(strlen(cachekit_error_last_message()) > 0);
    snprintf(saved, sizeof saved, "%s", cachekit_error_last_message());

    /* A success after a failure leaves the failure in place. */
    assert_ok(cachekit_msgpack_check(kDoc, sizeof kDoc, 0));
    assert_ok(cachekit_serializer_code(&out, "std"));
    assert_int_equal(cachekit_error_last_code(), CACHEKIT_EOVERCLAIM);
    assert_string_equal(cachekit_error_last_message(), saved);

    /* The next failure replaces it. */
    assert_rc(cachekit_serializer_code(&out, ""), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_error_last_code(), CACHEKIT_EINVAL);
    assert_string_not_equal(cachekit_error_last_message(), saved);

    cachekit_error_clear();
    assert_int_equal(cachekit_error_last_code(), 0);
    assert_string_equal(cachekit_error_last_message(), "");
    cachekit_buf_dispose(&out);
}

/* ---- Status names ------------------------------------------------------- */

static void test_error_names(void **state) {
    /* Codes are pinned and only appended, so they run 0, -1, -2, ... without
     * a gap: name every code down to the first "Unknown" and require at
     * least the codes this header declares. */
    const char *names[256];
    int count = 0, code, i, j;
    (void)state;
    for (code = 0; code > -256; --code) {
        const char *n = cachekit_error_name(code);
        assert_non_null(n);
        if (strcmp(n, "Unknown") == 0) break;
        assert_true(n[0] != '\0');
        names[count++] = n;
    }
    print_message("%d status codes named (0 .. %d)\n", count, -(count - 1));
    assert_true(-(count - 1) <= CACHEKIT_EDEADLOCK);
    /* No gap: the next few codes are all unknown. */
    for (i = 0; i < 16; ++i) assert_string_equal(cachekit_error_name(-count - i), "Unknown");
    assert_string_equal(cachekit_error_name(1), "Unknown");
    assert_string_equal(cachekit_error_name(INT32_MIN), "Unknown");
    assert_string_equal(cachekit_error_name(INT32_MAX), "Unknown");
    /* Unique. */
    for (i = 0; i < count; ++i)
        for (j = i + 1; j < count; ++j)
            if (strcmp(names[i], names[j]) == 0) fail_msg("codes %d and %d share the name %s", -i, -j, names[i]);
    /* A few pinned names (the same the codec tool reports). */
    assert_string_equal(cachekit_error_name(CACHEKIT_OK), "Ok");
    assert_string_equal(cachekit_error_name(CACHEKIT_EINVAL), "InvalidArgument");
    assert_string_equal(cachekit_error_name(CACHEKIT_EDESERIALIZE), "DeserializationFailed");
    assert_string_equal(cachekit_error_name(CACHEKIT_EBOMB), "DecompressionBomb");
    assert_string_equal(cachekit_error_name(CACHEKIT_EOVERCLAIM), "Overclaim");
    assert_string_equal(cachekit_error_name(CACHEKIT_ETRAILING), "TrailingBytes");
    assert_string_equal(cachekit_error_name(CACHEKIT_EAUTH), "AuthenticationFailed");
}

/* ---- Buffers -------------------------------------------------------------- */

static void test_buffer_reuse(void **state) {
    cachekit_buf b = CACHEKIT_BUF_INIT;
    char *ptr;
    size_t cap;
    uint8_t big[5000];
    size_t i;
    (void)state;
    assert_einval(cachekit_buf_reserve(NULL, 10));

    assert_ok(cachekit_buf_reserve(&b, 1000));
    assert_non_null(b.ptr);
    assert_true(b.capacity >= 1000);
    assert_int_equal(b.size, 0);
    ptr = b.ptr;
    cap = b.capacity;

    /* A small text output reuses the allocation and is NUL-terminated. */
    assert_ok(cachekit_serializer_code(&b, "cbor"));
    assert_ptr_equal(b.ptr, ptr);
    assert_int_equal(b.capacity, cap);
    assert_int_equal(b.size, 5);
    assert_int_equal(b.ptr[b.size], '\0');
    assert_string_equal(b.ptr, "x23d5");

    /* A smaller reserve never shrinks. */
    assert_ok(cachekit_buf_reserve(&b, 10));
    assert_ptr_equal(b.ptr, ptr);
    assert_int_equal(b.capacity, cap);
    assert_string_equal(b.ptr, "x23d5"); /* contents kept */

    /* A bigger binary output grows it; it is NUL-terminated too. */
    for (i = 0; i < sizeof big; ++i) big[i] = (uint8_t)(i * 7 + (i >> 5));
    assert_ok(cachekit_envelope_wrap(&b, big, sizeof big, "msgpack"));
    assert_true(b.capacity >= b.size);
    assert_int_equal(b.ptr[b.size], '\0');
    ptr = b.ptr;
    cap = b.capacity;
    {
        cachekit_buf out = CACHEKIT_BUF_INIT;
        assert_ok(cachekit_envelope_unwrap(&out, NULL, b.ptr, b.size));
        assert_int_equal(out.size, sizeof big);
        assert_memory_equal(out.ptr, big, sizeof big);
        assert_int_equal(out.ptr[out.size], '\0');
        cachekit_buf_dispose(&out);
    }

    /* Then a small output again: same pointer, capacity not shrunk. */
    assert_ok(cachekit_serializer_code(&b, "arrow"));
    assert_ptr_equal(b.ptr, ptr);
    assert_int_equal(b.capacity, cap);
    assert_string_equal(b.ptr, "w");

    /* An empty output is still a valid C string. */
    assert_ok(cachekit_container_v2_wrap(&b, kDoc, sizeof kDoc, CACHEKIT_V2_METHOD_NONE));
    {
        cachekit_buf out = CACHEKIT_BUF_INIT;
        static const uint8_t empty_map[] = {0x80};
        assert_ok(cachekit_envelope_wrap(&b, NULL, 0, "msgpack"));
        assert_ok(cachekit_envelope_unwrap(&out, NULL, b.ptr, b.size));
        assert_int_equal(out.size, 0);
        assert_non_null(out.ptr);
        assert_int_equal(out.ptr[0], '\0');
        assert_ok(cachekit_msgpack_to_json(&out, empty_map, 1));
        assert_string_equal(out.ptr, "{}");
        cachekit_buf_dispose(&out);
    }

    /* A failed call leaves the buffer usable (and releasable). */
    assert_rc(cachekit_envelope_unwrap(&b, NULL, "\xc0", 1), CACHEKIT_EDESERIALIZE);
    cachekit_buf_dispose(&b);
    assert_null(b.ptr);
    assert_int_equal(b.size, 0);
    assert_int_equal(b.capacity, 0);
    cachekit_buf_dispose(&b); /* twice is fine */
    cachekit_buf_dispose(NULL);
    cachekit_free(NULL);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_msgpack_args),
        cmocka_unit_test(test_key_args),
        cmocka_unit_test(test_container_args),
        cmocka_unit_test(test_crypto_args),
        cmocka_unit_test(test_empty_tenant),
        cmocka_unit_test(test_last_error),
        cmocka_unit_test(test_error_names),
        cmocka_unit_test(test_buffer_reuse),
    };
    return cmocka_run_group_tests_name("api_contract", tests, NULL, NULL);
}
