/* The one-round-trip calls (cachekit_backend_incr, _add, _touch,
 * _delete_many and its packed form) through the public C API, the same
 * checks on every backend: the memory and file ones (tests/l2), Redis and
 * Sentinel (tests/redis), a cluster (tests/cluster). Include after cmocka.h;
 * `b` is an open backend whose keys "ops:*" are free to use. */
#ifndef CACHEKIT_TESTS_BACKEND_OPS_CHECK_H
#define CACHEKIT_TESTS_BACKEND_OPS_CHECK_H

#include <stdint.h>
#include <string.h>

#include "cachekit/cachekit.h"

static void ops_check_incr(cachekit_backend *b) {
    int64_t v = 7;
    cachekit_backend_delete(b, "ops:n", 5);
    /* A missing key is a miss, with no message, and is not created. */
    cachekit_error_clear();
    assert_int_equal(cachekit_backend_incr(b, &v, "ops:n", 5, 1), CACHEKIT_ENOTFOUND);
    assert_int_equal(v, 7);
    assert_string_equal(cachekit_error_last_message(), "");
    assert_int_equal(cachekit_backend_exists(b, "ops:n", 5), CACHEKIT_ENOTFOUND);

    assert_int_equal(cachekit_backend_set(b, "ops:n", 5, "41", 2, 60.0), CACHEKIT_OK);
    assert_int_equal(cachekit_backend_incr(b, &v, "ops:n", 5, 1), CACHEKIT_OK);
    assert_int_equal(v, 42);
    assert_int_equal(cachekit_backend_incr(b, &v, "ops:n", 5, -50), CACHEKIT_OK);
    assert_int_equal(v, -8);
    cachekit_buf out = CACHEKIT_BUF_INIT;
    assert_int_equal(cachekit_backend_get(b, &out, "ops:n", 5), CACHEKIT_OK);
    assert_int_equal(out.size, 2);
    assert_memory_equal(out.ptr, "-8", 2); /* stored back as digits */
    double ttl = 0;
    assert_int_equal(cachekit_backend_ttl(b, &ttl, "ops:n", 5), CACHEKIT_OK);
    assert_true(ttl > 50.0 && ttl <= 61.0); /* the TTL stays */

    /* Overflow both ways: ETOOBIG, the value left alone. */
    assert_int_equal(cachekit_backend_set(b, "ops:n", 5, "9223372036854775806", 19, 0), CACHEKIT_OK);
    assert_int_equal(cachekit_backend_incr(b, &v, "ops:n", 5, 1), CACHEKIT_OK);
    assert_true(v == INT64_MAX);
    assert_int_equal(cachekit_backend_incr(b, &v, "ops:n", 5, 1), CACHEKIT_ETOOBIG);
    assert_non_null(strstr(cachekit_error_last_message(), "64-bit"));
    assert_int_equal(cachekit_backend_incr(b, &v, "ops:n", 5, INT64_MAX), CACHEKIT_ETOOBIG);
    assert_int_equal(cachekit_backend_get(b, &out, "ops:n", 5), CACHEKIT_OK);
    assert_int_equal(out.size, 19);
    assert_memory_equal(out.ptr, "9223372036854775807", 19);
    assert_int_equal(cachekit_backend_set(b, "ops:n", 5, "-9223372036854775808", 20, 0), CACHEKIT_OK);
    assert_int_equal(cachekit_backend_incr(b, &v, "ops:n", 5, -1), CACHEKIT_ETOOBIG);
    assert_int_equal(cachekit_backend_incr(b, &v, "ops:n", 5, INT64_MAX), CACHEKIT_OK);
    assert_true(v == -1);

    /* Not an integer of 64 bits (Redis's string2ll rules): EUNSUPPORTED, the value left alone. */
    static const char *const bad[] = {"", "abc", "1.5", " 1", "1 ", "+1", "01", "0x10", "9223372036854775808",
                                      "-9223372036854775809", "12345678901234567890123", "1\n"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        assert_int_equal(cachekit_backend_set(b, "ops:n", 5, bad[i], strlen(bad[i]), 0), CACHEKIT_OK);
        v = 99;
        assert_int_equal(cachekit_backend_incr(b, &v, "ops:n", 5, 1), CACHEKIT_EUNSUPPORTED);
        assert_non_null(strstr(cachekit_error_last_message(), "not a decimal 64-bit integer"));
        assert_int_equal(v, 99);
        assert_int_equal(cachekit_backend_get(b, &out, "ops:n", 5), CACHEKIT_OK);
        assert_int_equal(out.size, strlen(bad[i]));
    }
    assert_int_equal(cachekit_backend_set(b, "ops:n", 5, "0", 1, 0), CACHEKIT_OK);
    assert_int_equal(cachekit_backend_incr(b, &v, "ops:n", 5, 0), CACHEKIT_OK);
    assert_true(v == 0);

    /* Bad input. */
    assert_int_equal(cachekit_backend_incr(NULL, &v, "ops:n", 5, 1), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_backend_incr(b, NULL, "ops:n", 5, 1), CACHEKIT_EINVAL);
    assert_non_null(strstr(cachekit_error_last_message(), "value is NULL"));
    assert_int_equal(cachekit_backend_incr(b, &v, NULL, 5, 1), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_backend_incr(b, &v, "ops:n", 0, 1), CACHEKIT_EINVAL);
    cachekit_error err = CACHEKIT_ERROR_INIT;
    assert_int_equal(cachekit_backend_incr_ex(b, &v, "ops:n", 5, 1, &err), CACHEKIT_OK);
    assert_int_equal(err.code, CACHEKIT_OK);
    assert_int_equal(cachekit_backend_set(b, "ops:n", 5, "x", 1, 0), CACHEKIT_OK);
    assert_int_equal(cachekit_backend_incr_ex(b, &v, "ops:n", 5, 1, &err), CACHEKIT_EUNSUPPORTED);
    assert_int_equal(err.code, CACHEKIT_EUNSUPPORTED);
    assert_string_equal(err.name, cachekit_error_name(CACHEKIT_EUNSUPPORTED));
    cachekit_backend_delete(b, "ops:n", 5);
    cachekit_buf_dispose(&out);
}

