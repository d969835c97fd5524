/* Hostile inputs get their SPECIFIC codes: ByteStorage envelopes edited from
 * a real one (cachekit_envelope_wrap) to hit each step of the retrieve order,
 * short ciphertexts, interop arguments that are not an array, invalid UTF-8
 * and over-long auto-mode keys. */
#define _DEFAULT_SOURCE 1 /* MAP_ANONYMOUS */

#include <sys/mman.h>

#include <sodium.h>

#include "unit_support.h"

#define MAX_SIZE ((uint64_t)CACHEKIT_ENVELOPE_MAX_SIZE)

/* ---- Envelopes ------------------------------------------------------------ */

typedef struct envelope {
    bytes compressed;
    uint8_t checksum[8];
    uint64_t original_size;
    char format[32];
} envelope;

static uint64_t rd_be(const uint8_t *p, int n) {
    uint64_t v = 0;
    int i;
    for (i = 0; i < n; ++i) v = (v << 8) | p[i];
    return v;
}

/* Read a uint at p (fixint or cc/cd/ce/cf); returns the bytes it took. */
static size_t rd_uint(const uint8_t *p, uint64_t *v) {
    switch (p[0]) {
    case 0xcc: *v = rd_be(p + 1, 1); return 2;
    case 0xcd: *v = rd_be(p + 1, 2); return 3;
    case 0xce: *v = rd_be(p + 1, 4); return 5;
    case 0xcf: *v = rd_be(p + 1, 8); return 9;
    default: assert_true(p[0] <= 0x7f); *v = p[0]; return 1;
    }
}

/* Wrap `data` with the library and split the canonical envelope it wrote
 * (94, bin compressed, 98 + 8 uints, uint original_size, str format). */
static void real_envelope(envelope *e, const void *data, size_t len) {
    cachekit_buf b = CACHEKIT_BUF_INIT;
    const uint8_t *p;
    size_t pos = 2, n = 0;
    int i;
    uint64_t v;
    memset(e, 0, sizeof *e);
    assert_ok(cachekit_envelope_wrap(&b, data, len, "msgpack"));
    p = (const uint8_t *)b.ptr;
    assert_int_equal(p[0], 0x94);
    switch (p[1]) {
    case 0xc4: n = (size_t)rd_be(p + 2, 1); pos = 3; break;
    case 0xc5: n = (size_t)rd_be(p + 2, 2); pos = 4; break;
    case 0xc6: n = (size_t)rd_be(p + 2, 4); pos = 6; break;
    default: fail_msg("envelope_wrap did not write a bin: %02x", p[1]);
    }
    bytes_put(&e->compressed, p + pos, n);
    pos += n;
    assert_int_equal(p[pos], 0x98);
    ++pos;
    for (i = 0; i < 8; ++i) {
        pos += rd_uint(p + pos, &v);
        assert_true(v <= 255);
        e->checksum[i] = (uint8_t)v;
    }
    pos += rd_uint(p + pos, &e->original_size);
    assert_int_equal(e->original_size, len);
    assert_int_equal(p[pos], 0xa7);
    memcpy(e->format, p + pos + 1, 7);
    assert_int_equal(pos + 8, b.size);
    cachekit_buf_dispose(&b);
}

/* Encode an envelope from its fields; legacy = compressed as an array of
 * uints instead of bin. */
static void encode_envelope(bytes *out, const envelope *e, int legacy) {
    size_t i;
    out->n = 0;
    mp_array(out, 4);
    if (legacy) {
        mp_array(out, e->compressed.n);
        for (i = 0; i < e->compressed.n; ++i) mp_uint(out, e->compressed.p[i]);
    } else {
        mp_bin(out, e->compressed.p, e->compressed.n);
    }
    mp_array(out, 8);
    for (i = 0; i < 8; ++i) mp_uint(out, e->checksum[i]);
    mp_uint(out, e->original_size);
    mp_str(out, e->format, strlen(e->format));
}

/* Unwrap `e` (bin and legacy forms alike) and expect `want`. */
#define assert_unwrap(e, want)                                                        \
    do {                                                                              \
        bytes enc_ = {0};                                                             \
        cachekit_buf out_ = CACHEKIT_BUF_INIT;                                        \
        int legacy_;                                                                  \
        for (legacy_ = 0; legacy_ < 2; ++legacy_) {                                   \
            encode_envelope(&enc_, (e), legacy_);                                     \
            assert_rc(cachekit_envelope_unwrap(&out_, NULL, enc_.p, enc_.n), (want)); \
        }                                                                             \
        cachekit_buf_dispose(&out_);                                                  \
        bytes_free(&enc_);                                                            \
    } while (0)

