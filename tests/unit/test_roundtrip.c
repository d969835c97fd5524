/* Round-trip properties over a few hundred random inputs from a fixed-seed
 * RNG (the seed is printed; a failure prints the input):
 * - canonicalising twice equals canonicalising once (ARGS, VALUE and
 *   AUTO_ARGS profiles), on random documents written in random, often
 *   non-shortest, encodings; an interop key does not depend on the encoding;
 * - envelope and interop/v2 wrap then unwrap is the identity;
 * - encrypt then decrypt is the identity with the same AAD, and
 *   AuthenticationFailed with any other AAD. */
#include <math.h>

#include "unit_support.h"

#define SEED 0x5eed0c0ffee12345ULL
#define ROUNDS 300

static void print_hex(const char *what, const void *p, size_t n) {
    size_t i;
    print_message("%s (%zu bytes): ", what, n);
    for (i = 0; i < n && i < 512; ++i) print_message("%02x", ((const uint8_t *)p)[i]);
    print_message("%s\n", n > 512 ? "..." : "");
}

/* ---- Random MessagePack documents ---------------------------------------- */

static void put_utf8(bytes *b, uint32_t cp) {
    if (cp < 0x80) {
        bytes_byte(b, (uint8_t)cp);
    } else if (cp < 0x800) {
        bytes_byte(b, (uint8_t)(0xc0 | (cp >> 6)));
        bytes_byte(b, (uint8_t)(0x80 | (cp & 0x3f)));
    } else if (cp < 0x10000) {
        bytes_byte(b, (uint8_t)(0xe0 | (cp >> 12)));
        bytes_byte(b, (uint8_t)(0x80 | ((cp >> 6) & 0x3f)));
        bytes_byte(b, (uint8_t)(0x80 | (cp & 0x3f)));
    } else {
        bytes_byte(b, (uint8_t)(0xf0 | (cp >> 18)));
        bytes_byte(b, (uint8_t)(0x80 | ((cp >> 12) & 0x3f)));
        bytes_byte(b, (uint8_t)(0x80 | ((cp >> 6) & 0x3f)));
        bytes_byte(b, (uint8_t)(0x80 | (cp & 0x3f)));
    }
}

/* Valid UTF-8 text of `chars` code points from every length class. */
static void random_text(rng *r, bytes *t, size_t chars) {
    size_t i;
    for (i = 0; i < chars; ++i) {
        uint32_t cp;
        switch (rng_below(r, 6)) {
        case 0: cp = 0x80 + (uint32_t)rng_below(r, 0x800 - 0x80); break;
        case 1:
            do cp = 0x800 + (uint32_t)rng_below(r, 0x10000 - 0x800);
            while (cp >= 0xd800 && cp <= 0xdfff);
            break;
        case 2: cp = 0x10000 + (uint32_t)rng_below(r, 0x110000 - 0x10000); break;
        default: cp = 0x20 + (uint32_t)rng_below(r, 0x5f); break;
        }
        put_utf8(t, cp);
    }
}

/* A str header, shortest or (one time in three) wider than needed. */
static void gen_str_bytes(rng *r, bytes *b, const uint8_t *s, size_t n) {
    if (rng_below(r, 3) == 0 && n <= 0xff) {
        if (rng_below(r, 2)) { bytes_byte(b, 0xd9); bytes_be(b, n, 1); }
        else { bytes_byte(b, 0xda); bytes_be(b, n, 2); }
        bytes_put(b, s, n);
    } else {
        mp_str(b, (const char *)s, n);
    }
}

static void gen_uint(rng *r, bytes *b, uint64_t v) {
    /* Any width that holds v, not only the shortest. */
    int k = (int)rng_below(r, 4);
    if (k == 0 && v <= 0xff) { bytes_byte(b, 0xcc); bytes_be(b, v, 1); }
    else if (k == 1 && v <= 0xffff) { bytes_byte(b, 0xcd); bytes_be(b, v, 2); }
    else if (k == 2 && v <= 0xffffffffu) { bytes_byte(b, 0xce); bytes_be(b, v, 4); }
    else if (k == 3) { bytes_byte(b, 0xcf); bytes_be(b, v, 8); }
    else mp_uint(b, v);
}

static void gen_value(rng *r, bytes *b, int depth);

static void gen_container(rng *r, bytes *b, int depth, int map) {
    size_t n = rng_below(r, 5), i;
    if (rng_below(r, 10) == 0) n = 15 + rng_below(r, 5); /* around the fix/16 boundary */
    if (rng_below(r, 4) == 0) { /* a wider header than needed */
        bytes_byte(b, map ? 0xde : 0xdc);
        bytes_be(b, n, 2);
    } else if (map) {
        mp_map(b, n);
    } else {
        mp_array(b, n);
    }
    for (i = 0; i < n; ++i) {
        if (map) {
            /* Unique string keys: "k<i>_" + random text. */
            bytes key = {0};
            char prefix[24];
            int len = snprintf(prefix, sizeof prefix, "k%zu_", i);
            bytes_put(&key, prefix, (size_t)len);
            random_text(r, &key, rng_below(r, 4));
            gen_str_bytes(r, b, key.p, key.n);
            bytes_free(&key);
        }
        gen_value(r, b, depth + 1);
    }
}

