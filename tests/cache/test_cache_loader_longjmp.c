/* A loader that leaves by longjmp (as a Lua error or a Go panic turned into
 * a jump would) must not wedge its key: the same thread's next call works,
 * wherever it comes from, and other threads are neither blocked for ever
 * nor handed EDEADLOCK. The jump crosses only the library's frames, which is
 * exactly the case to survive. C, so no C++ destructor of the test itself is
 * skipped. */
#include <cachekit/cachekit.h>

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

/* The library's frames that a longjmp skips never free what they hold (a few
 * hundred bytes): that is the documented cost, not a leak under test. LSan is
 * told so; memcheck has no such switch, so the jumping tests skip under it. */
void __lsan_disable(void) __attribute__((weak));
void __lsan_enable(void) __attribute__((weak));

static void skip_under_valgrind(void) {
    const char *preload = getenv("LD_PRELOAD");
    if (preload && strstr(preload, "vgpreload")) skip();
}

static const char kValue[] = "\xa2ok"; /* MessagePack "ok" */

static jmp_buf jump_back; /* only the main thread jumps */

static int jumping_loader(cachekit_load *load, void *payload) {
    (void)load;
    (void)payload;
    longjmp(jump_back, 1);
}

static int value_loader(cachekit_load *load, void *payload) {
    (void)payload;
    return cachekit_load_set_value(load, kValue, sizeof kValue - 1);
}

static cachekit_cache *open_cache(uint32_t load_timeout_ms) {
    cachekit_cache_options o;
    assert_int_equal(cachekit_cache_options_init(&o, sizeof o), CACHEKIT_OK);
    o.backend_url = "memory://";
    o.load_timeout_ms = load_timeout_ms;
    cachekit_cache *c = NULL;
    assert_int_equal(cachekit_cache_new(&c, &o), CACHEKIT_OK);
    return c;
}

/* 1 when the loader jumped out of cachekit_cache_get_or_load. */
static __attribute__((noinline)) int load_and_jump(cachekit_cache *c, const char *key) {
    cachekit_buf out = CACHEKIT_BUF_INIT;
    volatile int jumped = 0;
    if (__lsan_disable) __lsan_disable();
    if (setjmp(jump_back) == 0)
        cachekit_cache_get_or_load(c, &out, NULL, "lj", key, strlen(key), CACHEKIT_TTL_DEFAULT, jumping_loader, NULL);
    else
        jumped = 1;
    if (__lsan_enable) __lsan_enable();
    cachekit_buf_dispose(&out);
    return jumped;
}

/* A normal get_or_load; its status, with the source in *source. */
static __attribute__((noinline)) int load_value(cachekit_cache *c, const char *key, int *source) {
    cachekit_buf out = CACHEKIT_BUF_INIT;
    cachekit_lookup info = CACHEKIT_LOOKUP_INIT;
    int rc = cachekit_cache_get_or_load(c, &out, &info, "lj", key, strlen(key), CACHEKIT_TTL_DEFAULT, value_loader,
                                        NULL);
    if (rc == CACHEKIT_OK) {
        assert_int_equal(out.size, sizeof kValue - 1);
        assert_memory_equal(out.ptr, kValue, out.size);
    }
    if (source) *source = info.source;
    cachekit_buf_dispose(&out);
    return rc;
}

/* The same call from much deeper in the stack, over memory the jumped-out
 * frames used (so their marks are overwritten). */
static __attribute__((noinline)) int load_value_deeper(cachekit_cache *c, const char *key, int depth) {
    volatile char pad[2048];
    memset((char *)pad, depth, sizeof pad);
    int rc = depth > 0 ? load_value_deeper(c, key, depth - 1) : load_value(c, key, NULL);
    (void)pad[0]; /* keeps the frame (no tail call) */
    return rc;
}

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void test_same_thread_same_depth(void **state) {
    (void)state;
    skip_under_valgrind();
    cachekit_cache *c = open_cache(10000);
    assert_int_equal(load_and_jump(c, "k1"), 1);
    int source = 0;
    assert_int_equal(load_value(c, "k1", &source), CACHEKIT_OK);
    assert_int_equal(source, CACHEKIT_SOURCE_LOADED);
    /* and again, twice in a row, for another key */
    assert_int_equal(load_and_jump(c, "k2"), 1);
    assert_int_equal(load_and_jump(c, "k2"), 1);
    assert_int_equal(load_value(c, "k2", &source), CACHEKIT_OK);
    assert_int_equal(load_value(c, "k2", &source), CACHEKIT_OK);
    assert_int_equal(source, CACHEKIT_SOURCE_L1);
    cachekit_cache_free(c);
}

