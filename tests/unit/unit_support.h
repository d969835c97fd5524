/* Small helpers of the C unit tests: status assertions that say which error
 * came back, a growable byte string, a fixed-seed RNG and a MessagePack
 * writer for building inputs. Public API only. */
#ifndef CACHEKIT_UNIT_SUPPORT_H
#define CACHEKIT_UNIT_SUPPORT_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <cachekit/cachekit.h>

/* `call` must return `want`; on a mismatch print both names and the last
 * error message. */
#define assert_rc(call, want)                                                                            \
    do {                                                                                                 \
        int rc_ = (call);                                                                                \
        int want_ = (want);                                                                              \
        if (rc_ != want_)                                                                                \
            print_error("%s:%d: %s\n  returned %s (%d) \"%s\", expected %s (%d)\n", __FILE__, __LINE__, \
                        #call, cachekit_error_name(rc_), rc_, rc_ ? cachekit_error_last_message() : "",   \
                        cachekit_error_name(want_), want_);                                               \
        assert_int_equal(rc_, want_);                                                                     \
    } while (0)

#define assert_ok(call) assert_rc(call, CACHEKIT_OK)

/* `call` must fail with CACHEKIT_EINVAL and leave a non-empty message. */
#define assert_einval(call)                                                  \
    do {                                                                     \
        cachekit_error_clear();                                              \
        assert_rc(call, CACHEKIT_EINVAL);                                    \
        assert_int_equal(cachekit_error_last_code(), CACHEKIT_EINVAL);       \
        assert_true(cachekit_error_last_message()[0] != '\0');               \
    } while (0)

/* ---- A growable byte string ------------------------------------------ */

typedef struct bytes {
    uint8_t *p;
    size_t n;
    size_t cap;
} bytes;

static inline void bytes_put(bytes *b, const void *data, size_t n) {
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->n + n) cap *= 2;
        b->p = (uint8_t *)realloc(b->p, cap);
        assert_non_null(b->p);
        b->cap = cap;
    }
    if (n) memcpy(b->p + b->n, data, n);
    b->n += n;
}

static inline void bytes_byte(bytes *b, uint8_t v) { bytes_put(b, &v, 1); }

static inline void bytes_be(bytes *b, uint64_t v, int n) {
    int i;
    for (i = n - 1; i >= 0; --i) bytes_byte(b, (uint8_t)(v >> (8 * i)));
}

static inline void bytes_free(bytes *b) {
    free(b->p);
    b->p = NULL;
    b->n = b->cap = 0;
}

/* ---- MessagePack writing (shortest forms unless said otherwise) -------- */

static inline void mp_uint(bytes *b, uint64_t v) {
    if (v <= 0x7f) bytes_byte(b, (uint8_t)v);
    else if (v <= 0xff) { bytes_byte(b, 0xcc); bytes_be(b, v, 1); }
    else if (v <= 0xffff) { bytes_byte(b, 0xcd); bytes_be(b, v, 2); }
    else if (v <= 0xffffffffu) { bytes_byte(b, 0xce); bytes_be(b, v, 4); }
    else { bytes_byte(b, 0xcf); bytes_be(b, v, 8); }
}

static inline void mp_int(bytes *b, int64_t v) {
    if (v >= 0) { mp_uint(b, (uint64_t)v); return; }
    if (v >= -32) bytes_byte(b, (uint8_t)(int8_t)v);
    else if (v >= -128) { bytes_byte(b, 0xd0); bytes_be(b, (uint64_t)v, 1); }
    else if (v >= -32768) { bytes_byte(b, 0xd1); bytes_be(b, (uint64_t)v, 2); }
    else if (v >= -2147483647 - 1) { bytes_byte(b, 0xd2); bytes_be(b, (uint64_t)v, 4); }
    else { bytes_byte(b, 0xd3); bytes_be(b, (uint64_t)v, 8); }
}

static inline void mp_f64(bytes *b, double d) {
    uint64_t bits;
    memcpy(&bits, &d, 8);
    bytes_byte(b, 0xcb);
    bytes_be(b, bits, 8);
}

static inline void mp_str(bytes *b, const char *s, size_t n) {
    if (n < 32) bytes_byte(b, (uint8_t)(0xa0 | n));
    else if (n <= 0xff) { bytes_byte(b, 0xd9); bytes_be(b, n, 1); }
    else if (n <= 0xffff) { bytes_byte(b, 0xda); bytes_be(b, n, 2); }
    else { bytes_byte(b, 0xdb); bytes_be(b, n, 4); }
    bytes_put(b, s, n);
}

static inline void mp_bin(bytes *b, const void *p, size_t n) {
    if (n <= 0xff) { bytes_byte(b, 0xc4); bytes_be(b, n, 1); }
    else if (n <= 0xffff) { bytes_byte(b, 0xc5); bytes_be(b, n, 2); }
    else { bytes_byte(b, 0xc6); bytes_be(b, n, 4); }
    bytes_put(b, p, n);
}

static inline void mp_array(bytes *b, size_t n) {
    if (n < 16) bytes_byte(b, (uint8_t)(0x90 | n));
    else if (n <= 0xffff) { bytes_byte(b, 0xdc); bytes_be(b, n, 2); }
    else { bytes_byte(b, 0xdd); bytes_be(b, n, 4); }
}

static inline void mp_map(bytes *b, size_t n) {
    if (n < 16) bytes_byte(b, (uint8_t)(0x80 | n));
    else if (n <= 0xffff) { bytes_byte(b, 0xde); bytes_be(b, n, 2); }
    else { bytes_byte(b, 0xdf); bytes_be(b, n, 4); }
}

/* ---- A fixed-seed RNG (xorshift64*) ----------------------------------- */

typedef struct rng {
    uint64_t s;
} rng;

static inline uint64_t rng_next(rng *r) {
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return r->s * 0x2545F4914F6CDD1DULL;
}

/* Uniform-ish in [0, n). */
static inline uint64_t rng_below(rng *r, uint64_t n) { return n ? rng_next(r) % n : 0; }

static inline void rng_fill(rng *r, uint8_t *p, size_t n) {
    size_t i;
    for (i = 0; i < n; ++i) p[i] = (uint8_t)rng_next(r);
}

#endif /* CACHEKIT_UNIT_SUPPORT_H */