static void set_compressed(envelope *e, const void *p, size_t n) {
    e->compressed.n = 0;
    bytes_put(&e->compressed, p, n);
}

static void test_real_envelope_roundtrip(void **state) {
    envelope e;
    uint8_t data[3000];
    size_t i;
    (void)state;
    for (i = 0; i < sizeof data; ++i) data[i] = (uint8_t)("abcabcabd"[i % 9]);
    real_envelope(&e, data, sizeof data);
    assert_unwrap(&e, CACHEKIT_OK); /* our re-encoding (bin and legacy) is sound */
    bytes_free(&e.compressed);
}

static void test_ratio_bomb(void **state) {
    envelope e;
    static const uint8_t one[] = {0x00}; /* an LZ4 block that decodes to 0 bytes */
    static const uint8_t two[] = {0x00, 0x00};
    (void)state;
    real_envelope(&e, "", 0); /* the checksum of "" */
    set_compressed(&e, one, 1);
    e.original_size = 1001; /* 1001:1 */
    assert_unwrap(&e, CACHEKIT_EBOMB);
    /* Exactly 1000:1 passes the ratio check; the block decodes to 0 bytes
     * whose checksum matches, so the size check is what fails. */
    e.original_size = 1000;
    assert_unwrap(&e, CACHEKIT_ESIZE);
    set_compressed(&e, two, 2);
    e.original_size = 2001;
    assert_unwrap(&e, CACHEKIT_EBOMB);
    e.original_size = 2000;
    {
        bytes enc = {0};
        cachekit_buf out = CACHEKIT_BUF_INIT;
        int rc;
        encode_envelope(&enc, &e, 0);
        rc = cachekit_envelope_unwrap(&out, NULL, enc.p, enc.n);
        assert_int_not_equal(rc, CACHEKIT_EBOMB);
        assert_int_not_equal(rc, CACHEKIT_OK);
        cachekit_buf_dispose(&out);
        bytes_free(&enc);
    }
    /* At the 512 MiB cap with a 1-byte block: a bomb, not too big. */
    set_compressed(&e, one, 1);
    e.original_size = MAX_SIZE;
    assert_unwrap(&e, CACHEKIT_EBOMB);
    bytes_free(&e.compressed);
}

static void test_zero_length_compressed(void **state) {
    envelope e;
    (void)state;
    real_envelope(&e, "", 0);
    set_compressed(&e, NULL, 0);
    e.original_size = 0; /* even with original_size 0 */
    assert_unwrap(&e, CACHEKIT_EBOMB);
    e.original_size = 7;
    assert_unwrap(&e, CACHEKIT_EBOMB);
    bytes_free(&e.compressed);
}

static void test_original_size_too_big(void **state) {
    envelope e;
    static const uint8_t one[] = {0x00};
    (void)state;
    real_envelope(&e, "x", 1);
    e.original_size = MAX_SIZE + 1; /* checked before the ratio: InputTooLarge */
    assert_unwrap(&e, CACHEKIT_ETOOBIG);
    set_compressed(&e, one, 1);
    assert_unwrap(&e, CACHEKIT_ETOOBIG);
    e.original_size = 0xffffffffu; /* still fits u32 */
    assert_unwrap(&e, CACHEKIT_ETOOBIG);
    bytes_free(&e.compressed);
}

static void test_corrupt_lz4(void **state) {
    envelope e;
    uint8_t data[1024];
    static const uint8_t zero_offset[] = {0x10, 0x41, 0x00, 0x00}; /* literal 'A', match offset 0 */
    (void)state;
    memset(data, 'A', sizeof data);
    real_envelope(&e, data, sizeof data);
    /* Truncated block. */
    assert_true(e.compressed.n > 4);
    e.compressed.n -= 3;
    assert_unwrap(&e, CACHEKIT_EDECOMPRESS);
    bytes_free(&e.compressed);

    /* A block that decodes past original_size. */
    real_envelope(&e, data, sizeof data);
    e.original_size = sizeof data - 24;
    assert_unwrap(&e, CACHEKIT_EDECOMPRESS);

    /* Match offset 0 is invalid. */
    set_compressed(&e, zero_offset, sizeof zero_offset);
    e.original_size = 5;
    assert_unwrap(&e, CACHEKIT_EDECOMPRESS);
    bytes_free(&e.compressed);
}