static double random_double(rng *r) {
    double d;
    uint64_t bits;
    switch (rng_below(r, 4)) {
    case 0: return (double)(int64_t)(rng_next(r) >> rng_below(r, 64)) * (rng_below(r, 2) ? 1.0 : -1.0); /* integral */
    case 1: return rng_below(r, 2) ? 0.0 : -0.0;
    case 2: return ((double)rng_below(r, 2000000) - 1000000.0) / 1024.0;
    default:
        do {
            bits = rng_next(r);
            memcpy(&d, &bits, 8);
        } while (!isfinite(d));
        return d;
    }
}

static void gen_value(rng *r, bytes *b, int depth) {
    int kind = (int)rng_below(r, depth >= 4 ? 9 : 11);
    switch (kind) {
    case 0: bytes_byte(b, 0xc0); break;
    case 1: bytes_byte(b, rng_below(r, 2) ? 0xc3 : 0xc2); break;
    case 2: gen_uint(r, b, rng_next(r) >> rng_below(r, 64)); break;
    case 3: { /* negative ints, sometimes wider than needed */
        int64_t v = -(int64_t)(rng_next(r) >> (1 + rng_below(r, 63))) - 1;
        if (rng_below(r, 3) == 0) { bytes_byte(b, 0xd3); bytes_be(b, (uint64_t)v, 8); }
        else mp_int(b, v);
        break;
    }
    case 4: mp_f64(b, random_double(r)); break;
    case 5: { /* float32 (readers widen it) */
        float f = (float)(((double)rng_below(r, 20000) - 10000.0) / 16.0);
        uint32_t bits;
        memcpy(&bits, &f, 4);
        bytes_byte(b, 0xca);
        bytes_be(b, bits, 4);
        break;
    }
    case 6: case 7: {
        bytes t = {0};
        random_text(r, &t, rng_below(r, 10) == 0 ? 40 + rng_below(r, 300) : rng_below(r, 12));
        gen_str_bytes(r, b, t.p, t.n);
        bytes_free(&t);
        break;
    }
    case 8: {
        uint8_t buf[300];
        size_t n = rng_below(r, 8) == 0 ? rng_below(r, sizeof buf) : rng_below(r, 16);
        rng_fill(r, buf, n);
        if (rng_below(r, 4) == 0) { bytes_byte(b, 0xc5); bytes_be(b, n, 2); bytes_put(b, buf, n); }
        else mp_bin(b, buf, n);
        break;
    }
    case 9: gen_container(r, b, depth, 0); break;
    default: gen_container(r, b, depth, 1); break;
    }
}

/* ---- Properties ------------------------------------------------------------ */

static void test_canonical_idempotent(void **state) {
    static const int profiles[] = {CACHEKIT_PROFILE_ARGS, CACHEKIT_PROFILE_VALUE, CACHEKIT_PROFILE_AUTO_ARGS};
    rng r = {SEED};
    cachekit_buf once = CACHEKIT_BUF_INIT, twice = CACHEKIT_BUF_INIT, key1 = CACHEKIT_BUF_INIT,
                 key2 = CACHEKIT_BUF_INIT, canon = CACHEKIT_BUF_INIT;
    bytes doc = {0}, args = {0};
    int round, p, changed = 0;
    (void)state;
    print_message("seed %#llx, %d documents\n", (unsigned long long)SEED, ROUNDS);
    for (round = 0; round < ROUNDS; ++round) {
        doc.n = 0;
        gen_value(&r, &doc, 0);
        assert_ok(cachekit_msgpack_check(doc.p, doc.n, 0));
        for (p = 0; p < 3; ++p) {
            int rc = cachekit_msgpack_canonical(&once, doc.p, doc.n, profiles[p]);
            if (rc != CACHEKIT_OK) print_hex("document", doc.p, doc.n);
            assert_rc(rc, CACHEKIT_OK);
            if (once.size != doc.n || memcmp(once.ptr, doc.p, doc.n) != 0) ++changed;
            assert_ok(cachekit_msgpack_check(once.ptr, once.size, 0));
            assert_ok(cachekit_msgpack_canonical(&twice, once.ptr, once.size, profiles[p]));
            if (twice.size != once.size || memcmp(twice.ptr, once.ptr, once.size) != 0) {
                print_message("profile %d, round %d\n", profiles[p], round);
                print_hex("document", doc.p, doc.n);
                print_hex("once", once.ptr, once.size);
                print_hex("twice", twice.ptr, twice.size);
                fail_msg("canonical(canonical(x)) != canonical(x)");
            }
        }
        /* The interop key of [doc] does not depend on how doc was encoded. */
        args.n = 0;
        mp_array(&args, 1);
        bytes_put(&args, doc.p, doc.n);
        assert_ok(cachekit_key_interop(&key1, &canon, "t", "op", args.p, args.n));
        assert_ok(cachekit_msgpack_canonical(&once, args.p, args.n, CACHEKIT_PROFILE_ARGS));
        assert_int_equal(canon.size, once.size);
        assert_memory_equal(canon.ptr, once.ptr, once.size);
        assert_ok(cachekit_key_interop(&key2, NULL, "t", "op", canon.ptr, canon.size));
        assert_string_equal(key1.ptr, key2.ptr);
    }
    print_message("%d of %d canonical forms differed from their input\n", changed, 3 * ROUNDS);
    assert_true(changed > ROUNDS); /* the generator really exercises re-encoding */
    cachekit_buf_dispose(&once);
    cachekit_buf_dispose(&twice);
    cachekit_buf_dispose(&key1);
    cachekit_buf_dispose(&key2);
    cachekit_buf_dispose(&canon);
    bytes_free(&doc);
    bytes_free(&args);
}

