/* The L2 backend C API through the public header only (compiled as C99):
 * options and struct_size handling, URL dispatch, argument validation codes,
 * the calls over memory:// and file://, degradation and the stats struct. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "cachekit/cachekit.h"
#include "backend_ops_check.h"

static char g_tmp[256];

static int make_tmp(void **state) {
    (void)state;
    const char *base = getenv("TMPDIR");
    snprintf(g_tmp, sizeof g_tmp, "%s/cachekit-l2capi-XXXXXX", base && *base ? base : "/tmp");
    return mkdtemp(g_tmp) ? 0 : -1;
}

static int remove_tmp(void **state) {
    (void)state;
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_tmp);
    return system(cmd) == 0 ? 0 : -1;
}

static cachekit_backend *open_ok(const char *url, const cachekit_backend_options *o) {
    cachekit_backend *b = NULL;
    int rc = cachekit_backend_open(&b, url, o);
    if (rc != CACHEKIT_OK) fail_msg("open %s: %d %s", url, rc, cachekit_error_last_message());
    assert_non_null(b);
    return b;
}

static void test_options_init(void **state) {
    (void)state;
    cachekit_backend_options o;
    memset(&o, 0xff, sizeof o);
    assert_int_equal(cachekit_backend_options_init(&o, sizeof o), CACHEKIT_OK);
    assert_int_equal(o.struct_size, sizeof o);
    assert_int_equal(o.pool_size, 10);
    assert_int_equal(o.connect_timeout_ms, 500);
    assert_int_equal(o.command_timeout_ms, 250);
    assert_int_equal(o.breaker_failures, 5);
    assert_int_equal(o.breaker_recovery_ms, 30000);
    assert_int_equal(o.breaker_half_open_calls, 3);
    assert_int_equal(o.breaker_successes, 3);
    assert_int_equal(o.breaker_disabled, 0);
    assert_int_equal(o.fail_closed, 0);
    assert_int_equal(o.max_concurrency, 0);
    assert_int_equal(o.backpressure_wait_ms, 100);
    assert_true(o.file_max_bytes == 1073741824ull);
    assert_true(o.file_max_entries == 10000u);
    assert_true(o.file_max_value_bytes == 104857600ull);
    assert_true(o.max_reply_bytes == 0); /* the Redis default (or a cache's own) */

    /* An older, smaller struct: only the fields that fit are written. */
    unsigned char small[sizeof(cachekit_backend_options)];
    memset(small, 0xab, sizeof small);
    size_t old_size = offsetof(cachekit_backend_options, command_timeout_ms);
    assert_int_equal(cachekit_backend_options_init((cachekit_backend_options *)small, old_size), CACHEKIT_OK);
    assert_int_equal(((cachekit_backend_options *)small)->pool_size, 10);
    assert_int_equal(small[old_size], 0xab); /* untouched past struct_size */

    /* A newer, larger struct: the tail is zeroed. */
    unsigned char big[sizeof(cachekit_backend_options) + 16];
    memset(big, 0xab, sizeof big);
    assert_int_equal(cachekit_backend_options_init((cachekit_backend_options *)big, sizeof big), CACHEKIT_OK);
    assert_int_equal(big[sizeof big - 1], 0);

    assert_int_equal(cachekit_backend_options_init(NULL, sizeof o), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_backend_options_init(&o, 2), CACHEKIT_EINVAL);

    /* The INIT macro (all zero = defaults) opens. */
    cachekit_backend_options init = CACHEKIT_BACKEND_OPTIONS_INIT;
    cachekit_backend *b = open_ok("memory://", &init);
    cachekit_backend_free(b);
    /* An options struct from an older or newer caller. */
    init.struct_size = offsetof(cachekit_backend_options, breaker_failures);
    b = open_ok("memory://", &init);
    cachekit_backend_free(b);
    init.struct_size = sizeof init + 64;
    b = open_ok("memory://", &init);
    cachekit_backend_free(b);
    init.struct_size = 1;
    assert_int_equal(cachekit_backend_open(&b, "memory://", &init), CACHEKIT_EINVAL);
    assert_null(b);
}