static void test_checksum_mismatch(void **state) {
    envelope e;
    int i;
    (void)state;
    for (i = 0; i < 8; ++i) {
        real_envelope(&e, "hello, cachekit!", 16);
        e.checksum[i] ^= (uint8_t)(1u << (i % 8));
        assert_unwrap(&e, CACHEKIT_ECHECKSUM);
        bytes_free(&e.compressed);
    }
}

static void test_short_output(void **state) {
    envelope e;
    uint8_t data[200];
    size_t i;
    (void)state;
    for (i = 0; i < sizeof data; ++i) data[i] = (uint8_t)(i * 31);
    real_envelope(&e, data, sizeof data);
    e.original_size = sizeof data + 1; /* decodes to 200 bytes, claims 201 */
    assert_unwrap(&e, CACHEKIT_ESIZE);
    e.original_size = sizeof data + 1000;
    assert_unwrap(&e, CACHEKIT_ESIZE);
    bytes_free(&e.compressed);
}

static void test_not_an_envelope(void **state) {
    envelope e;
    bytes b = {0};
    cachekit_buf out = CACHEKIT_BUF_INIT;
    size_t i;
    static const uint8_t nil[] = {0xc0};
    static const uint8_t map[] = {0x80};
    static const uint8_t str[] = {0xa3, 'a', 'b', 'c'};
    static const uint8_t reserved[] = {0xc1};
    (void)state;
    assert_rc(cachekit_envelope_unwrap(&out, NULL, nil, sizeof nil), CACHEKIT_EDESERIALIZE);
    assert_rc(cachekit_envelope_unwrap(&out, NULL, map, sizeof map), CACHEKIT_EDESERIALIZE);
    assert_rc(cachekit_envelope_unwrap(&out, NULL, str, sizeof str), CACHEKIT_EDESERIALIZE);
    assert_rc(cachekit_envelope_unwrap(&out, NULL, reserved, sizeof reserved), CACHEKIT_EDESERIALIZE);
    assert_rc(cachekit_envelope_unwrap(&out, NULL, "", 0), CACHEKIT_EDESERIALIZE);

    real_envelope(&e, "hello", 5);
    /* Wrong arity: 3 and 5 elements. */
    encode_envelope(&b, &e, 0);
    b.p[0] = 0x93;
    assert_rc(cachekit_envelope_unwrap(&out, NULL, b.p, b.n - 8), CACHEKIT_EDESERIALIZE);
    encode_envelope(&b, &e, 0);
    b.p[0] = 0x95;
    bytes_byte(&b, 0xc0);
    assert_rc(cachekit_envelope_unwrap(&out, NULL, b.p, b.n), CACHEKIT_EDESERIALIZE);
    /* Trailing bytes after the envelope. */
    encode_envelope(&b, &e, 0);
    bytes_byte(&b, 0x00);
    assert_rc(cachekit_envelope_unwrap(&out, NULL, b.p, b.n), CACHEKIT_EDESERIALIZE);

    /* Legacy array form with an element above 255. */
    b.n = 0;
    mp_array(&b, 4);
    mp_array(&b, e.compressed.n);
    for (i = 0; i < e.compressed.n; ++i) mp_uint(&b, i == 1 ? 256 : e.compressed.p[i]);
    mp_array(&b, 8);
    for (i = 0; i < 8; ++i) mp_uint(&b, e.checksum[i]);
    mp_uint(&b, e.original_size);
    mp_str(&b, "msgpack", 7);
    assert_rc(cachekit_envelope_unwrap(&out, NULL, b.p, b.n), CACHEKIT_EDESERIALIZE);

    /* original_size above u32 (and so above every limit): a type error. */
    e.original_size = 0x100000000ULL;
    encode_envelope(&b, &e, 0);
    assert_rc(cachekit_envelope_unwrap(&out, NULL, b.p, b.n), CACHEKIT_EDESERIALIZE);
    e.original_size = 5;

    /* Checksum of 7 elements; a checksum element above 255; a format that is
     * not a string; compressed data as a str; a negative original_size. */
    b.n = 0;
    mp_array(&b, 4);
    mp_bin(&b, e.compressed.p, e.compressed.n);
    mp_array(&b, 7);
    for (i = 0; i < 7; ++i) mp_uint(&b, e.checksum[i]);
    mp_uint(&b, 5);
    mp_str(&b, "msgpack", 7);
    assert_rc(cachekit_envelope_unwrap(&out, NULL, b.p, b.n), CACHEKIT_EDESERIALIZE);

    b.n = 0;
    mp_array(&b, 4);
    mp_bin(&b, e.compressed.p, e.compressed.n);
    mp_array(&b, 8);
    for (i = 0; i < 8; ++i) mp_uint(&b, i == 3 ? 300 : e.checksum[i]);
    mp_uint(&b, 5);
    mp_str(&b, "msgpack", 7);
    assert_rc(cachekit_envelope_unwrap(&out, NULL, b.p, b.n), CACHEKIT_EDESERIALIZE);

    b.n = 0;
    mp_array(&b, 4);
    mp_bin(&b, e.compressed.p, e.compressed.n);
    mp_array(&b, 8);
    for (i = 0; i < 8; ++i) mp_uint(&b, e.checksum[i]);
    mp_uint(&b, 5);
    mp_uint(&b, 7);
    assert_rc(cachekit_envelope_unwrap(&out, NULL, b.p, b.n), CACHEKIT_EDESERIALIZE);

    b.n = 0;
    mp_array(&b, 4);
    mp_str(&b, (const char *)e.compressed.p, e.compressed.n);
    mp_array(&b, 8);
    for (i = 0; i < 8; ++i) mp_uint(&b, e.checksum[i]);
    mp_uint(&b, 5);
    mp_str(&b, "msgpack", 7);
    assert_rc(cachekit_envelope_unwrap(&out, NULL, b.p, b.n), CACHEKIT_EDESERIALIZE);

    b.n = 0;
    mp_array(&b, 4);
    mp_bin(&b, e.compressed.p, e.compressed.n);
    mp_array(&b, 8);
    for (i = 0; i < 8; ++i) mp_uint(&b, e.checksum[i]);
    mp_int(&b, -5);
    mp_str(&b, "msgpack", 7);
    assert_rc(cachekit_envelope_unwrap(&out, NULL, b.p, b.n), CACHEKIT_EDESERIALIZE);

    bytes_free(&b);
    bytes_free(&e.compressed);
    cachekit_buf_dispose(&out);
}