static void test_same_thread_deeper(void **state) {
    (void)state;
    skip_under_valgrind();
    cachekit_cache *c = open_cache(10000);
    assert_int_equal(load_and_jump(c, "k1"), 1);
    /* 8 x 2 KiB below the first call: not EDEADLOCK, the key loads */
    assert_int_equal(load_value_deeper(c, "k1", 8), CACHEKIT_OK);
    assert_int_equal(load_value(c, "k1", NULL), CACHEKIT_OK);
    cachekit_cache_free(c);
}

struct other {
    cachekit_cache *c;
    const char *key;
    int rc;
    double seconds;
};

static void *other_thread(void *arg) {
    struct other *o = arg;
    double t0 = now_seconds();
    o->rc = load_value(o->c, o->key, NULL);
    o->seconds = now_seconds() - t0;
    return NULL;
}

static void run_other(struct other *o) {
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, other_thread, o), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
}

/* Another thread meets the vanished leader's flight: it waits at most
 * load_timeout_ms once, and the key works for everyone after that. */
static void test_other_threads(void **state) {
    (void)state;
    skip_under_valgrind();
    cachekit_cache *c = open_cache(300);
    assert_int_equal(load_and_jump(c, "k1"), 1);
    struct other first = {c, "k1", 0, 0};
    run_other(&first);
    assert_true(first.rc == CACHEKIT_ETIMEOUT || first.rc == CACHEKIT_OK);
    assert_true(first.seconds < 5.0);
    struct other second = {c, "k1", 0, 0};
    run_other(&second);
    assert_int_equal(second.rc, CACHEKIT_OK);
    assert_true(second.seconds < 2.0);
    /* and the jumping thread itself */
    assert_int_equal(load_value(c, "k1", NULL), CACHEKIT_OK);
    cachekit_cache_free(c);
}

/* A waiter blocked on the vanished leader's flight is released as soon as the
 * leader's thread calls again (with CACHEKIT_EUSER), long before its timeout. */
static void test_waiter_released(void **state) {
    (void)state;
    skip_under_valgrind();
    cachekit_cache *c = open_cache(20000);
    assert_int_equal(load_and_jump(c, "k1"), 1);
    struct other waiter = {c, "k1", 0, 0};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, other_thread, &waiter), 0);
    struct timespec pause = {0, 200 * 1000 * 1000};
    nanosleep(&pause, NULL); /* let it start waiting */
    assert_int_equal(load_value(c, "k1", NULL), CACHEKIT_OK);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_true(waiter.rc == CACHEKIT_EUSER || waiter.rc == CACHEKIT_OK);
    assert_true(waiter.seconds < 10.0);
    cachekit_cache_free(c);
}

/* A real self-request from inside a loader is still EDEADLOCK (the detection
 * does not mistake a live leader for a vanished one). */
static int self_asking_loader(cachekit_load *load, void *payload) {
    cachekit_cache *c = payload;
    cachekit_buf out = CACHEKIT_BUF_INIT;
    int rc = cachekit_cache_get_or_load(c, &out, NULL, "lj", "k1", 2, CACHEKIT_TTL_DEFAULT, value_loader, NULL);
    cachekit_buf_dispose(&out);
    if (rc != CACHEKIT_EDEADLOCK) return 1;
    return cachekit_load_set_value(load, kValue, sizeof kValue - 1);
}

static void test_live_self_request_deadlocks(void **state) {
    (void)state;
    cachekit_cache *c = open_cache(10000);
    cachekit_buf out = CACHEKIT_BUF_INIT;
    assert_int_equal(cachekit_cache_get_or_load(c, &out, NULL, "lj", "k1", 2, CACHEKIT_TTL_DEFAULT, self_asking_loader, c),
                     CACHEKIT_OK);
    cachekit_buf_dispose(&out);
    cachekit_cache_free(c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_thread_same_depth),
        cmocka_unit_test(test_same_thread_deeper),
        cmocka_unit_test(test_other_threads),
        cmocka_unit_test(test_waiter_released),
        cmocka_unit_test(test_live_self_request_deadlocks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