static void test_url_dispatch(void **state) {
    (void)state;
    cachekit_backend *b = open_ok("memory://", NULL);
    assert_string_equal(cachekit_backend_kind(b), "memory");
    cachekit_backend_free(b);
    cachekit_backend_free(NULL);
    assert_string_equal(cachekit_backend_kind(NULL), "");

    char url[400];
    snprintf(url, sizeof url, "file://%s/cache", g_tmp);
    b = open_ok(url, NULL);
    assert_string_equal(cachekit_backend_kind(b), "file");
    cachekit_backend_free(b);
    char dir[300];
    snprintf(dir, sizeof dir, "%s/cache", g_tmp);
    struct stat st;
    assert_int_equal(stat(dir, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);

    const char *bad[] = {"rediss://localhost:6379?ssl_cert_reqs=x", "file://relative/dir", "file:relative", "file://",
                         "http://example.com",      "memcached://127.0.0.1", "",           "memory://x",
                         "mem://",                  "file:///tmp/x?mode=1"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; ++i) {
        b = (cachekit_backend *)&st; /* must be reset to NULL */
        int rc = cachekit_backend_open(&b, bad[i], NULL);
        if (rc != CACHEKIT_EINVAL) fail_msg("%s: got %d", bad[i], rc);
        assert_null(b);
    }
    assert_int_equal(cachekit_backend_open(&b, "rediss://localhost?ssl_ca_certs=/nonexistent/ca.pem", NULL),
                     CACHEKIT_EINVAL);
    assert_non_null(strstr(cachekit_error_last_message(), "TLS"));
    assert_non_null(strstr(cachekit_error_last_message(), "/nonexistent/ca.pem"));
    /* A cluster's TLS settings are checked as rediss://'s. */
    assert_int_equal(cachekit_backend_open(&b, "rediss-cluster://127.0.0.1:7000?ssl_cert_reqs=maybe", NULL),
                     CACHEKIT_EINVAL);
    assert_non_null(strstr(cachekit_error_last_message(), "ssl_cert_reqs"));
    assert_int_equal(cachekit_backend_open(&b, "redis-cluster://127.0.0.1:7000?ssl_ca_certs=/x", NULL),
                     CACHEKIT_EINVAL);
    assert_non_null(strstr(cachekit_error_last_message(), "rediss-cluster://"));
    assert_int_equal(cachekit_backend_open(&b, "ftp://x", NULL), CACHEKIT_EINVAL);
    assert_non_null(strstr(cachekit_error_last_message(), "memory://"));
    assert_int_equal(cachekit_backend_open(NULL, "memory://", NULL), CACHEKIT_EINVAL);

    /* Scheme matching ignores case. */
    b = open_ok("MEMORY://", NULL);
    cachekit_backend_free(b);
}

static void test_env_fallback(void **state) {
    (void)state;
    cachekit_backend *b = NULL;
    unsetenv("CACHEKIT_REDIS_URL");
    unsetenv("REDIS_URL");
    assert_int_equal(cachekit_backend_open(&b, NULL, NULL), CACHEKIT_EINVAL);
    assert_non_null(strstr(cachekit_error_last_message(), "CACHEKIT_REDIS_URL"));

    setenv("REDIS_URL", "memory://", 1);
    b = open_ok(NULL, NULL);
    assert_string_equal(cachekit_backend_kind(b), "memory");
    cachekit_backend_free(b);

    char url[400];
    snprintf(url, sizeof url, "file://%s/env", g_tmp);
    setenv("CACHEKIT_REDIS_URL", url, 1); /* takes precedence over REDIS_URL */
    b = open_ok(NULL, NULL);
    assert_string_equal(cachekit_backend_kind(b), "file");
    cachekit_backend_free(b);

    setenv("CACHEKIT_REDIS_URL", "", 1); /* empty counts as unset */
    b = open_ok(NULL, NULL);
    assert_string_equal(cachekit_backend_kind(b), "memory");
    cachekit_backend_free(b);
    unsetenv("CACHEKIT_REDIS_URL");
    unsetenv("REDIS_URL");
}

static void calls_on(const char *url) {
    cachekit_backend *b = open_ok(url, NULL);
    cachekit_buf out = CACHEKIT_BUF_INIT;
    assert_int_equal(cachekit_backend_get(b, &out, "k", 1), CACHEKIT_ENOTFOUND);
    assert_int_equal(cachekit_backend_set(b, "k", 1, "v\0x", 3, 0), CACHEKIT_OK);
    assert_int_equal(cachekit_backend_get(b, &out, "k", 1), CACHEKIT_OK);
    assert_int_equal(out.size, 3);
    assert_memory_equal(out.ptr, "v\0x", 3);
    assert_int_equal(cachekit_backend_set(b, "e", 1, NULL, 0, 0), CACHEKIT_OK); /* empty value */
    assert_int_equal(cachekit_backend_get(b, &out, "e", 1), CACHEKIT_OK);
    assert_int_equal(out.size, 0);
    assert_int_equal(cachekit_backend_exists(b, "k", 1), CACHEKIT_OK);
    assert_int_equal(cachekit_backend_exists(b, "zz", 2), CACHEKIT_ENOTFOUND);

    double ttl = 0;
    assert_int_equal(cachekit_backend_ttl(b, &ttl, "k", 1), CACHEKIT_OK);
    assert_true(ttl == -1.0);
    assert_int_equal(cachekit_backend_set(b, "t", 1, "v", 1, 60.0), CACHEKIT_OK);
    assert_int_equal(cachekit_backend_ttl(b, &ttl, "t", 1), CACHEKIT_OK);
    assert_true(ttl > 59.0 && ttl <= 61.0);
    assert_int_equal(cachekit_backend_ttl(b, &ttl, "zz", 2), CACHEKIT_ENOTFOUND);
    assert_int_equal(cachekit_backend_set(b, "sub", 3, "v", 1, 0.0000001), CACHEKIT_OK); /* rounds up */

    assert_int_equal(cachekit_backend_delete(b, "k", 1), CACHEKIT_OK);
    assert_int_equal(cachekit_backend_delete(b, "k", 1), CACHEKIT_ENOTFOUND);

    const void *keys[3] = {"a", "bb", "ccc"};
    size_t key_lens[3] = {1, 2, 3};
    const void *vals[3] = {"1", "22", "333"};
    size_t val_lens[3] = {1, 2, 3};
    assert_int_equal(cachekit_backend_set_many(b, keys, key_lens, vals, val_lens, 2, 0), CACHEKIT_OK);
    cachekit_buf outs[3] = {CACHEKIT_BUF_INIT, CACHEKIT_BUF_INIT, CACHEKIT_BUF_INIT};
    int results[3] = {99, 99, 99};
    assert_int_equal(cachekit_backend_get_many(b, outs, results, keys, key_lens, 3), CACHEKIT_OK);
    assert_int_equal(results[0], CACHEKIT_OK);
    assert_int_equal(results[1], CACHEKIT_OK);
    assert_int_equal(results[2], CACHEKIT_ENOTFOUND);
    assert_memory_equal(outs[1].ptr, "22", 2);
    assert_int_equal(cachekit_backend_get_many(b, NULL, NULL, NULL, NULL, 0), CACHEKIT_OK);
    assert_int_equal(cachekit_backend_set_many(b, NULL, NULL, NULL, NULL, 0, 0), CACHEKIT_OK);
    for (int i = 0; i < 3; ++i) cachekit_buf_dispose(&outs[i]);

    cachekit_buf token = CACHEKIT_BUF_INIT;
    assert_int_equal(cachekit_backend_lock(b, &token, "L", 1, 10000), CACHEKIT_OK);
    assert_true(token.size >= 16);
    cachekit_buf token2 = CACHEKIT_BUF_INIT;
    assert_int_equal(cachekit_backend_lock(b, &token2, "L", 1, 10000), CACHEKIT_EBUSY);
    assert_int_equal(cachekit_backend_unlock(b, "L", 1, "nope", 4), CACHEKIT_ENOTFOUND);
    assert_int_equal(cachekit_backend_unlock(b, "L", 1, token.ptr, token.size), CACHEKIT_OK);
    assert_int_equal(cachekit_backend_unlock(b, "L", 1, token.ptr, token.size), CACHEKIT_ENOTFOUND);
    cachekit_buf_dispose(&token);
    cachekit_buf_dispose(&token2);

    double latency = -1;
    assert_int_equal(cachekit_backend_health(b, &latency), CACHEKIT_OK);
    assert_true(latency >= 0);
    assert_int_equal(cachekit_backend_health(b, NULL), CACHEKIT_OK);

    uint64_t deleted = 99;
    if (strcmp(cachekit_backend_kind(b), "file") == 0) {
        assert_int_equal(cachekit_backend_clear(b, &deleted, "a", 1), CACHEKIT_EINVAL);
        assert_non_null(strstr(cachekit_error_last_message(), "prefix"));
    } else {
        assert_int_equal(cachekit_backend_clear(b, &deleted, "a", 1), CACHEKIT_OK);
        assert_int_equal(deleted, 1);
    }
    assert_int_equal(cachekit_backend_clear(b, &deleted, NULL, 0), CACHEKIT_OK);
    assert_true(deleted >= 3);
    assert_int_equal(cachekit_backend_clear(b, NULL, "", 0), CACHEKIT_OK);
    assert_int_equal(cachekit_backend_exists(b, "bb", 2), CACHEKIT_ENOTFOUND);

    cachekit_backend_stats st;
    memset(&st, 0, sizeof st);
    st.struct_size = sizeof st;
    assert_int_equal(cachekit_backend_stats_get(b, &st), CACHEKIT_OK);
    assert_int_equal(st.breaker_state, CACHEKIT_BREAKER_CLOSED);
    assert_true(st.calls >= 20);
    assert_int_equal(st.failures, 0);
    assert_true(st.latency_count >= 20);
    assert_true(st.latency_ms_sum >= 0);

    cachekit_buf_dispose(&out);
    cachekit_backend_free(b);
}

static void test_calls_memory(void **state) {
    (void)state;
    calls_on("memory://");
}

static void test_calls_file(void **state) {
    (void)state;
    char url[400];
    snprintf(url, sizeof url, "file://%s/calls", g_tmp);
    calls_on(url);
}

static void test_ops_memory(void **state) {
    (void)state;
    cachekit_backend *b = open_ok("memory://", NULL);
    check_backend_ops(b);
    cachekit_backend_free(b);
}

static void test_ops_file(void **state) {
    (void)state;
    char url[400];
    snprintf(url, sizeof url, "file://%s/ops", g_tmp);
    cachekit_backend *b = open_ok(url, NULL);
    check_backend_ops(b);
    cachekit_backend_free(b);
}

/* Two handles on one directory (as two processes would be): concurrent
 * increments and adds are atomic under the entry locks. */
static void test_ops_file_two_handles(void **state) {
    (void)state;
    char url[400];
    snprintf(url, sizeof url, "file://%s/ops2", g_tmp);
    cachekit_backend *a = open_ok(url, NULL);
    cachekit_backend *b = open_ok(url, NULL);
    assert_int_equal(cachekit_backend_set(a, "n", 1, "0", 1, 0), CACHEKIT_OK);
    pid_t child = fork();
    assert_true(child >= 0);
    const int rounds = 200;
    if (child == 0) {
        cachekit_backend *c = open_ok(url, NULL);
        int64_t v;
        int bad = 0;
        for (int i = 0; i < rounds; ++i) bad += cachekit_backend_incr(c, &v, "n", 1, 1) != CACHEKIT_OK;
        _exit(bad == 0 ? 0 : 1);
    }
    int64_t v = 0;
    for (int i = 0; i < rounds; ++i) assert_int_equal(cachekit_backend_incr(b, &v, "n", 1, 1), CACHEKIT_OK);
    int status = 0;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    cachekit_buf out = CACHEKIT_BUF_INIT;
    assert_int_equal(cachekit_backend_get(a, &out, "n", 1), CACHEKIT_OK);
    assert_int_equal(out.size, 3);
    assert_memory_equal(out.ptr, "400", 3); /* no increment lost */
    int added_a = 0, added_b = 0;
    assert_int_equal(cachekit_backend_add(a, &added_a, "once", 4, "a", 1, 0), CACHEKIT_OK);
    assert_int_equal(cachekit_backend_add(b, &added_b, "once", 4, "b", 1, 0), CACHEKIT_OK);
    assert_int_equal(added_a + added_b, 1);
    cachekit_buf_dispose(&out);
    cachekit_backend_free(a);
    cachekit_backend_free(b);
}

static void test_argument_validation(void **state) {
    (void)state;
    cachekit_backend *b = open_ok("memory://", NULL);
    cachekit_buf out = CACHEKIT_BUF_INIT;
    double ttl;
    assert_int_equal(cachekit_backend_get(NULL, &out, "k", 1), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_backend_get(b, NULL, "k", 1), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_backend_get(b, &out, NULL, 1), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_backend_get(b, &out, "k", 0), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_backend_set(b, NULL, 0, "v", 1, 0), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_backend_set(b, "k", 1, NULL, 1, 0), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_backend_set(b, "k", 1, "v", 1, -1.0), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_backend_set(b, "k", 1, "v", 1, NAN), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_backend_set(b, "k", 1, "v", 1, INFINITY), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_backend_set(b, "k", 1, "v", 1, 1e300), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_backend_delete(b, "", 0), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_backend_exists(NULL, "k", 1), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_backend_ttl(b, NULL, "k", 1), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_backend_ttl(b, &ttl, NULL, 0), CACHEKIT_EINVAL);

    /* Keys up to 1 MiB. */
    size_t mib = 1u << 20;
    char *huge = calloc(mib + 1, 1);
    assert_non_null(huge);
    memset(huge, 'k', mib + 1);
    assert_int_equal(cachekit_backend_set(b, huge, mib, "v", 1, 0), CACHEKIT_OK);
    assert_int_equal(cachekit_backend_set(b, huge, mib + 1, "v", 1, 0), CACHEKIT_EINVAL);
    assert_non_null(strstr(cachekit_error_last_message(), "1 MiB"));
    assert_int_equal(cachekit_backend_get(b, &out, huge, mib + 1), CACHEKIT_EINVAL);
    free(huge);

    const void *keys[2] = {"a", NULL};
    size_t lens[2] = {1, 1};
    const void *vals[2] = {"1", "2"};
    int results[2];
    cachekit_buf outs[2] = {CACHEKIT_BUF_INIT, CACHEKIT_BUF_INIT};
    assert_int_equal(cachekit_backend_get_many(b, outs, results, keys, lens, 2), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_backend_get_many(b, NULL, results, keys, lens, 1), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_backend_set_many(b, keys, lens, vals, lens, 2, 0), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_backend_set_many(b, keys, lens, vals, lens, 1, -2), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_backend_set_many(b, keys, lens, NULL, lens, 1, 0), CACHEKIT_EINVAL);

    cachekit_buf token = CACHEKIT_BUF_INIT;
    assert_int_equal(cachekit_backend_lock(b, NULL, "L", 1, 100), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_backend_lock(b, &token, "L", 1, 0), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_backend_lock(b, &token, NULL, 0, 100), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_backend_unlock(b, "L", 1, NULL, 0), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_backend_clear(b, NULL, NULL, 3), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_backend_health(NULL, NULL), CACHEKIT_EINVAL);

    cachekit_backend_stats st;
    assert_int_equal(cachekit_backend_stats_get(b, NULL), CACHEKIT_EINVAL);
    st.struct_size = 0;
    assert_int_equal(cachekit_backend_stats_get(b, &st), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_backend_stats_get(NULL, &st), CACHEKIT_EINVAL);

    /* A miss sets no message. */
    cachekit_error_clear();
    assert_int_equal(cachekit_backend_get(b, &out, "absent", 6), CACHEKIT_ENOTFOUND);
    assert_int_equal(cachekit_error_last_code(), 0);
    cachekit_buf_dispose(&out);
    cachekit_backend_free(b);
}

static void test_stats_struct_size(void **state) {
    (void)state;
    cachekit_backend *b = open_ok("memory://", NULL);
    cachekit_buf out = CACHEKIT_BUF_INIT;
    cachekit_backend_get(b, &out, "k", 1);
    cachekit_backend_get(b, &out, "k", 1);
    /* An older caller's struct ending after `calls`: nothing past it is written. */
    unsigned char raw[sizeof(cachekit_backend_stats)];
    memset(raw, 0xee, sizeof raw);
    cachekit_backend_stats *st = (cachekit_backend_stats *)raw;
    st->struct_size = offsetof(cachekit_backend_stats, failures);
    assert_int_equal(cachekit_backend_stats_get(b, st), CACHEKIT_OK);
    assert_int_equal(st->calls, 2);
    assert_int_equal(st->breaker_state, CACHEKIT_BREAKER_CLOSED);
    assert_int_equal(raw[offsetof(cachekit_backend_stats, failures)], 0xee);
    assert_int_equal(raw[sizeof raw - 1], 0xee);
    cachekit_buf_dispose(&out);
    cachekit_backend_free(b);
}

static void test_file_limits_from_options(void **state) {
    (void)state;
    cachekit_backend_options o = CACHEKIT_BACKEND_OPTIONS_INIT;
    o.file_max_value_bytes = 10;
    o.file_max_entries = 10;
    char url[400];
    snprintf(url, sizeof url, "file://%s/limits", g_tmp);
    cachekit_backend *b = open_ok(url, &o);
    assert_int_equal(cachekit_backend_set(b, "k", 1, "0123456789", 10, 0), CACHEKIT_OK);
    /* ETOOBIG is the caller's error, not a backend failure: never degraded. */
    assert_int_equal(cachekit_backend_set(b, "k", 1, "0123456789a", 11, 0), CACHEKIT_ETOOBIG);
    for (int i = 0; i < 30; ++i) {
        char key[16];
        snprintf(key, sizeof key, "key%d", i);
        assert_int_equal(cachekit_backend_set(b, key, strlen(key), "v", 1, 0), CACHEKIT_OK);
    }
    cachekit_backend_stats st;
    st.struct_size = sizeof st;
    assert_int_equal(cachekit_backend_stats_get(b, &st), CACHEKIT_OK);
    assert_int_equal(st.failures, 0);
    /* The file TTL bound (10 years) is EINVAL. */
    assert_int_equal(cachekit_backend_set(b, "k", 1, "v", 1, 400000000.0), CACHEKIT_EINVAL);
    cachekit_backend_free(b);
}

static void test_fail_closed_file_unhealthy(void **state) {
    (void)state;
    /* A file backend whose directory disappears fails with EBACKEND; fail-open
     * degrades the same failures. */
    char dir[300], url[400], cmd[700];
    snprintf(dir, sizeof dir, "%s/vanish", g_tmp);
    snprintf(url, sizeof url, "file://%s", dir);
    cachekit_backend_options o = CACHEKIT_BACKEND_OPTIONS_INIT;
    o.fail_closed = 1;
    o.breaker_failures = 2;
    cachekit_backend *closed = open_ok(url, &o);
    cachekit_backend *open = open_ok(url, NULL);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);

    assert_int_equal(cachekit_backend_set(closed, "k", 1, "v", 1, 0), CACHEKIT_EBACKEND);
    assert_int_equal(cachekit_backend_health(closed, NULL), CACHEKIT_EBACKEND);
    assert_int_equal(cachekit_backend_set(closed, "k", 1, "v", 1, 0), CACHEKIT_EBACKEND);
    assert_int_equal(cachekit_backend_set(closed, "k", 1, "v", 1, 0), CACHEKIT_ECIRCUIT_OPEN);
    cachekit_backend_stats st;
    st.struct_size = sizeof st;
    assert_int_equal(cachekit_backend_stats_get(closed, &st), CACHEKIT_OK);
    assert_int_equal(st.breaker_state, CACHEKIT_BREAKER_OPEN);
    assert_int_equal(st.breaker_opened, 1);
    assert_int_equal(st.rejected_open, 1);

    assert_int_equal(cachekit_backend_set(open, "k", 1, "v", 1, 0), CACHEKIT_OK); /* skipped */
    assert_int_equal(cachekit_backend_stats_get(open, &st), CACHEKIT_OK);
    assert_int_equal(st.skipped_writes, 1);
    assert_int_equal(st.failures, 1);
    assert_int_equal(cachekit_backend_health(open, NULL), CACHEKIT_EBACKEND); /* never degraded */
    cachekit_backend_free(closed);
    cachekit_backend_free(open);
}

