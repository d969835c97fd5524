/* The L1 C API through the public header only (compiled as C99): argument
 * validation, error codes and messages, copy-out into a cachekit_buf, TTLs,
 * fill tickets, invalidation and the versioned options/stats structs. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cachekit/cachekit.h"

static cachekit_l1 *make(void) {
    cachekit_l1 *l1 = NULL;
    cachekit_l1_options o = CACHEKIT_L1_OPTIONS_INIT;
    o.max_bytes = CACHEKIT_L1_MIN_MAX_BYTES;
    o.sweep_interval_ms = 0;
    assert_int_equal(cachekit_l1_new(&l1, &o), CACHEKIT_OK);
    assert_non_null(l1);
    return l1;
}

static void test_lifecycle(void **state) {
    (void)state;
    cachekit_l1 *l1 = NULL;
    assert_int_equal(cachekit_l1_new(&l1, NULL), CACHEKIT_OK); /* defaults */
    cachekit_l1_counters st;
    st.struct_size = sizeof st;
    assert_int_equal(cachekit_l1_stats(l1, &st), CACHEKIT_OK);
    assert_int_equal(st.max_bytes, CACHEKIT_L1_DEFAULT_MAX_BYTES);
    assert_int_equal(st.entries, 0);
    cachekit_l1_free(l1);
    cachekit_l1_free(NULL);

    assert_int_equal(cachekit_l1_new(NULL, NULL), CACHEKIT_EINVAL);
    cachekit_l1_options o = CACHEKIT_L1_OPTIONS_INIT;
    o.max_bytes = CACHEKIT_L1_MIN_MAX_BYTES - 1;
    l1 = (cachekit_l1 *)&o; /* must be reset to NULL on failure */
    assert_int_equal(cachekit_l1_new(&l1, &o), CACHEKIT_EINVAL);
    assert_null(l1);
    assert_int_equal(cachekit_error_last_code(), CACHEKIT_EINVAL);
    assert_non_null(strstr(cachekit_error_last_message(), "1 MiB"));
    o = (cachekit_l1_options)CACHEKIT_L1_OPTIONS_INIT;
    o.shards = CACHEKIT_L1_MAX_SHARDS + 1;
    assert_int_equal(cachekit_l1_new(&l1, &o), CACHEKIT_EINVAL);
    o = (cachekit_l1_options)CACHEKIT_L1_OPTIONS_INIT;
    o.struct_size = 0;
    assert_int_equal(cachekit_l1_new(&l1, &o), CACHEKIT_EINVAL);
    o = (cachekit_l1_options)CACHEKIT_L1_OPTIONS_INIT;
    o.flags = 2;
    assert_int_equal(cachekit_l1_new(&l1, &o), CACHEKIT_EINVAL);
    o.flags = CACHEKIT_L1_FLAG_PRECISE_CLOCK;
    assert_int_equal(cachekit_l1_new(&l1, &o), CACHEKIT_OK);
    cachekit_l1_free(l1);
}

static void test_options_init(void **state) {
    (void)state;
    cachekit_l1_options o;
    memset(&o, 0xff, sizeof o);
    assert_int_equal(cachekit_l1_options_init(&o, sizeof o), CACHEKIT_OK);
    assert_int_equal(o.struct_size, sizeof o);
    assert_int_equal(o.max_bytes, 0);
    assert_int_equal(o.sweep_interval_ms, CACHEKIT_L1_DEFAULT_SWEEP_INTERVAL_MS);
    assert_int_equal(o.promote_interval_us, CACHEKIT_L1_DEFAULT_PROMOTE_INTERVAL_US);
    assert_int_equal(cachekit_l1_options_init(NULL, sizeof o), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_l1_options_init(&o, 1), CACHEKIT_EINVAL);

    /* An older, shorter struct: only struct_size and max_bytes. */
    struct {
        size_t struct_size;
        uint64_t max_bytes;
        uint64_t canary;
    } old;
    old.canary = 0x1234;
    size_t old_size = offsetof(cachekit_l1_options, max_bytes) + sizeof(uint64_t);
    assert_int_equal(cachekit_l1_options_init((cachekit_l1_options *)(void *)&old, old_size), CACHEKIT_OK);
    assert_int_equal(old.struct_size, old_size);
    assert_int_equal(old.canary, 0x1234); /* nothing written past struct_size */
    old.max_bytes = 2u << 20;
    cachekit_l1 *l1 = NULL;
    assert_int_equal(cachekit_l1_new(&l1, (const cachekit_l1_options *)(const void *)&old), CACHEKIT_OK);
    cachekit_l1_counters st;
    st.struct_size = sizeof st;
    assert_int_equal(cachekit_l1_stats(l1, &st), CACHEKIT_OK);
    assert_int_equal(st.max_bytes, 2u << 20);
    cachekit_l1_free(l1);
}