static void ops_check_add(cachekit_backend *b) {
    int added = 9;
    cachekit_backend_delete(b, "ops:a", 5);
    assert_int_equal(cachekit_backend_add(b, &added, "ops:a", 5, "one", 3, 60.0), CACHEKIT_OK);
    assert_int_equal(added, 1);
    assert_int_equal(cachekit_backend_add(b, &added, "ops:a", 5, "two", 3, 0), CACHEKIT_OK);
    assert_int_equal(added, 0);
    cachekit_buf out = CACHEKIT_BUF_INIT;
    assert_int_equal(cachekit_backend_get(b, &out, "ops:a", 5), CACHEKIT_OK);
    assert_memory_equal(out.ptr, "one", 3); /* the first value stays */
    double ttl = 0;
    assert_int_equal(cachekit_backend_ttl(b, &ttl, "ops:a", 5), CACHEKIT_OK);
    assert_true(ttl > 50.0 && ttl <= 61.0);
    /* No expiry, an empty value, and no `added` out-parameter. */
    cachekit_backend_delete(b, "ops:a", 5);
    assert_int_equal(cachekit_backend_add(b, NULL, "ops:a", 5, NULL, 0, 0), CACHEKIT_OK);
    assert_int_equal(cachekit_backend_get(b, &out, "ops:a", 5), CACHEKIT_OK);
    assert_int_equal(out.size, 0);
    assert_int_equal(cachekit_backend_ttl(b, &ttl, "ops:a", 5), CACHEKIT_OK);
    assert_true(ttl == -1.0);
    /* Bad input: nothing written. */
    cachekit_backend_delete(b, "ops:a", 5);
    added = 9;
    assert_int_equal(cachekit_backend_add(b, &added, "ops:a", 5, "v", 1, -1.0), CACHEKIT_EINVAL);
    assert_int_equal(added, 0);
    assert_int_equal(cachekit_backend_add(b, &added, "ops:a", 5, NULL, 1, 0), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_backend_add(b, &added, NULL, 0, "v", 1, 0), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_backend_add(NULL, &added, "ops:a", 5, "v", 1, 0), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_backend_exists(b, "ops:a", 5), CACHEKIT_ENOTFOUND);
    cachekit_buf_dispose(&out);
}

static void ops_check_touch(cachekit_backend *b) {
    double ttl = 0;
    cachekit_backend_delete(b, "ops:t", 5);
    assert_int_equal(cachekit_backend_touch(b, "ops:t", 5, 30.0), CACHEKIT_ENOTFOUND);
    assert_int_equal(cachekit_backend_touch(b, "ops:t", 5, 0), CACHEKIT_ENOTFOUND);
    assert_int_equal(cachekit_backend_exists(b, "ops:t", 5), CACHEKIT_ENOTFOUND);
    assert_int_equal(cachekit_backend_set(b, "ops:t", 5, "v", 1, 0), CACHEKIT_OK);
    assert_int_equal(cachekit_backend_touch(b, "ops:t", 5, 30.0), CACHEKIT_OK);
    assert_int_equal(cachekit_backend_ttl(b, &ttl, "ops:t", 5), CACHEKIT_OK);
    assert_true(ttl > 20.0 && ttl <= 31.0);
    assert_int_equal(cachekit_backend_touch(b, "ops:t", 5, 0), CACHEKIT_OK); /* no expiry */
    assert_int_equal(cachekit_backend_ttl(b, &ttl, "ops:t", 5), CACHEKIT_OK);
    assert_true(ttl == -1.0);
    /* A key without a TTL exists: touch to none again still says so. */
    assert_int_equal(cachekit_backend_touch(b, "ops:t", 5, 0), CACHEKIT_OK);
    cachekit_buf out = CACHEKIT_BUF_INIT;
    assert_int_equal(cachekit_backend_get(b, &out, "ops:t", 5), CACHEKIT_OK);
    assert_memory_equal(out.ptr, "v", 1);
    assert_int_equal(cachekit_backend_touch(b, "ops:t", 5, -1.0), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_backend_touch(b, NULL, 5, 1.0), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_backend_touch(NULL, "ops:t", 5, 1.0), CACHEKIT_EINVAL);
    cachekit_backend_delete(b, "ops:t", 5);
    cachekit_buf_dispose(&out);
}