/* Random bytes: runs (compressible) and noise, 0..20000 bytes. */
static void random_payload(rng *r, bytes *b) {
    size_t target = rng_below(r, 10) == 0 ? 0 : (size_t)rng_below(r, rng_below(r, 2) ? 300 : 20000);
    b->n = 0;
    while (b->n < target) {
        uint8_t chunk[64];
        size_t n = 1 + rng_below(r, sizeof chunk), i;
        if (n > target - b->n) n = target - b->n;
        if (rng_below(r, 2)) {
            uint8_t v = (uint8_t)rng_next(r);
            for (i = 0; i < n; ++i) chunk[i] = v;
        } else {
            rng_fill(r, chunk, n);
        }
        bytes_put(b, chunk, n);
    }
}

static void test_wrap_unwrap(void **state) {
    static const char *const formats[] = {"msgpack", "orjson", "arrow", "x"};
    rng r = {SEED ^ 1};
    cachekit_buf env = CACHEKIT_BUF_INIT, out = CACHEKIT_BUF_INIT, fmt = CACHEKIT_BUF_INIT;
    bytes data = {0}, doc = {0};
    int round, method;
    (void)state;
    for (round = 0; round < ROUNDS; ++round) {
        const char *format = formats[rng_below(&r, 4)];
        random_payload(&r, &data);
        assert_ok(cachekit_envelope_wrap(&env, data.p, data.n, format));
        assert_ok(cachekit_envelope_unwrap(&out, &fmt, env.ptr, env.size));
        if (out.size != data.n || (data.n && memcmp(out.ptr, data.p, data.n) != 0)) {
            print_hex("payload", data.p, data.n);
            fail_msg("envelope round %d did not round-trip", round);
        }
        assert_string_equal(fmt.ptr, format);

        doc.n = 0;
        gen_value(&r, &doc, 0);
        for (method = CACHEKIT_V2_METHOD_NONE; method <= CACHEKIT_V2_METHOD_LZ4; ++method) {
            assert_ok(cachekit_container_v2_wrap(&env, doc.p, doc.n, method));
            assert_ok(cachekit_container_v2_unwrap(&out, env.ptr, env.size));
            if (out.size != doc.n || memcmp(out.ptr, doc.p, doc.n) != 0) {
                print_hex("value", doc.p, doc.n);
                fail_msg("v2 method %d round %d did not round-trip", method, round);
            }
        }
    }
    cachekit_buf_dispose(&env);
    cachekit_buf_dispose(&out);
    cachekit_buf_dispose(&fmt);
    bytes_free(&data);
    bytes_free(&doc);
}