/* Over 512 MiB: an anonymous read-only mapping costs address space, not
 * memory (untouched pages are the shared zero page). */
static void test_over_512_mib(void **state) {
    size_t len = (size_t)MAX_SIZE + 1;
    void *big;
    cachekit_buf out = CACHEKIT_BUF_INIT;
    (void)state;
    big = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (big == MAP_FAILED) skip();
    assert_rc(cachekit_envelope_unwrap(&out, NULL, big, len), CACHEKIT_ETOOBIG);
    assert_rc(cachekit_envelope_wrap(&out, big, len, "msgpack"), CACHEKIT_ETOOBIG);
    assert_rc(cachekit_container_v2_wrap(&out, big, len, CACHEKIT_V2_METHOD_NONE), CACHEKIT_ETOOBIG);
    munmap(big, len);
    cachekit_buf_dispose(&out);
}

/* ---- Ciphertext ------------------------------------------------------------ */

static void test_short_ciphertext(void **state) {
    static const char hex[] = "6161616161616161616161616161616161616161616161616161616161616161";
    unsigned char master[CACHEKIT_KEY_SIZE];
    cachekit_derived_keys keys;
    cachekit_keyring *ring = NULL;
    cachekit_buf out = CACHEKIT_BUF_INIT;
    uint8_t ct[CACHEKIT_NONCE_SIZE + CACHEKIT_TAG_SIZE];
    size_t n;
    (void)state;
    memset(ct, 0x5a, sizeof ct);
    assert_ok(cachekit_master_key_from_hex(master, hex, 64));
    assert_ok(cachekit_crypto_derive(&keys, master, 32, NULL));
    assert_ok(cachekit_keyring_new(&ring, hex, NULL));
    for (n = 0; n < sizeof ct; ++n) {
        assert_rc(cachekit_crypto_decrypt(&out, keys.encryption, "a", 1, ct, n), CACHEKIT_ECIPHERTEXT);
        assert_rc(cachekit_keyring_decrypt(ring, &out, NULL, NULL, NULL, "a", 1, ct, n), CACHEKIT_ECIPHERTEXT);
        assert_rc(cachekit_keyring_decrypt(ring, &out, NULL, NULL, keys.fingerprint, "a", 1, ct, n),
                  CACHEKIT_ECIPHERTEXT);
    }
    /* 28 bytes is long enough to be judged: the tag does not verify. */
    assert_rc(cachekit_crypto_decrypt(&out, keys.encryption, "a", 1, ct, sizeof ct), CACHEKIT_EAUTH);
    assert_rc(cachekit_keyring_decrypt(ring, &out, NULL, NULL, NULL, "a", 1, ct, sizeof ct), CACHEKIT_EAUTH);
    assert_rc(cachekit_keyring_decrypt(ring, &out, NULL, NULL, keys.fingerprint, "a", 1, ct, sizeof ct),
              CACHEKIT_EAUTH);
    cachekit_keyring_free(ring);
    cachekit_buf_dispose(&out);
}