/* A MessagePack bin of exactly `n` bytes (n >= 3, < 65536 + 3) in buf,
 * holding pseudo-random (incompressible) bytes. */
static void mp_str(char *buf, size_t n) {
    size_t len = n - 3;
    buf[0] = (char)0xc5;
    buf[1] = (char)(len >> 8);
    buf[2] = (char)(len & 0xff);
    uint32_t x = 2463534242u;
    for (size_t i = 0; i < len; ++i) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        buf[3 + i] = (char)(x >> 24);
    }
}

static cachekit_cache *file_cache(const char *sub, uint64_t max_bytes, uint64_t max_value_bytes) {
    static char url[400];
    snprintf(url, sizeof url, "file://%s/%s", g_tmp, sub);
    static cachekit_backend_options bo;
    assert_int_equal(cachekit_backend_options_init(&bo, sizeof bo), CACHEKIT_OK);
    bo.file_max_bytes = max_bytes;
    bo.file_max_value_bytes = max_value_bytes;
    cachekit_cache_options o;
    assert_int_equal(cachekit_cache_options_init(&o, sizeof o), CACHEKIT_OK);
    o.backend_url = url;
    o.l1 = CACHEKIT_OFF; /* every read goes to the file L2 */
    o.backend_options = &bo;
    cachekit_cache *c = NULL;
    int rc = cachekit_cache_new(&c, &o);
    if (rc != CACHEKIT_OK) fail_msg("cache over %s: %d %s", url, rc, cachekit_error_last_message());
    return c;
}