static void test_encrypt_decrypt(void **state) {
    rng r = {SEED ^ 2};
    cachekit_buf ct = CACHEKIT_BUF_INIT, pt = CACHEKIT_BUF_INIT;
    bytes plain = {0};
    uint8_t key[CACHEKIT_KEY_SIZE], aad[80], other[81], nonce[CACHEKIT_NONCE_SIZE];
    cachekit_keyring *ring = NULL;
    int round;
    (void)state;
    if (!cachekit_crypto_available()) skip();
    rng_fill(&r, key, sizeof key);
    assert_ok(cachekit_keyring_new_raw(&ring, key, sizeof key, NULL, 0));
    for (round = 0; round < ROUNDS; ++round) {
        size_t aad_len = rng_below(&r, sizeof aad), i;
        int how;
        rng_fill(&r, key, sizeof key);
        rng_fill(&r, aad, aad_len);
        rng_fill(&r, nonce, sizeof nonce);
        random_payload(&r, &plain);
        assert_ok(cachekit_crypto_encrypt(&ct, key, aad, aad_len, plain.p, plain.n, rng_below(&r, 2) ? nonce : NULL));
        assert_int_equal(ct.size, plain.n + CACHEKIT_NONCE_SIZE + CACHEKIT_TAG_SIZE);
        assert_ok(cachekit_crypto_decrypt(&pt, key, aad, aad_len, ct.ptr, ct.size));
        assert_int_equal(pt.size, plain.n);
        if (plain.n) assert_memory_equal(pt.ptr, plain.p, plain.n);

        /* Any other AAD: one bit flipped, one byte more, or one byte less. */
        memcpy(other, aad, aad_len);
        how = (int)rng_below(&r, 3);
        if (how == 0 && aad_len > 0) {
            i = rng_below(&r, aad_len);
            other[i] ^= (uint8_t)(1u << rng_below(&r, 8));
            assert_rc(cachekit_crypto_decrypt(&pt, key, other, aad_len, ct.ptr, ct.size), CACHEKIT_EAUTH);
        } else if (how == 1 || aad_len == 0) {
            other[aad_len] = (uint8_t)rng_next(&r);
            assert_rc(cachekit_crypto_decrypt(&pt, key, other, aad_len + 1, ct.ptr, ct.size), CACHEKIT_EAUTH);
        } else {
            assert_rc(cachekit_crypto_decrypt(&pt, key, other, aad_len - 1, ct.ptr, ct.size), CACHEKIT_EAUTH);
        }

        /* The keyring (counter nonces) too. */
        assert_ok(cachekit_keyring_encrypt(ring, &ct, "tenant-rt", aad, aad_len, plain.p, plain.n));
        assert_ok(cachekit_keyring_decrypt(ring, &pt, NULL, "tenant-rt", NULL, aad, aad_len, ct.ptr, ct.size));
        assert_int_equal(pt.size, plain.n);
        if (plain.n) assert_memory_equal(pt.ptr, plain.p, plain.n);
        if (aad_len > 0) {
            memcpy(other, aad, aad_len);
            other[rng_below(&r, aad_len)] ^= 0x80;
            assert_rc(cachekit_keyring_decrypt(ring, &pt, NULL, "tenant-rt", NULL, other, aad_len, ct.ptr, ct.size),
                      CACHEKIT_EAUTH);
        }
    }
    cachekit_keyring_free(ring);
    cachekit_buf_dispose(&ct);
    cachekit_buf_dispose(&pt);
    bytes_free(&plain);
}

/* Tenants used in turn: the keyring remembers the last tenant it looked up
 * (the one-tenant fast path), so a switch must never seal or open with the
 * previous tenant's key. Each ciphertext opens for its own tenant only. */
static void test_keyring_tenants_in_turn(void **state) {
    (void)state;
    static const char *const tenants[] = {"tenant-a", "tenant-b", "tenant-a-", "tenant-c"};
    enum { kTenants = 4 };
    cachekit_keyring *ring = NULL;
    cachekit_buf ct[kTenants], pt = CACHEKIT_BUF_INIT;
    const char aad[] = "aad";
    int round, t, u;
    assert_ok(cachekit_keyring_new(&ring, "6161616161616161616161616161616161616161616161616161616161616161", NULL));
    for (t = 0; t < kTenants; ++t) ct[t] = (cachekit_buf)CACHEKIT_BUF_INIT;
    for (round = 0; round < 3; ++round) {
        for (t = 0; t < kTenants; ++t)
            assert_ok(cachekit_keyring_encrypt(ring, &ct[t], tenants[t], aad, 3, tenants[t], strlen(tenants[t])));
        for (t = 0; t < kTenants; ++t) {
            for (u = 0; u < kTenants; ++u) {
                const int rc = cachekit_keyring_decrypt(ring, &pt, NULL, tenants[u], NULL, aad, 3, ct[t].ptr, ct[t].size);
                if (u != t) {
                    assert_rc(rc, CACHEKIT_EAUTH);
                    continue;
                }
                assert_ok(rc);
                assert_int_equal(pt.size, strlen(tenants[t]));
                assert_memory_equal(pt.ptr, tenants[t], pt.size);
            }
        }
    }
    for (t = 0; t < kTenants; ++t) cachekit_buf_dispose(&ct[t]);
    cachekit_buf_dispose(&pt);
    cachekit_keyring_free(ring);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_canonical_idempotent),
        cmocka_unit_test(test_wrap_unwrap),
        cmocka_unit_test(test_encrypt_decrypt),
        cmocka_unit_test(test_keyring_tenants_in_turn),
    };
    return cmocka_run_group_tests_name("roundtrip", tests, NULL, NULL);
}
