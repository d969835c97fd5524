/* The C API contract: argument validation of every codec entry point, the
 * thread-local last error, status names, cachekit_buf reuse, the per-call
 * errors of the _ex forms, the cache namespace rule and nested options
 * passed by pointer. */
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

    /* The reference's key= key: 16 hex of BLAKE3("m.f") (from the reference's
     * own blake3 package), then the namespace ("default" for NULL or ""). */
    assert_einval(cachekit_key_custom(NULL, "ub", "m", "f", "k1", 2));
    assert_einval(cachekit_key_custom(&out, "ub", NULL, "f", "k1", 2));
    assert_einval(cachekit_key_custom(&out, "ub", "m", NULL, "k1", 2));
    assert_einval(cachekit_key_custom(&out, "ub", "m", "f", NULL, 2));
    assert_einval(cachekit_key_custom(&out, "ub", "m", "f", "\xff", 1));
    assert_ok(cachekit_key_custom(&out, "ub", "m", "f", "k1", 2));
    assert_string_equal(out.ptr, "08f2f7a9d69d8e98-ub:k1");
    assert_ok(cachekit_key_custom(&out, NULL, "m", "f", "k1", 2));
    assert_string_equal(out.ptr, "08f2f7a9d69d8e98-default:k1");
    assert_ok(cachekit_key_custom(&out, "", "app.models", "get_user", NULL, 0));
    assert_string_equal(out.ptr, "8e7a6053d4b7f903-default:");

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

/* ---- Per-call errors (the _ex forms) ---------------------------------- */

/* 1 when s is valid UTF-8 (enough for these tests: no overlong checks). */
static int utf8_whole(const char *s) {
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        int n = *p < 0x80 ? 0 : (*p & 0xE0) == 0xC0 ? 1 : (*p & 0xF0) == 0xE0 ? 2 : (*p & 0xF8) == 0xF0 ? 3 : -1;
        if (n < 0) return 0;
        ++p;
        for (; n > 0; --n, ++p)
            if ((*p & 0xC0) != 0x80) return 0;
    }
    return 1;
}

static void test_call_error_contents(void **state) {
    cachekit_error err = CACHEKIT_ERROR_INIT;
    cachekit_buf out = CACHEKIT_BUF_INIT;
    (void)state;
    assert_int_equal(err.struct_size, sizeof(cachekit_error));

    /* A failure: code, name and the same message as the thread-local one. */
    assert_rc(cachekit_msgpack_check_ex(kDoc, sizeof kDoc, 1, &err), CACHEKIT_EINVAL);
    assert_int_equal(err.code, CACHEKIT_EINVAL);
    assert_string_equal(err.name, "InvalidArgument");
    assert_true(err.message[0] != '\0');
    assert_string_equal(err.message, cachekit_error_last_message());

    /* Another failure of another kind replaces it all. */
    assert_rc(cachekit_msgpack_check_ex(kDoc, 1, 0, &err), CACHEKIT_EOVERCLAIM);
    assert_int_equal(err.code, CACHEKIT_EOVERCLAIM);
    assert_string_equal(err.name, "Overclaim");
    assert_string_equal(err.message, cachekit_error_last_message());

    /* A success writes code 0 and no message (the thread-local failure
     * stays, as for the plain call). */
    assert_ok(cachekit_serializer_code_ex(&out, "std", &err));
    assert_int_equal(err.code, CACHEKIT_OK);
    assert_string_equal(err.name, "Ok");
    assert_string_equal(err.message, "");
    assert_string_equal(out.ptr, "s");
    assert_int_equal(cachekit_error_last_code(), CACHEKIT_EOVERCLAIM);

    /* Each call reports its own message, of another area too. */
    assert_rc(cachekit_msgpack_check_ex(kDoc, 1, 0, &err), CACHEKIT_EOVERCLAIM);
    assert_rc(cachekit_l1_options_init_ex(NULL, 64, &err), CACHEKIT_EINVAL);
    assert_true(strstr(err.message, "NULL") != NULL);

    /* err NULL is the plain call. */
    assert_rc(cachekit_msgpack_check_ex(kDoc, sizeof kDoc, 1, NULL), CACHEKIT_EINVAL);
    assert_ok(cachekit_msgpack_check_ex(kDoc, sizeof kDoc, 0, NULL));

    /* A struct_size smaller than this form: EINVAL, the call is not made. */
    {
        cachekit_error small = CACHEKIT_ERROR_INIT;
        cachekit_l1 *l1 = (cachekit_l1 *)&small; /* a sentinel the call must not touch */
        small.struct_size = offsetof(cachekit_error, message);
        small.code = 12345;
        assert_rc(cachekit_l1_new_ex(&l1, NULL, &small), CACHEKIT_EINVAL);
        assert_ptr_equal(l1, (cachekit_l1 *)&small);
        assert_int_equal(small.code, 12345); /* nothing written into it */
        assert_true(strstr(cachekit_error_last_message(), "struct_size") != NULL);
    }
    cachekit_buf_dispose(&out);
}