/* A file L2 too full for a value far below max_value_bytes: the put is a
 * skipped write under fail-open, never an error. */
static void test_cache_full_file_l2_skips(void **state) {
    (void)state;
    cachekit_cache *c = file_cache("full", 8192, 0);
    static char big[7800];
    mp_str(big, sizeof big);
    for (int i = 0; i < 5; ++i)
        assert_int_equal(cachekit_cache_put(c, "ns", "k", 1, big, sizeof big, CACHEKIT_TTL_DEFAULT), CACHEKIT_OK);
    cachekit_buf out = CACHEKIT_BUF_INIT;
    assert_int_equal(cachekit_cache_get(c, &out, NULL, "ns", "k", 1), CACHEKIT_ENOTFOUND);
    char small[10];
    mp_str(small, sizeof small);
    assert_int_equal(cachekit_cache_put(c, "ns", "s", 1, small, sizeof small, CACHEKIT_TTL_DEFAULT), CACHEKIT_OK);
    assert_int_equal(cachekit_cache_get(c, &out, NULL, "ns", "s", 1), CACHEKIT_OK);
    cachekit_buf_dispose(&out);
    cachekit_cache_free(c);
}

/* The one entry file in `dir` (a 32-hex name) into `path`. */
static void only_entry(const char *dir, char *path, size_t cap) {
    DIR *d = opendir(dir);
    assert_non_null(d);
    int found = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (strlen(de->d_name) != 32) continue;
        snprintf(path, cap, "%s/%s", dir, de->d_name);
        ++found;
    }
    closedir(d);
    assert_int_equal(found, 1);
}