/* CACHEKIT_L1_ADMISSION_TINYLFU reaches the engine: a one-use scan does not
 * flush a hot set, and the contest's counters show in the stats. */
static void test_admission(void **state) {
    (void)state;
    cachekit_l1 *l1 = NULL;
    cachekit_l1_options o = CACHEKIT_L1_OPTIONS_INIT;
    assert_int_equal(o.admission, CACHEKIT_L1_ADMISSION_LRU);
    o.admission = 7;
    assert_int_equal(cachekit_l1_new(&l1, &o), CACHEKIT_EINVAL);
    assert_non_null(strstr(cachekit_error_last_message(), "CACHEKIT_L1_ADMISSION_TINYLFU"));
    for (int policy = CACHEKIT_L1_ADMISSION_LRU; policy <= CACHEKIT_L1_ADMISSION_TINYLFU; ++policy) {
        o.admission = policy;
        o.max_bytes = CACHEKIT_L1_MIN_MAX_BYTES;
        o.sweep_interval_ms = 0;
        assert_int_equal(cachekit_l1_new(&l1, &o), CACHEKIT_OK);
        cachekit_buf out = CACHEKIT_BUF_INIT;
        char key[32], value[100];
        memset(value, 'v', sizeof value);
        for (int round = 0; round < 10; ++round)
            for (int i = 0; i < 300; ++i) {
                int n = snprintf(key, sizeof key, "hot-%d", i);
                if (cachekit_l1_get(l1, &out, key, (size_t)n) != CACHEKIT_OK)
                    assert_int_equal(cachekit_l1_put(l1, "", 0, key, (size_t)n, value, sizeof value, 0), CACHEKIT_OK);
            }
        for (int i = 0; i < 20000; ++i) {
            int n = snprintf(key, sizeof key, "scan-%d", i);
            if (cachekit_l1_get(l1, &out, key, (size_t)n) != CACHEKIT_OK)
                assert_int_equal(cachekit_l1_put(l1, "", 0, key, (size_t)n, value, sizeof value, 0), CACHEKIT_OK);
        }
        int kept = 0;
        for (int i = 0; i < 300; ++i) {
            int n = snprintf(key, sizeof key, "hot-%d", i);
            kept += cachekit_l1_get(l1, &out, key, (size_t)n) == CACHEKIT_OK;
        }
        cachekit_l1_counters st;
        st.struct_size = sizeof st;
        assert_int_equal(cachekit_l1_stats(l1, &st), CACHEKIT_OK);
        assert_true(st.bytes <= st.max_bytes);
        if (policy == CACHEKIT_L1_ADMISSION_TINYLFU) {
            assert_true(kept >= 270);
            assert_true(st.rejected_by_admission > 0);
        } else {
            assert_true(kept < 30);
            assert_int_equal(st.admitted + st.rejected_by_admission, 0);
        }
        cachekit_buf_dispose(&out);
        cachekit_l1_free(l1);
    }
}

static void test_put_get(void **state) {
    (void)state;
    cachekit_l1 *l1 = make();
    cachekit_buf out = CACHEKIT_BUF_INIT;
    const char key[] = "user\0:42"; /* keys are bytes, NUL allowed */
    assert_int_equal(cachekit_l1_put(l1, "ns", 2, key, sizeof key - 1, "hello", 5, 60.0), CACHEKIT_OK);
    assert_int_equal(cachekit_l1_get(l1, &out, key, sizeof key - 1), CACHEKIT_OK);
    assert_int_equal(out.size, 5);
    assert_memory_equal(out.ptr, "hello", 5);
    assert_int_equal(out.ptr[5], '\0');
    assert_int_equal(cachekit_l1_get(l1, &out, "user", 4), CACHEKIT_ENOTFOUND);
    assert_int_equal(out.size, 5); /* untouched by a miss */
    cachekit_error_clear();
    assert_int_equal(cachekit_l1_get(l1, &out, "nope", 4), CACHEKIT_ENOTFOUND);
    assert_int_equal(cachekit_error_last_code(), 0); /* a miss sets no message */

    /* Empty value, default namespace, no expiry. */
    assert_int_equal(cachekit_l1_put(l1, NULL, 0, "e", 1, NULL, 0, CACHEKIT_L1_TTL_NONE), CACHEKIT_OK);
    assert_int_equal(cachekit_l1_get(l1, &out, "e", 1), CACHEKIT_OK);
    assert_int_equal(out.size, 0);

    cachekit_l1_counters st;
    st.struct_size = sizeof st;
    assert_int_equal(cachekit_l1_stats(l1, &st), CACHEKIT_OK);
    assert_int_equal(st.hits, 2);
    assert_int_equal(st.misses, 2);
    assert_int_equal(st.inserts, 2);
    assert_int_equal(st.entries, 2);
    assert_true(st.bytes > 2 * 5 && st.bytes <= st.max_bytes);
    cachekit_buf_dispose(&out);
    cachekit_l1_free(l1);
}