/* ---- Keys ------------------------------------------------------------------- */

static void test_interop_args_not_array(void **state) {
    static const uint8_t not_arrays[][4] = {
        {0x2a}, {0x80}, {0xa1, 'x'}, {0xc0}, {0xc4, 0x01, 0x00}, {0xcb, 0x40, 0x00, 0x00},
    };
    static const size_t lens[] = {1, 1, 2, 1, 3, 4};
    cachekit_buf out = CACHEKIT_BUF_INIT;
    size_t i;
    (void)state;
    for (i = 0; i < sizeof lens / sizeof lens[0]; ++i) {
        int rc = cachekit_key_interop(&out, NULL, "users", "get_user", not_arrays[i], lens[i]);
        if (i == 5) {
            assert_int_not_equal(rc, CACHEKIT_OK); /* a truncated float64 */
            continue;
        }
        print_message("args %02x...: %s\n", not_arrays[i][0], cachekit_error_name(rc));
        assert_int_not_equal(rc, CACHEKIT_OK);
        assert_int_not_equal(rc, CACHEKIT_EINTERNAL);
        assert_rc(rc, CACHEKIT_EINVAL);
    }
    cachekit_buf_dispose(&out);
}

static void test_auto_key_utf8(void **state) {
    static const uint8_t args[] = {0x92, 0x91, 0x2a, 0x80};
    cachekit_buf out = CACHEKIT_BUF_INIT;
    (void)state;
    assert_einval(cachekit_key_auto(&out, "bad\xff", "m", "f", args, sizeof args, 1, "std"));
    assert_einval(cachekit_key_auto(&out, "bad\xc3", "m", "f", args, sizeof args, 1, "std"));      /* cut sequence */
    assert_einval(cachekit_key_auto(&out, "\xed\xa0\x80", "m", "f", args, sizeof args, 1, "std")); /* surrogate */
    assert_einval(cachekit_key_auto(&out, "\xc0\xaf", "m", "f", args, sizeof args, 1, "std"));     /* overlong */
    assert_einval(cachekit_key_auto(&out, "ns", "m\xff", "f", args, sizeof args, 1, "std"));
    assert_einval(cachekit_key_auto(&out, "ns", "m", "f", args, sizeof args, 1, "x\xff"));
    assert_ok(cachekit_key_auto(&out, "caf\xc3\xa9", "m", "f", args, sizeof args, 1, "std"));
    assert_true(strncmp(out.ptr, "ns:caf\xc3\xa9:func:m.f:args:", 22) == 0);
    /* Space, \n and \r become '_'. */
    assert_ok(cachekit_key_auto(&out, "a b\nc\rd", "m", "f", args, sizeof args, 1, "std"));
    assert_true(strncmp(out.ptr, "ns:a_b_c_d:func:", 16) == 0);
    cachekit_buf_dispose(&out);
}

static size_t code_points(const char *s, size_t n) {
    size_t i, count = 0;
    for (i = 0; i < n; ++i)
        if (((uint8_t)s[i] & 0xc0) != 0x80) ++count;
    return count;
}

/* The auto key for namespace = `unit` x count, and the key it would be
 * without shortening. */