/* A cache whose file L2 entry is held under flock(LOCK_EX) by another
 * process: its get is a miss and its put a skipped write, each within 1 s
 * (the command timeout is 5 s), never opening the breaker; other keys work. */
static void test_cache_entry_locked_elsewhere(void **state) {
    (void)state;
    cachekit_cache *c = file_cache("locked", 0, 0);
    char small[10], dir[300], entry[400];
    mp_str(small, sizeof small);
    assert_int_equal(cachekit_cache_put(c, "ns", "k", 1, small, sizeof small, CACHEKIT_TTL_DEFAULT), CACHEKIT_OK);
    snprintf(dir, sizeof dir, "%s/locked", g_tmp);
    only_entry(dir, entry, sizeof entry);

    int ready[2], until[2];
    assert_int_equal(pipe(ready), 0);
    assert_int_equal(pipe(until), 0);
    fflush(stdout);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) { /* holds the lock until the test closes `until` (or exits) */
        close(until[1]);
        int fd = open(entry, O_RDONLY);
        char ok = fd >= 0 && flock(fd, LOCK_EX) == 0;
        if (write(ready[1], &ok, 1) != 1) _exit(1);
        char byte;
        while (read(until[0], &byte, 1) < 0) {
        }
        _exit(0);
    }
    close(ready[1]);
    close(until[0]);
    char ok = 0;
    assert_int_equal(read(ready[0], &ok, 1), 1);
    close(ready[0]);
    assert_int_equal(ok, 1);

    cachekit_buf out = CACHEKIT_BUF_INIT;
    for (int i = 0; i < 8; ++i) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        assert_int_equal(cachekit_cache_get(c, &out, NULL, "ns", "k", 1), CACHEKIT_ENOTFOUND);
        assert_int_equal(cachekit_cache_put(c, "ns", "k", 1, small, sizeof small, CACHEKIT_TTL_DEFAULT), CACHEKIT_OK);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
        if (ms > 1000) fail_msg("a get and a put of the locked key took %.0f ms", ms);
    }
    assert_int_equal(cachekit_cache_put(c, "ns", "other", 5, small, sizeof small, CACHEKIT_TTL_DEFAULT), CACHEKIT_OK);
    assert_int_equal(cachekit_cache_get(c, &out, NULL, "ns", "other", 5), CACHEKIT_OK);
    cachekit_cache_stats st;
    st.struct_size = sizeof st;
    assert_int_equal(cachekit_cache_stats_get(c, &st, NULL), CACHEKIT_OK);
    assert_int_equal(st.breaker_state, CACHEKIT_BREAKER_CLOSED);
    assert_true(st.backend_errors >= 16); /* counted, then carried on without L2 */

    close(until[1]);
    waitpid(pid, NULL, 0);
    assert_int_equal(cachekit_cache_get(c, &out, NULL, "ns", "k", 1), CACHEKIT_OK);
    cachekit_buf_dispose(&out);
    cachekit_cache_free(c);
}