static void test_call_error_miss(void **state) {
    cachekit_error err = CACHEKIT_ERROR_INIT;
    cachekit_buf out = CACHEKIT_BUF_INIT;
    cachekit_l1 *l1 = NULL;
    (void)state;
    assert_ok(cachekit_l1_new_ex(&l1, NULL, &err));
    /* Leave a failure on the thread first: a miss must not report it. */
    assert_rc(cachekit_serializer_code(&out, ""), CACHEKIT_EINVAL);
    assert_rc(cachekit_l1_get_ex(l1, &out, "k", 1, &err), CACHEKIT_ENOTFOUND);
    assert_int_equal(err.code, CACHEKIT_ENOTFOUND);
    assert_string_equal(err.name, "NotFound");
    assert_string_equal(err.message, "");
    assert_ok(cachekit_l1_put_ex(l1, NULL, 0, "k", 1, "v", 1, 0, &err));
    assert_ok(cachekit_l1_get_ex(l1, &out, "k", 1, &err));
    assert_int_equal(err.code, CACHEKIT_OK);
    assert_rc(cachekit_l1_get_ex(l1, &out, "", 0, &err), CACHEKIT_EINVAL);
    assert_true(err.message[0] != '\0');
    cachekit_l1_free(l1);

    /* A failure of another kind after an older one (a lock someone holds)
     * reports its own text. */
    {
        cachekit_backend *b = NULL;
        cachekit_buf token = CACHEKIT_BUF_INIT;
        assert_ok(cachekit_backend_open_ex(&b, "memory://", NULL, &err));
        assert_ok(cachekit_backend_lock_ex(b, &token, "L", 1, 10000, &err));
        assert_rc(cachekit_serializer_code(&out, ""), CACHEKIT_EINVAL);
        assert_rc(cachekit_backend_lock_ex(b, &token, "L", 1, 10000, &err), CACHEKIT_EBUSY);
        assert_int_equal(err.code, CACHEKIT_EBUSY);
        assert_string_equal(err.name, "Busy");
        assert_int_equal(cachekit_error_last_code(), CACHEKIT_EBUSY);
        assert_string_equal(err.message, cachekit_error_last_message());
        assert_true(strstr(err.message, "serializer") == NULL && strstr(err.message, "identity") == NULL);
        cachekit_buf_dispose(&token);
        cachekit_backend_free(b);
    }
    cachekit_buf_dispose(&out);
}

/* A loader's long message comes back cut at a UTF-8 boundary with "...". */
struct long_message {
    const char *unit; /* repeated to make the message */
    size_t lead;      /* ASCII bytes before the repetition */
};

static int failing_loader(cachekit_load *load, void *payload) {
    const struct long_message *m = payload;
    char text[6000];
    size_t n = 0;
    for (; n < m->lead; ++n) text[n] = 'x';
    while (n + strlen(m->unit) < sizeof text - 1) {
        memcpy(text + n, m->unit, strlen(m->unit));
        n += strlen(m->unit);
    }
    text[n] = '\0';
    cachekit_load_set_error(load, text);
    return 1;
}

