/* The demo's C side: get_user(id) behind cachekit_cache_get_or_load in interop
 * mode (namespace "demo", operation "get_user"), so the Python, Rust and Go
 * sides of demo/ compute the same keys and read the same entries.
 *
 *   get_user ID...    calls get_user(ID) for every ID, then once more each;
 *                     one line per call: "c ID SOURCE MILLISECONDS"
 *
 * The L2 comes from the environment (REDIS_URL, else CACHEKIT_FILE_CACHE_DIR). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, nanosleep */

#include <cachekit/cachekit.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { DB_SLEEP_MS = 50 };

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* MessagePack of a non-negative integer (uint 64 form above the fixint range). */
static size_t pack_uint(unsigned char *out, uint64_t v) {
    if (v < 128) {
        out[0] = (unsigned char)v;
        return 1;
    }
    out[0] = 0xcf;
    for (int i = 0; i < 8; i++) out[1 + i] = (unsigned char)(v >> (56 - 8 * i));
    return 9;
}

static size_t pack_str(unsigned char *out, const char *s) {
    size_t n = strlen(s); /* the demo's strings are < 32 bytes: fixstr */
    out[0] = (unsigned char)(0xa0 | n);
    memcpy(out + 1, s, n);
    return 1 + n;
}

/* The "database": 50 ms, then {"id": id, "name": "user-<id>"}. */
static int load_user(cachekit_load *load, void *payload) {
    uint64_t id = *(const uint64_t *)payload;
    struct timespec pause = {0, DB_SLEEP_MS * 1000000L};
    nanosleep(&pause, NULL);
    char name[32];
    snprintf(name, sizeof name, "user-%llu", (unsigned long long)id);
    unsigned char value[64];
    size_t n = 0;
    value[n++] = 0x82; /* map of 2 */
    n += pack_str(value + n, "id");
    n += pack_uint(value + n, id);
    n += pack_str(value + n, "name");
    n += pack_str(value + n, name);
    return cachekit_load_set_value(load, value, n) == CACHEKIT_OK ? 0 : 1;
}

static const char *source_name(int source) {
    switch (source) {
    case CACHEKIT_SOURCE_L1: return "l1";
    case CACHEKIT_SOURCE_L2: return "l2";
    case CACHEKIT_SOURCE_LOADED: return "miss";
    case CACHEKIT_SOURCE_WAITED: return "waited";
    default: return "none";
    }
}

static int call(cachekit_cache *cache, uint64_t id) {
    unsigned char args[16];
    size_t n = 0;
    args[n++] = 0x91; /* [id] */
    n += pack_uint(args + n, id);
    cachekit_error err = CACHEKIT_ERROR_INIT;
    cachekit_buf key = {0}, value = {0};
    int rc = cachekit_key_interop_ex(&key, NULL, "demo", "get_user", args, n, &err);
    if (rc != CACHEKIT_OK) {
        fprintf(stderr, "get_user(c): key: %s\n", err.message);
        return 1;
    }
    cachekit_lookup info = CACHEKIT_LOOKUP_INIT;
    double start = now_ms();
    rc = cachekit_cache_get_or_load_ex(cache, &value, &info, "demo", key.ptr, key.size, 300.0, load_user,
                                       &id, &err);
    double took = now_ms() - start;
    cachekit_buf_dispose(&key);
    cachekit_buf_dispose(&value);
    if (rc != CACHEKIT_OK) {
        fprintf(stderr, "get_user(c): get_or_load: %s\n", err.message);
        return 1;
    }
    printf("c %llu %s %.4f\n", (unsigned long long)id, source_name(info.source), took);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s ID...\n", argv[0]);
        return 2;
    }
    cachekit_cache_options opts;
    cachekit_cache_options_init(&opts, sizeof opts);
    opts.format = CACHEKIT_FORMAT_INTEROP;
    opts.fail_closed = CACHEKIT_ON; /* a backend that is down must show, not look like misses */
    cachekit_error err = CACHEKIT_ERROR_INIT;
    cachekit_cache *cache = NULL;
    if (cachekit_cache_new_ex(&cache, &opts, &err) != CACHEKIT_OK) {
        fprintf(stderr, "get_user(c): cache: %s\n", err.message);
        return 1;
    }
    int failed = 0;
    for (int round = 0; round < 2; round++)
        for (int i = 1; i < argc; i++) failed |= call(cache, strtoull(argv[i], NULL, 10));
    cachekit_cache_free(cache);
    return failed;
}