static int load_big(cachekit_load *load, void *payload) {
    (void)payload;
    static char big[2000];
    mp_str(big, sizeof big);
    return cachekit_load_set_value(load, big, sizeof big);
}

/* A value over the file L2's max_value_bytes (below the cache's) is too
 * large, as over the cache's own limit: put -> ETOOBIG, not stored;
 * get_or_load hands it back without storing it. */
static void test_cache_over_file_value_limit(void **state) {
    (void)state;
    cachekit_cache *c = file_cache("value-limit", 0, 1000);
    static char big[2000];
    mp_str(big, sizeof big);
    assert_int_equal(cachekit_cache_put(c, "ns", "k", 1, big, sizeof big, CACHEKIT_TTL_DEFAULT), CACHEKIT_ETOOBIG);
    cachekit_buf out = CACHEKIT_BUF_INIT;
    assert_int_equal(cachekit_cache_get(c, &out, NULL, "ns", "k", 1), CACHEKIT_ENOTFOUND);
    assert_int_equal(cachekit_cache_get_or_load(c, &out, NULL, "ns", "L", 1, CACHEKIT_TTL_DEFAULT, load_big, NULL),
                     CACHEKIT_OK);
    assert_int_equal(out.size, sizeof big);
    assert_int_equal(cachekit_cache_get(c, &out, NULL, "ns", "L", 1), CACHEKIT_ENOTFOUND);
    cachekit_buf_dispose(&out);
    cachekit_cache_free(c);
}