static void ops_check_delete_many(cachekit_backend *b) {
    /* Keys chosen to fall in different cluster slots (and one hash tag pair sharing one). */
    const void *keys[6] = {"ops:d1", "ops:d2", "{ops}:x", "{ops}:y", "ops:missing", "ops:d1"};
    size_t lens[6] = {6, 6, 7, 7, 11, 6};
    for (int i = 0; i < 4; ++i) assert_int_equal(cachekit_backend_set(b, keys[i], lens[i], "v", 1, 0), CACHEKIT_OK);
    uint64_t deleted = 99;
    assert_int_equal(cachekit_backend_delete_many(b, &deleted, keys, lens, 6), CACHEKIT_OK);
    assert_int_equal(deleted, 4); /* the missing key and the repeated one count nothing */
    for (int i = 0; i < 4; ++i) assert_int_equal(cachekit_backend_exists(b, keys[i], lens[i]), CACHEKIT_ENOTFOUND);
    assert_int_equal(cachekit_backend_delete_many(b, &deleted, keys, lens, 2), CACHEKIT_OK);
    assert_int_equal(deleted, 0);
    assert_int_equal(cachekit_backend_delete_many(b, NULL, NULL, NULL, 0), CACHEKIT_OK);

    /* The packed form. */
    for (int i = 0; i < 4; ++i) assert_int_equal(cachekit_backend_set(b, keys[i], lens[i], "v", 1, 0), CACHEKIT_OK);
    const char packed[] = "ops:d1ops:d2{ops}:x";
    size_t offsets[4] = {0, 6, 12, 19};
    assert_int_equal(cachekit_backend_delete_many_packed(b, &deleted, packed, offsets, 3), CACHEKIT_OK);
    assert_int_equal(deleted, 3);
    assert_int_equal(cachekit_backend_exists(b, "{ops}:y", 7), CACHEKIT_OK);
    cachekit_error err = CACHEKIT_ERROR_INIT;
    const size_t one_key[2] = {0, 7};
    assert_int_equal(cachekit_backend_delete_many_packed_ex(b, &deleted, "{ops}:y", one_key, 1, &err), CACHEKIT_OK);
    assert_int_equal(err.code, CACHEKIT_OK);
    assert_int_equal(deleted, 1);

    /* Bad input: nothing deleted. */
    assert_int_equal(cachekit_backend_set(b, "ops:d1", 6, "v", 1, 0), CACHEKIT_OK);
    const void *with_null[2] = {"ops:d1", NULL};
    size_t with_null_lens[2] = {6, 1};
    deleted = 99;
    assert_int_equal(cachekit_backend_delete_many(b, &deleted, with_null, with_null_lens, 2), CACHEKIT_EINVAL);
    assert_int_equal(deleted, 0);
    size_t empty_lens[2] = {6, 0};
    const void *two[2] = {"ops:d1", "ops:d2"};
    assert_int_equal(cachekit_backend_delete_many(b, &deleted, two, empty_lens, 2), CACHEKIT_EINVAL);
    assert_non_null(strstr(cachekit_error_last_message(), "empty"));
    assert_int_equal(cachekit_backend_delete_many(b, &deleted, NULL, lens, 1), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_backend_delete_many(NULL, &deleted, keys, lens, 1), CACHEKIT_EINVAL);
    size_t decreasing[3] = {0, 6, 3};
    assert_int_equal(cachekit_backend_delete_many_packed(b, &deleted, packed, decreasing, 2), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_backend_delete_many_packed(b, &deleted, packed, NULL, 1), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_backend_exists(b, "ops:d1", 6), CACHEKIT_OK);
    cachekit_backend_delete(b, "ops:d1", 6);
}

/* All of the above on one backend. */
static void check_backend_ops(cachekit_backend *b) {
    ops_check_incr(b);
    ops_check_add(b);
    ops_check_touch(b);
    ops_check_delete_many(b);
}

#endif