static cachekit_cache *memory_cache(void) {
    cachekit_cache_options o;
    cachekit_cache *c = NULL;
    assert_ok(cachekit_cache_options_init(&o, sizeof o));
    assert_null(o.backend_options);
    o.backend_url = "memory://";
    assert_ok(cachekit_cache_new(&c, &o));
    return c;
}

static void test_call_error_truncated(void **state) {
    static const struct long_message cases[] = {
        {"a", 0}, {"\xc3\xa9", 0}, {"\xc3\xa9", 1}, {"\xe2\x82\xac", 0}, {"\xe2\x82\xac", 1},
        {"\xe2\x82\xac", 2}, {"\xf0\x9f\x98\x80", 0}, {"\xf0\x9f\x98\x80", 1}, {"\xf0\x9f\x98\x80", 3},
    };
    cachekit_cache *c = memory_cache();
    cachekit_buf out = CACHEKIT_BUF_INIT;
    cachekit_error err = CACHEKIT_ERROR_INIT;
    size_t i;
    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        size_t len;
        assert_rc(cachekit_cache_get_or_load_ex(c, &out, NULL, "ns", "k", 1, CACHEKIT_TTL_DEFAULT, failing_loader,
                                                (void *)&cases[i], &err),
                  CACHEKIT_EUSER);
        assert_int_equal(err.code, CACHEKIT_EUSER);
        assert_string_equal(err.name, "UserError");
        len = strlen(err.message);
        assert_true(len <= CACHEKIT_ERROR_MESSAGE_SIZE - 1);
        assert_true(len >= CACHEKIT_ERROR_MESSAGE_SIZE - 1 - 3 - 3); /* at most one sequence less */
        assert_memory_equal(err.message + len - 3, "...", 3);
        assert_true(utf8_whole(err.message));
        /* the text before "..." is the start of the thread-local message */
        assert_memory_equal(err.message, cachekit_error_last_message(), len - 3);
        assert_true(strlen(cachekit_error_last_message()) > len);
    }
    cachekit_buf_dispose(&out);
    cachekit_cache_free(c);
}

/* The outcome is the outer call's, even when the loader's own calls failed. */
static int loader_with_failing_inner_call(cachekit_load *load, void *payload) {
    cachekit_buf out = CACHEKIT_BUF_INIT;
    (void)payload;
    assert_int_equal(cachekit_serializer_code(&out, ""), CACHEKIT_EINVAL);
    cachekit_buf_dispose(&out);
    return cachekit_load_set_value(load, kDoc, sizeof kDoc);
}

static void test_call_error_nested(void **state) {
    cachekit_cache *c = memory_cache();
    cachekit_buf out = CACHEKIT_BUF_INIT;
    cachekit_error err = CACHEKIT_ERROR_INIT;
    (void)state;
    assert_ok(cachekit_cache_get_or_load_ex(c, &out, NULL, "ns", "nested", 6, CACHEKIT_TTL_DEFAULT,
                                            loader_with_failing_inner_call, NULL, &err));
    assert_int_equal(err.code, CACHEKIT_OK);
    assert_string_equal(err.message, "");
    assert_rc(cachekit_cache_get_ex(c, &out, NULL, "ns", "absent", 6, &err), CACHEKIT_ENOTFOUND);
    assert_string_equal(err.message, "");
    cachekit_buf_dispose(&out);
    cachekit_cache_free(c);
}

/* ---- Cache namespaces ------------------------------------------------- */