/* cachekit_cache_new with no URL in the options or the environment. */
static int new_default_cache(void) {
    unsetenv("CACHEKIT_REDIS_URL");
    unsetenv("REDIS_URL");
    unsetenv("CACHEKIT_FILE_CACHE_DIR");
    cachekit_cache *c = NULL;
    int rc = cachekit_cache_new(&c, NULL);
    if (rc == CACHEKIT_OK) {
        char small[10];
        mp_str(small, sizeof small);
        assert_int_equal(cachekit_cache_put(c, "ns", "k", 1, small, sizeof small, CACHEKIT_TTL_DEFAULT), CACHEKIT_OK);
    }
    cachekit_cache_free(c);
    return rc;
}

static mode_t mode_of(const char *path) {
    struct stat st;
    if (lstat(path, &st) != 0) return 0;
    return st.st_mode;
}

/* The embedded default L2 directory is per user: $XDG_CACHE_HOME/cachekit,
 * else $TMPDIR/cachekit-<uid>, created 0700; one that is a symlink, open to
 * others or owned by someone else is refused. */
static void test_default_dir_per_user(void **state) {
    (void)state;
    char xdg[300], dir[400], other[400], cmd[900];
    snprintf(xdg, sizeof xdg, "%s/xdg", g_tmp);
    snprintf(dir, sizeof dir, "%s/cachekit", xdg);
    setenv("XDG_CACHE_HOME", xdg, 1); /* missing parents are created too */
    assert_int_equal(new_default_cache(), CACHEKIT_OK);
    assert_true(S_ISDIR(mode_of(dir)));
    assert_int_equal(mode_of(dir) & 07777, 0700);
    assert_int_equal(chmod(dir, 0755), 0); /* readable by others: refused */
    assert_int_equal(new_default_cache(), CACHEKIT_EINVAL);
    assert_non_null(strstr(cachekit_error_last_message(), dir));
    assert_int_equal(chmod(dir, 0700), 0);
    assert_int_equal(new_default_cache(), CACHEKIT_OK);
    if (geteuid() == 0) { /* owned by another user: refused */
        assert_int_equal(chown(dir, 65534, 65534), 0);
        assert_int_equal(new_default_cache(), CACHEKIT_EINVAL);
    }
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    snprintf(other, sizeof other, "%s/elsewhere", g_tmp);
    assert_int_equal(mkdir(other, 0700), 0);
    assert_int_equal(symlink(other, dir), 0); /* a symlink: refused, never followed */
    assert_int_equal(new_default_cache(), CACHEKIT_EINVAL);
    assert_true(S_ISLNK(mode_of(dir)));

    /* No XDG_CACHE_HOME (or a relative one): $TMPDIR/cachekit-<uid>. */
    char tmpdir[300], peruser[400];
    const char *saved = getenv("TMPDIR");
    char saved_copy[300] = "";
    if (saved) snprintf(saved_copy, sizeof saved_copy, "%s", saved);
    snprintf(tmpdir, sizeof tmpdir, "%s/tmp", g_tmp);
    assert_int_equal(mkdir(tmpdir, 0700), 0);
    setenv("TMPDIR", tmpdir, 1);
    setenv("XDG_CACHE_HOME", "relative/ignored", 1);
    snprintf(peruser, sizeof peruser, "%s/cachekit-%u", tmpdir, (unsigned)geteuid());
    assert_int_equal(new_default_cache(), CACHEKIT_OK);
    assert_int_equal(mode_of(peruser) & 07777, 0700);
    if (saved) setenv("TMPDIR", saved_copy, 1);
    else unsetenv("TMPDIR");
    unsetenv("XDG_CACHE_HOME");
}