static void test_validation(void **state) {
    (void)state;
    cachekit_l1 *l1 = make();
    cachekit_buf out = CACHEKIT_BUF_INIT;
    static char big_key[CACHEKIT_L1_MAX_KEY_SIZE + 1];
    assert_int_equal(cachekit_l1_get(NULL, &out, "k", 1), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_l1_get(l1, NULL, "k", 1), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_l1_get(l1, &out, NULL, 1), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_l1_get(l1, &out, "k", 0), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_l1_get(l1, &out, big_key, sizeof big_key), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_l1_get(l1, &out, big_key, sizeof big_key - 1), CACHEKIT_ENOTFOUND);

    assert_int_equal(cachekit_l1_put(NULL, "", 0, "k", 1, "v", 1, 1.0), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_l1_put(l1, NULL, 1, "k", 1, "v", 1, 1.0), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_l1_put(l1, "", 0, NULL, 1, "v", 1, 1.0), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_l1_put(l1, "", 0, "k", 0, "v", 1, 1.0), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_l1_put(l1, "", 0, "k", 1, NULL, 1, 1.0), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_l1_put(l1, "", 0, big_key, sizeof big_key, "v", 1, 1.0), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_l1_put(l1, big_key, sizeof big_key, "k", 1, "v", 1, 1.0), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_l1_put(l1, "", 0, "k", 1, "v", 1, -1.0), CACHEKIT_EINVAL);
    assert_non_null(strstr(cachekit_error_last_message(), "negative"));
    assert_int_equal(cachekit_l1_put(l1, "", 0, "k", 1, "v", 1, NAN), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_l1_put(l1, "", 0, "k", 1, "v", 1, INFINITY), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_l1_put(l1, "", 0, "k", 1, "v", 1, CACHEKIT_L1_MAX_TTL_SECONDS * 2), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_l1_put(l1, "", 0, "k", 1, "v", 1, CACHEKIT_L1_MAX_TTL_SECONDS), CACHEKIT_OK);
    assert_int_equal(cachekit_l1_put(l1, "", 0, "k", 1, "v", 1, 1e-12), CACHEKIT_OK); /* 1 ns */

    assert_int_equal(cachekit_l1_invalidate(NULL, "k", 1), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_l1_invalidate(l1, NULL, 1), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_l1_invalidate(l1, "k", 0), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_l1_invalidate_namespace(NULL, "n", 1), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_l1_invalidate_namespace(l1, NULL, 1), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_l1_invalidate_namespace(l1, NULL, 0), CACHEKIT_OK);
    assert_int_equal(cachekit_l1_clear(NULL), CACHEKIT_EINVAL);
    uint64_t ticket;
    assert_int_equal(cachekit_l1_begin_fill(NULL, &ticket), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_l1_begin_fill(l1, NULL), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_l1_put_filled(l1, "", 0, "k", 1, "v", 1, 0.0, UINT64_MAX, NULL), CACHEKIT_EINVAL);
    cachekit_l1_counters st;
    assert_int_equal(cachekit_l1_stats(l1, NULL), CACHEKIT_EINVAL);
    st.struct_size = 0;
    assert_int_equal(cachekit_l1_stats(l1, &st), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_l1_stats(NULL, &st), CACHEKIT_EINVAL);
    cachekit_buf_dispose(&out);
    cachekit_l1_free(l1);
}