static void test_namespace_rule(void **state) {
    cachekit_cache *c = memory_cache();
    cachekit_buf out = CACHEKIT_BUF_INIT;
    cachekit_error err = CACHEKIT_ERROR_INIT;
    cachekit_lookup info = CACHEKIT_LOOKUP_INIT;
    cachekit_cache_stats stats;
    char ns[CACHEKIT_MAX_NAMESPACE_SIZE + 2];
    (void)state;
    memset(ns, 'n', sizeof ns);
    ns[CACHEKIT_MAX_NAMESPACE_SIZE] = '\0'; /* exactly the limit */
    assert_ok(cachekit_cache_put(c, ns, "k", 1, kDoc, sizeof kDoc, CACHEKIT_TTL_DEFAULT));
    assert_ok(cachekit_cache_get(c, &out, &info, ns, "k", 1));
    assert_ok(cachekit_cache_invalidate_namespace(c, ns));

    ns[CACHEKIT_MAX_NAMESPACE_SIZE] = 'n'; /* one byte more */
    ns[CACHEKIT_MAX_NAMESPACE_SIZE + 1] = '\0';
    assert_rc(cachekit_cache_put_ex(c, ns, "k", 1, kDoc, sizeof kDoc, CACHEKIT_TTL_DEFAULT, &err), CACHEKIT_EINVAL);
    assert_true(strstr(err.message, "CACHEKIT_MAX_NAMESPACE_SIZE") != NULL);
    assert_einval(cachekit_cache_get(c, &out, &info, ns, "k", 1));
    assert_einval(cachekit_cache_invalidate(c, ns, "k", 1));
    assert_einval(cachekit_cache_invalidate_namespace(c, ns));
    stats.struct_size = sizeof stats;
    assert_einval(cachekit_cache_stats_get(c, &stats, ns));

    /* Not UTF-8: refused with a message, whatever the call. */
    assert_rc(cachekit_cache_put_ex(c, "bad\xff", "k", 1, kDoc, sizeof kDoc, CACHEKIT_TTL_DEFAULT, &err),
              CACHEKIT_EINVAL);
    assert_true(strstr(err.message, "UTF-8") != NULL);
    assert_einval(cachekit_cache_get(c, &out, &info, "\xc3", "k", 1));
    assert_einval(cachekit_cache_invalidate_namespace(c, "\xed\xa0\x80")); /* a surrogate */
    /* UTF-8 beyond ASCII is fine; NULL and "" are the default namespace. */
    assert_ok(cachekit_cache_put(c, "caf\xc3\xa9", "k", 1, kDoc, sizeof kDoc, CACHEKIT_TTL_DEFAULT));
    assert_ok(cachekit_cache_put(c, NULL, "k", 1, kDoc, sizeof kDoc, CACHEKIT_TTL_DEFAULT));
    assert_ok(cachekit_cache_get(c, &out, &info, "", "k", 1));
    cachekit_buf_dispose(&out);
    cachekit_cache_free(c);
}

/* ---- Nested options by pointer ---------------------------------------- */

static void test_backend_options_pointer(void **state) {
    cachekit_cache_options o;
    cachekit_backend_options bo = CACHEKIT_BACKEND_OPTIONS_INIT;
    cachekit_cache *c = NULL;
    cachekit_error err = CACHEKIT_ERROR_INIT;
    (void)state;
    assert_ok(cachekit_cache_options_init(&o, sizeof o));
    o.backend_url = "memory://";
    o.backend_options = &bo; /* read during cachekit_cache_new only */
    bo.command_timeout_ms = 250;
    assert_ok(cachekit_cache_new_ex(&c, &o, &err));
    cachekit_cache_free(c);
    /* The pointed-to struct is versioned on its own: its struct_size rules. */
    bo.struct_size = 2;
    assert_rc(cachekit_cache_new_ex(&c, &o, &err), CACHEKIT_EINVAL);
    assert_null(c);
    assert_true(strstr(err.message, "struct_size") != NULL);
    /* An older, shorter backend_options struct: the fields it holds count. */
    bo.struct_size = offsetof(cachekit_backend_options, command_timeout_ms);
    assert_ok(cachekit_cache_new(&c, &o));
    cachekit_cache_free(c);
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
        cmocka_unit_test(test_call_error_contents),
        cmocka_unit_test(test_call_error_miss),
        cmocka_unit_test(test_call_error_truncated),
        cmocka_unit_test(test_call_error_nested),
        cmocka_unit_test(test_namespace_rule),
        cmocka_unit_test(test_backend_options_pointer),
    };
    return cmocka_run_group_tests_name("api_contract", tests, NULL, NULL);
}