static void test_redis_dispatch(void **state) {
    (void)state;
    /* Redis connects lazily: a server that is down fails calls, not the open.
     * Port 1 on loopback refuses connections. */
    cachekit_backend_options o = CACHEKIT_BACKEND_OPTIONS_INIT;
    o.fail_closed = 1;
    o.connect_timeout_ms = 500;
    o.command_timeout_ms = 500;
    cachekit_backend *closed = open_ok("redis://127.0.0.1:1/0", &o);
    assert_string_equal(cachekit_backend_kind(closed), "redis");
    cachekit_buf out = CACHEKIT_BUF_INIT;
    int rc = cachekit_backend_get(closed, &out, "k", 1);
    if (rc != CACHEKIT_EBACKEND && rc != CACHEKIT_ETIMEOUT) fail_msg("fail-closed get on a dead server: %d", rc);
    cachekit_backend_free(closed);

    cachekit_backend *open = open_ok("redis://127.0.0.1:1", NULL);
    assert_int_equal(cachekit_backend_get(open, &out, "k", 1), CACHEKIT_ENOTFOUND); /* degraded */
    assert_int_equal(cachekit_backend_set(open, "k", 1, "v", 1, 0), CACHEKIT_OK);    /* skipped */
    cachekit_backend_stats st;
    st.struct_size = sizeof st;
    assert_int_equal(cachekit_backend_stats_get(open, &st), CACHEKIT_OK);
    assert_int_equal(st.degraded_reads, 1);
    assert_int_equal(st.skipped_writes, 1);
    assert_int_equal(st.failures, 2);
    assert_int_not_equal(cachekit_backend_health(open, NULL), CACHEKIT_OK); /* never degraded */
    cachekit_backend_free(open);

    cachekit_backend *unix_b = open_ok("unix:///nonexistent/cachekit.sock", NULL);
    assert_string_equal(cachekit_backend_kind(unix_b), "redis");
    cachekit_backend_free(unix_b);

    cachekit_backend *b = NULL;
    assert_int_equal(cachekit_backend_open(&b, "redis://127.0.0.1:notaport", NULL), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_backend_open(&b, "unix://relative.sock", NULL), CACHEKIT_EINVAL);
    assert_null(b);
    cachekit_buf_dispose(&out);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_options_init),
        cmocka_unit_test(test_url_dispatch),
        cmocka_unit_test(test_env_fallback),
        cmocka_unit_test(test_calls_memory),
        cmocka_unit_test(test_calls_file),
        cmocka_unit_test(test_ops_memory),
        cmocka_unit_test(test_ops_file),
        cmocka_unit_test(test_ops_file_two_handles),
        cmocka_unit_test(test_argument_validation),
        cmocka_unit_test(test_stats_struct_size),
        cmocka_unit_test(test_file_limits_from_options),
        cmocka_unit_test(test_fail_closed_file_unhealthy),
        cmocka_unit_test(test_cache_full_file_l2_skips),
        cmocka_unit_test(test_cache_over_file_value_limit),
        cmocka_unit_test(test_cache_entry_locked_elsewhere),
        cmocka_unit_test(test_default_dir_per_user),
        cmocka_unit_test(test_redis_dispatch),
    };
    return cmocka_run_group_tests_name("backend C API", tests, make_tmp, remove_tmp);
}
