/* The layout of the public structs, so an accidental change is caught.
 * Structs versioned by a leading struct_size field must keep it first. */
#include <cachekit/cachekit.h>

#include <stddef.h>
#include <stdio.h>

static int passed = 0;
static int failed = 0;

static void check_size(const char *what, size_t got, size_t want) {
    if (got == want) {
        ++passed;
        printf("ok %s == %zu\n", what, want);
    } else {
        ++failed;
        printf("FAIL %s: %zu, expected %zu\n", what, got, want);
    }
}

#define SIZE(type, want) check_size("sizeof(" #type ")", sizeof(type), (want))
#define OFFSET(type, field, want) check_size("offsetof(" #type ", " #field ")", offsetof(type, field), (want))

int main(void) {
    /* cachekit_buf: three pointer-sized fields. */
    SIZE(cachekit_buf, 3 * sizeof(void *));
    OFFSET(cachekit_buf, ptr, 0);
    OFFSET(cachekit_buf, size, sizeof(void *));
    OFFSET(cachekit_buf, capacity, 2 * sizeof(void *));
    SIZE(size_t, sizeof(void *));

    /* cachekit_derived_keys: 3 x 32-byte keys and a 16-byte fingerprint. */
    SIZE(cachekit_derived_keys, 112);
    OFFSET(cachekit_derived_keys, encryption, 0);
    OFFSET(cachekit_derived_keys, authentication, 32);
    OFFSET(cachekit_derived_keys, cache_keys, 64);
    OFFSET(cachekit_derived_keys, fingerprint, 96);

    /* cachekit_error: no pointer, fixed size, so any FFI can own one. */
    check_size("CACHEKIT_ERROR_NAME_SIZE", CACHEKIT_ERROR_NAME_SIZE, 32);
    check_size("CACHEKIT_ERROR_MESSAGE_SIZE", CACHEKIT_ERROR_MESSAGE_SIZE, 1024);
    OFFSET(cachekit_error, code, sizeof(size_t));
    OFFSET(cachekit_error, name, sizeof(size_t) + sizeof(int));
    OFFSET(cachekit_error, message, sizeof(size_t) + sizeof(int) + 32);
    SIZE(cachekit_error, (sizeof(size_t) + sizeof(int) + 32 + 1024 + sizeof(size_t) - 1) / sizeof(size_t) * sizeof(size_t));
    {
        cachekit_error e = CACHEKIT_ERROR_INIT;
        check_size("CACHEKIT_ERROR_INIT.struct_size", e.struct_size, sizeof(cachekit_error));
        check_size("CACHEKIT_ERROR_INIT.code", (size_t)e.code, 0);
    }

    /* cachekit_health (0.2): no pointer, fixed size, as cachekit_error; the
     * Rust and Go bindings declare the same layout by hand. */
    check_size("CACHEKIT_HEALTH_BACKEND_SIZE", CACHEKIT_HEALTH_BACKEND_SIZE, 256);
    OFFSET(cachekit_health, state, sizeof(size_t));
    OFFSET(cachekit_health, coherence, sizeof(size_t) + sizeof(int));
    OFFSET(cachekit_health, consecutive_failures, sizeof(size_t) + 2 * sizeof(int));
    OFFSET(cachekit_health, since, sizeof(size_t) + 2 * sizeof(int) + 8);
    OFFSET(cachekit_health, last_error_at, sizeof(size_t) + 2 * sizeof(int) + 16);
    OFFSET(cachekit_health, backend, sizeof(size_t) + 2 * sizeof(int) + 24);
    OFFSET(cachekit_health, last_error, sizeof(size_t) + 2 * sizeof(int) + 24 + 256);
    SIZE(cachekit_health, sizeof(size_t) + 2 * sizeof(int) + 24 + 256 + 1024);
    {
        cachekit_health h = CACHEKIT_HEALTH_INIT;
        check_size("CACHEKIT_HEALTH_INIT.struct_size", h.struct_size, sizeof(cachekit_health));
    }

    /* Options structs embed no versioned struct by value: the backend
     * options of a cache are a pointer (since 0.2). */
    check_size("sizeof(cachekit_cache_options.backend_options)",
               sizeof(((cachekit_cache_options *)0)->backend_options), sizeof(void *));
    /* Fields appended after backend_options (0.2): right behind it. */
    OFFSET(cachekit_cache_options, refresh_ttl_on_get,
           offsetof(cachekit_cache_options, backend_options) + sizeof(void *));

    /* Appended in 0.2 after the first form (admission, issue 18): at the end. */
    OFFSET(cachekit_cache_options, l1_admission,
           offsetof(cachekit_cache_options, refresh_ttl_on_get) + sizeof(double));
    OFFSET(cachekit_l1_options, flags, offsetof(cachekit_l1_options, promote_interval_us) + sizeof(uint32_t));
    OFFSET(cachekit_l1_options, admission, offsetof(cachekit_l1_options, flags) + sizeof(uint32_t));
    OFFSET(cachekit_l1_counters, admitted, offsetof(cachekit_l1_counters, max_bytes) + sizeof(uint64_t));
    OFFSET(cachekit_l1_counters, rejected_by_admission, offsetof(cachekit_l1_counters, admitted) + sizeof(uint64_t));
    check_size("CACHEKIT_L1_ADMISSION_LRU", CACHEKIT_L1_ADMISSION_LRU, 0);
    check_size("CACHEKIT_L1_ADMISSION_TINYLFU", CACHEKIT_L1_ADMISSION_TINYLFU, 1);

    /* The TLS fields, appended in 0.2 after max_reply_bytes (three ints, then
     * the pointers at their natural alignment). */
    OFFSET(cachekit_backend_options, tls, offsetof(cachekit_backend_options, max_reply_bytes) + sizeof(uint64_t));
    OFFSET(cachekit_backend_options, tls_cert_reqs, offsetof(cachekit_backend_options, tls) + sizeof(int));
    OFFSET(cachekit_backend_options, tls_check_hostname, offsetof(cachekit_backend_options, tls) + 2 * sizeof(int));
    OFFSET(cachekit_backend_options, tls_ca_certs,
           (offsetof(cachekit_backend_options, tls) + 3 * sizeof(int) + sizeof(void *) - 1) / sizeof(void *) *
               sizeof(void *));
    OFFSET(cachekit_backend_options, tls_ca_path, offsetof(cachekit_backend_options, tls_ca_certs) + sizeof(void *));
    OFFSET(cachekit_backend_options, tls_certfile, offsetof(cachekit_backend_options, tls_ca_certs) + 2 * sizeof(void *));
    OFFSET(cachekit_backend_options, tls_keyfile, offsetof(cachekit_backend_options, tls_ca_certs) + 3 * sizeof(void *));
    SIZE(cachekit_backend_options, offsetof(cachekit_backend_options, tls_keyfile) + sizeof(void *));
    check_size("CACHEKIT_TLS_CERT_REQUIRED", CACHEKIT_TLS_CERT_REQUIRED, 0);
    check_size("CACHEKIT_TLS_CERT_OPTIONAL", CACHEKIT_TLS_CERT_OPTIONAL, 1);
    check_size("CACHEKIT_TLS_CERT_NONE", CACHEKIT_TLS_CERT_NONE, 2);
    check_size("CACHEKIT_TLS_CHECK_HOSTNAME_YES", CACHEKIT_TLS_CHECK_HOSTNAME_YES, 1);
    check_size("-CACHEKIT_TLS_CHECK_HOSTNAME_NO", (size_t)-CACHEKIT_TLS_CHECK_HOSTNAME_NO, 1);
    {
        cachekit_backend_options o = CACHEKIT_BACKEND_OPTIONS_INIT;
        check_size("CACHEKIT_BACKEND_OPTIONS_INIT.struct_size", o.struct_size, sizeof(cachekit_backend_options));
        check_size("CACHEKIT_BACKEND_OPTIONS_INIT.tls_keyfile", (size_t)(o.tls_keyfile != NULL), 0);
    }

    /* The pinned constants the layouts depend on. */
    check_size("CACHEKIT_KEY_SIZE", CACHEKIT_KEY_SIZE, 32);
    check_size("CACHEKIT_FINGERPRINT_SIZE", CACHEKIT_FINGERPRINT_SIZE, 16);
    check_size("CACHEKIT_NONCE_SIZE", CACHEKIT_NONCE_SIZE, 12);
    check_size("CACHEKIT_TAG_SIZE", CACHEKIT_TAG_SIZE, 16);

    /* Structs versioned by a leading struct_size field (the list is generated
     * from cachekit.h at build time, so new ones are covered at once). */
#define CK_VERSIONED_STRUCT(type) OFFSET(type, struct_size, 0);
#include "abi_versioned_structs.h"
#undef CK_VERSIONED_STRUCT

#ifdef CACHEKIT_L1_OPTIONS_INIT
    {
        cachekit_l1_options o = CACHEKIT_L1_OPTIONS_INIT;
        check_size("CACHEKIT_L1_OPTIONS_INIT.struct_size", o.struct_size, sizeof(cachekit_l1_options));
    }
#endif

    printf("struct_sizes: %d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