static void long_key(const char *unit, size_t count, cachekit_buf *key, bytes *full) {
    static const uint8_t args[] = {0x92, 0x91, 0x2a, 0x80};
    cachekit_buf plain = CACHEKIT_BUF_INIT;
    bytes ns = {0};
    size_t i;
    const char *h;
    for (i = 0; i < count; ++i) bytes_put(&ns, unit, strlen(unit));
    bytes_byte(&ns, 0);
    assert_ok(cachekit_key_auto(key, (const char *)ns.p, "m", "f", args, sizeof args, 1, "std"));
    /* The un-shortened key, from the hash of the namespace-less key. */
    assert_ok(cachekit_key_auto(&plain, NULL, "m", "f", args, sizeof args, 1, "std"));
    h = strstr(plain.ptr, ":args:");
    assert_non_null(h);
    full->n = 0;
    bytes_put(full, "ns:", 3);
    bytes_put(full, ns.p, ns.n - 1);
    bytes_byte(full, ':');
    bytes_put(full, plain.ptr, plain.size);
    cachekit_buf_dispose(&plain);
    bytes_free(&ns);
}

static void check_long_key(const char *unit, size_t count) {
    cachekit_buf key = CACHEKIT_BUF_INIT;
    bytes full = {0};
    unsigned char digest[32];
    char hex[65];
    size_t i, prefix_bytes, seen;
    long_key(unit, count, &key, &full);
    assert_true(code_points((const char *)full.p, full.n) > 250);
    /* key[:50] + ":" + blake2b256hex(utf8(key))[:32], sliced by code points. */
    assert_int_equal(code_points(key.ptr, key.size), 50 + 1 + 32);
    for (prefix_bytes = 0, seen = 0; prefix_bytes < full.n; ++prefix_bytes) {
        if ((full.p[prefix_bytes] & 0xc0) != 0x80) {
            if (seen == 50) break;
            ++seen;
        }
    }
    assert_int_equal(key.size, prefix_bytes + 1 + 32);
    assert_memory_equal(key.ptr, full.p, prefix_bytes);
    assert_int_equal(key.ptr[prefix_bytes], ':');
    crypto_generichash(digest, sizeof digest, full.p, full.n, NULL, 0);
    for (i = 0; i < 32; ++i) snprintf(hex + 2 * i, 3, "%02x", digest[i]);
    assert_memory_equal(key.ptr + prefix_bytes + 1, hex, 32);
    assert_int_equal(key.ptr[key.size], '\0');
    cachekit_buf_dispose(&key);
    bytes_free(&full);
}

static void test_long_key_shortened(void **state) {
    cachekit_buf key = CACHEKIT_BUF_INIT;
    bytes full = {0};
    (void)state;
    assert_true(sodium_init() >= 0);
    /* "ns:" + n + ":func:m.f:args:" + 64 + ":1s" = n + 85 code points. */
    long_key("a", 165, &key, &full); /* exactly 250: kept whole */
    assert_int_equal(code_points((const char *)full.p, full.n), 250);
    assert_int_equal(key.size, full.n);
    assert_memory_equal(key.ptr, full.p, full.n);
    cachekit_buf_dispose(&key);
    bytes_free(&full);
    check_long_key("a", 166);            /* 251: shortened */
    check_long_key("\xc3\xa9", 166);     /* 2-byte characters: sliced by code points */
    check_long_key("\xc3\xa9", 300);
    check_long_key("\xe2\x9c\x93", 200); /* 3-byte */
    check_long_key("\xf0\x9f\x98\x80", 200); /* 4-byte */
    check_long_key("x\xf0\x9f\x98\x80", 100); /* odd alignment */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_real_envelope_roundtrip),
        cmocka_unit_test(test_ratio_bomb),
        cmocka_unit_test(test_zero_length_compressed),
        cmocka_unit_test(test_original_size_too_big),
        cmocka_unit_test(test_corrupt_lz4),
        cmocka_unit_test(test_checksum_mismatch),
        cmocka_unit_test(test_short_output),
        cmocka_unit_test(test_not_an_envelope),
        cmocka_unit_test(test_over_512_mib),
        cmocka_unit_test(test_short_ciphertext),
        cmocka_unit_test(test_interop_args_not_array),
        cmocka_unit_test(test_auto_key_utf8),
        cmocka_unit_test(test_long_key_shortened),
    };
    return cmocka_run_group_tests_name("hostile_inputs", tests, NULL, NULL);
}