static void test_too_big(void **state) {
    (void)state;
    cachekit_l1 *l1 = make();
    static char big[CACHEKIT_L1_MIN_MAX_BYTES / 8];
    cachekit_buf out = CACHEKIT_BUF_INIT;
    assert_int_equal(cachekit_l1_put(l1, "", 0, "k", 1, "small", 5, 0.0), CACHEKIT_OK);
    assert_int_equal(cachekit_l1_put(l1, "", 0, "k", 1, big, sizeof big, 0.0), CACHEKIT_ETOOBIG);
    assert_int_equal(cachekit_error_last_code(), CACHEKIT_ETOOBIG);
    assert_non_null(strstr(cachekit_error_last_message(), "1/8"));
    assert_int_equal(cachekit_l1_get(l1, &out, "k", 1), CACHEKIT_ENOTFOUND); /* older copy gone */
    cachekit_l1_counters st;
    st.struct_size = sizeof st;
    assert_int_equal(cachekit_l1_stats(l1, &st), CACHEKIT_OK);
    assert_int_equal(st.rejected_too_large, 1);
    assert_int_equal(st.entries, 0);
    cachekit_buf_dispose(&out);
    cachekit_l1_free(l1);
}

static void test_invalidation_and_tickets(void **state) {
    (void)state;
    cachekit_l1 *l1 = make();
    cachekit_buf out = CACHEKIT_BUF_INIT;
    int stored = -1;
    uint64_t ticket = 0;
    assert_int_equal(cachekit_l1_put(l1, "a", 1, "k1", 2, "1", 1, 0.0), CACHEKIT_OK);
    assert_int_equal(cachekit_l1_put(l1, "b", 1, "k2", 2, "2", 1, 0.0), CACHEKIT_OK);
    assert_int_equal(cachekit_l1_begin_fill(l1, &ticket), CACHEKIT_OK);
    assert_int_equal(cachekit_l1_invalidate_namespace(l1, "a", 1), CACHEKIT_OK);
    assert_int_equal(cachekit_l1_get(l1, &out, "k1", 2), CACHEKIT_ENOTFOUND);
    assert_int_equal(cachekit_l1_get(l1, &out, "k2", 2), CACHEKIT_OK);
    assert_int_equal(cachekit_l1_put_filled(l1, "a", 1, "k1", 2, "late", 4, 0.0, ticket, &stored), CACHEKIT_OK);
    assert_int_equal(stored, 0);
    assert_int_equal(cachekit_l1_get(l1, &out, "k1", 2), CACHEKIT_ENOTFOUND);
    assert_int_equal(cachekit_l1_begin_fill(l1, &ticket), CACHEKIT_OK);
    assert_int_equal(cachekit_l1_put_filled(l1, "a", 1, "k1", 2, "new", 3, 0.0, ticket, &stored), CACHEKIT_OK);
    assert_int_equal(stored, 1);
    assert_int_equal(cachekit_l1_get(l1, &out, "k1", 2), CACHEKIT_OK);
    assert_memory_equal(out.ptr, "new", 3);

    assert_int_equal(cachekit_l1_invalidate(l1, "k1", 2), CACHEKIT_OK);
    assert_int_equal(cachekit_l1_invalidate(l1, "k1", 2), CACHEKIT_OK); /* absent: still OK */
    assert_int_equal(cachekit_l1_get(l1, &out, "k1", 2), CACHEKIT_ENOTFOUND);
    assert_int_equal(cachekit_l1_clear(l1), CACHEKIT_OK);
    assert_int_equal(cachekit_l1_get(l1, &out, "k2", 2), CACHEKIT_ENOTFOUND);

    cachekit_l1_counters st;
    st.struct_size = sizeof st;
    assert_int_equal(cachekit_l1_stats(l1, &st), CACHEKIT_OK);
    assert_int_equal(st.dropped_fills, 1);
    assert_int_equal(st.entries, 0);
    assert_int_equal(st.bytes, 0);

    /* A short stats struct gets only what fits. */
    struct {
        size_t struct_size;
        uint64_t hits;
        uint64_t canary;
    } small;
    small.struct_size = offsetof(cachekit_l1_counters, hits) + sizeof(uint64_t);
    small.canary = 77;
    assert_int_equal(cachekit_l1_stats(l1, (cachekit_l1_counters *)(void *)&small), CACHEKIT_OK);
    assert_int_equal(small.hits, st.hits);
    assert_int_equal(small.canary, 77);
    cachekit_buf_dispose(&out);
    cachekit_l1_free(l1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lifecycle),
        cmocka_unit_test(test_options_init),
        cmocka_unit_test(test_admission),
        cmocka_unit_test(test_put_get),
        cmocka_unit_test(test_validation),
        cmocka_unit_test(test_too_big),
        cmocka_unit_test(test_invalidation_and_tickets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
