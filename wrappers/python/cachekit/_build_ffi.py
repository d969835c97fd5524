"""cffi (API mode, out of line) build description for cachekit._ffi.

`CDEF` declares every cachekit_* function, type and integer constant of
include/cachekit/cachekit.h (tests/test_cdef.py checks that none is missing),
plus the `extern "Python"` loader callback the cache wrapper hands to
cachekit_cache_get_or_load.

Include and library directories come from pkg-config (`cachekit`). setup.py (pip
install, python -m build) calls `installed_ffibuilder`: libcachekit must be found
(else `LibcachekitNotFound` with what to install and set) and the extension gets an
rpath to the .pc's libdir. build_ext.py builds against a meson build tree instead
(PKG_CONFIG_PATH=<builddir>/meson-uninstalled, rpath <builddir>/src).
"""
from __future__ import annotations

import os
import shlex
import subprocess

from cffi import FFI

CDEF = r"""
#define CACHEKIT_VERSION_MAJOR ...
#define CACHEKIT_VERSION_MINOR ...
#define CACHEKIT_VERSION_PATCH ...
#define CACHEKIT_VERSION_NUMBER ...
typedef enum cachekit_status {
    CACHEKIT_OK = 0, CACHEKIT_ENOTFOUND = -1,
    CACHEKIT_EINVAL = -2,
    CACHEKIT_ENOMEM = -3,
    CACHEKIT_ECORRUPT = -4,
    CACHEKIT_ETOOBIG = -5,
    CACHEKIT_EBACKEND = -6,
    CACHEKIT_ETIMEOUT = -7,
    CACHEKIT_EUSER = -8,
    CACHEKIT_EDESERIALIZE = -9,
    CACHEKIT_EBOMB = -10,
    CACHEKIT_EDECOMPRESS = -11,
    CACHEKIT_ECHECKSUM = -12,
    CACHEKIT_ESIZE = -13,
    CACHEKIT_EDEPTH = -14,
    CACHEKIT_EOVERCLAIM = -15,
    CACHEKIT_ETRUNCATED = -16,
    CACHEKIT_ETRAILING = -17,
    CACHEKIT_EUNSUPPORTED = -18,
    CACHEKIT_ESEGMENT = -19,
    CACHEKIT_EKEY = -20,
    CACHEKIT_ECIPHERTEXT = -21,
    CACHEKIT_EAUTH = -22,
    CACHEKIT_EKEYNOTFOUND = -23,
    CACHEKIT_EFRAME = -24,
    CACHEKIT_ECRYPTO_UNAVAILABLE = -25,
    CACHEKIT_ENONCE = -26,
    CACHEKIT_EINTERNAL = -27,
    CACHEKIT_EBUSY = -28,
    CACHEKIT_EDEADLOCK = -29,
    CACHEKIT_ECIRCUIT_OPEN = -30
} cachekit_status;
const char *cachekit_error_name(int code);
int cachekit_error_last_code(void);
const char *cachekit_error_last_message(void);
void cachekit_error_clear(void);
#define CACHEKIT_ERROR_NAME_SIZE ...
#define CACHEKIT_ERROR_MESSAGE_SIZE ...
typedef struct cachekit_error {
    size_t struct_size;
    int code;
    char name[32];
    char message[1024];
} cachekit_error;
const char *cachekit_version_string(void);
unsigned cachekit_version_number(void);
typedef struct cachekit_buf {
    char *ptr;
    size_t size;
    size_t capacity;
} cachekit_buf;
void cachekit_buf_dispose(cachekit_buf *buf);
int cachekit_buf_reserve(cachekit_buf *buf, size_t capacity);
void cachekit_free(void *ptr);
#define CACHEKIT_MSGPACK_MIN_DEPTH ...
#define CACHEKIT_MSGPACK_MAX_DEPTH ...
typedef enum cachekit_msgpack_profile {
    CACHEKIT_PROFILE_ARGS = 1, CACHEKIT_PROFILE_VALUE = 2, CACHEKIT_PROFILE_AUTO_ARGS = 3
} cachekit_msgpack_profile;
#define CACHEKIT_MSGPACK_EXT_TIMESTAMP ...
#define CACHEKIT_MSGPACK_EXT_SET ...
int cachekit_msgpack_check(const void *data, size_t len, uint32_t max_depth);
int cachekit_msgpack_canonical(cachekit_buf *out, const void *data, size_t len, int profile);
int cachekit_msgpack_to_json(cachekit_buf *out, const void *data, size_t len);
int cachekit_serializer_code(cachekit_buf *out, const char *identity);
int cachekit_key_auto(cachekit_buf *out, const char *ns, const char *module, const char *qualname, const void *args, size_t args_len, int integrity, const char *serializer);
int cachekit_key_custom(cachekit_buf *out, const char *ns, const char *module, const char *qualname, const void *key, size_t key_len);
int cachekit_key_interop(cachekit_buf *out, cachekit_buf *canonical, const char *ns, const char *operation, const void *args, size_t args_len);
#define CACHEKIT_ENVELOPE_MAX_SIZE ...
#define CACHEKIT_MAX_COMPRESSION_RATIO ...
int cachekit_envelope_wrap(cachekit_buf *out, const void *data, size_t len, const char *format);
int cachekit_envelope_unwrap(cachekit_buf *out, cachekit_buf *format, const void *envelope, size_t len);
int cachekit_frame_encode(cachekit_buf *out, const char *serializer, const char *metadata_json, const void *payload, size_t payload_len);
int cachekit_frame_decode(cachekit_buf *serializer, cachekit_buf *metadata_json, size_t *payload_offset, const void *frame, size_t len);
#define CACHEKIT_V2_METHOD_NONE ...
#define CACHEKIT_V2_METHOD_LZ4 ...
int cachekit_container_v2_wrap(cachekit_buf *out, const void *value, size_t len, int method);
int cachekit_container_v2_unwrap(cachekit_buf *out, const void *container, size_t len);
#define CACHEKIT_KEY_SIZE ...
#define CACHEKIT_FINGERPRINT_SIZE ...
#define CACHEKIT_NONCE_SIZE ...
#define CACHEKIT_TAG_SIZE ...
#define CACHEKIT_MAX_PREVIOUS_KEYS ...
int cachekit_crypto_available(void);
int cachekit_master_key_from_hex(unsigned char out[32], const char *hex, size_t len);
typedef struct cachekit_derived_keys {
    unsigned char encryption[32];
    unsigned char authentication[32];
    unsigned char cache_keys[32];
    unsigned char fingerprint[16];
    ...;
} cachekit_derived_keys;
int cachekit_crypto_derive(cachekit_derived_keys *out, const void *master_key, size_t master_key_len, const char *tenant);
int cachekit_crypto_aad(cachekit_buf *out, const char *tenant, const char *cache_key, const char *format, int compressed, const char *original_type);
int cachekit_crypto_encrypt(cachekit_buf *out, const unsigned char key[32], const void *aad, size_t aad_len, const void *plaintext, size_t plaintext_len, const unsigned char *nonce);
int cachekit_crypto_decrypt(cachekit_buf *out, const unsigned char key[32], const void *aad, size_t aad_len, const void *ciphertext, size_t ciphertext_len);
typedef struct cachekit_keyring cachekit_keyring;
int cachekit_keyring_new(cachekit_keyring **out, const char *current_hex, const char *previous_hex);
int cachekit_keyring_new_raw(cachekit_keyring **out, const void *current, size_t current_len, const void *previous, size_t previous_count);
void cachekit_keyring_free(cachekit_keyring *keyring);
int cachekit_keyring_fingerprint(const cachekit_keyring *keyring, unsigned char out[16], const char *tenant);
int cachekit_keyring_encrypt(const cachekit_keyring *keyring, cachekit_buf *out, const char *tenant, const void *aad, size_t aad_len, const void *plaintext, size_t plaintext_len);
int cachekit_keyring_decrypt(const cachekit_keyring *keyring, cachekit_buf *out, int *key_index, const char *tenant, const unsigned char *fingerprint, const void *aad, size_t aad_len, const void *ciphertext, size_t ciphertext_len);
int cachekit_inspect(cachekit_buf *out_json, const void *data, size_t len, const cachekit_keyring *keyring, const char *tenant, const char *cache_key);
typedef struct cachekit_backend cachekit_backend;
#define CACHEKIT_BREAKER_CLOSED ...
#define CACHEKIT_BREAKER_OPEN ...
#define CACHEKIT_BREAKER_HALF_OPEN ...
typedef struct cachekit_backend_options {
    size_t struct_size;
    uint32_t pool_size;
    uint32_t connect_timeout_ms;
    uint32_t command_timeout_ms;
    uint32_t breaker_failures;
    uint32_t breaker_recovery_ms;
    uint32_t breaker_half_open_calls;
    uint32_t breaker_successes;
    int breaker_disabled;
    int fail_closed;
    uint32_t max_concurrency;
    uint32_t backpressure_wait_ms;
    uint64_t file_max_bytes;
    uint64_t file_max_entries;
    uint64_t file_max_value_bytes;
    uint64_t max_reply_bytes;
    int tls;
    int tls_cert_reqs;
    int tls_check_hostname;
    const char *tls_ca_certs;
    const char *tls_ca_path;
    const char *tls_certfile;
    const char *tls_keyfile;
    ...;
} cachekit_backend_options;
#define CACHEKIT_TLS_CERT_REQUIRED ...
#define CACHEKIT_TLS_CERT_OPTIONAL ...
#define CACHEKIT_TLS_CERT_NONE ...
#define CACHEKIT_TLS_CHECK_HOSTNAME_YES ...
#define CACHEKIT_TLS_CHECK_HOSTNAME_NO ...
int cachekit_backend_options_init(cachekit_backend_options *opts, size_t struct_size);
int cachekit_backend_open(cachekit_backend **out, const char *url, const cachekit_backend_options *opts);
void cachekit_backend_free(cachekit_backend *backend);
const char *cachekit_backend_kind(const cachekit_backend *backend);
int cachekit_backend_get(cachekit_backend *backend, cachekit_buf *out, const void *key, size_t key_len);
int cachekit_backend_set(cachekit_backend *backend, const void *key, size_t key_len, const void *value, size_t value_len, double ttl_seconds);
int cachekit_backend_delete(cachekit_backend *backend, const void *key, size_t key_len);
int cachekit_backend_exists(cachekit_backend *backend, const void *key, size_t key_len);
int cachekit_backend_ttl(cachekit_backend *backend, double *ttl_seconds, const void *key, size_t key_len);
int cachekit_backend_incr(cachekit_backend *backend, int64_t *value, const void *key, size_t key_len, int64_t delta);
int cachekit_backend_add(cachekit_backend *backend, int *added, const void *key, size_t key_len, const void *value, size_t value_len, double ttl_seconds);
int cachekit_backend_touch(cachekit_backend *backend, const void *key, size_t key_len, double ttl_seconds);
int cachekit_backend_delete_many(cachekit_backend *backend, uint64_t *deleted, const void *const *keys, const size_t *key_lens, size_t count);
int cachekit_backend_delete_many_packed(cachekit_backend *backend, uint64_t *deleted, const void *keys, const size_t *key_offsets, size_t count);
int cachekit_backend_get_many(cachekit_backend *backend, cachekit_buf *outs, int *results, const void *const *keys, const size_t *key_lens, size_t count);
int cachekit_backend_set_many(cachekit_backend *backend, const void *const *keys, const size_t *key_lens, const void *const *values, const size_t *value_lens, size_t count, double ttl_seconds);
int cachekit_backend_get_many_packed(cachekit_backend *backend, cachekit_buf *values_out, size_t *value_offsets, int *results, const void *keys, const size_t *key_offsets, size_t count);
int cachekit_backend_set_many_packed(cachekit_backend *backend, const void *keys, const size_t *key_offsets, const void *values, const size_t *value_offsets, size_t count, double ttl_seconds);
int cachekit_backend_clear(cachekit_backend *backend, uint64_t *deleted, const void *prefix, size_t prefix_len);
int cachekit_backend_lock(cachekit_backend *backend, cachekit_buf *token, const void *key, size_t key_len, uint32_t hold_ms);
int cachekit_backend_unlock(cachekit_backend *backend, const void *key, size_t key_len, const void *token, size_t token_len);
int cachekit_backend_health(cachekit_backend *backend, double *latency_ms);
typedef struct cachekit_backend_stats {
    size_t struct_size;
    int breaker_state;
    uint64_t calls;
    uint64_t failures;
    uint64_t timeouts;
    uint64_t rejected_open;
    uint64_t rejected_busy;
    uint64_t degraded_reads;
    uint64_t skipped_writes;
    uint64_t breaker_opened;
    double latency_ms_sum;
    uint64_t latency_count;
    ...;
} cachekit_backend_stats;
int cachekit_backend_stats_get(cachekit_backend *backend, cachekit_backend_stats *out);
typedef struct cachekit_cache cachekit_cache;
#define CACHEKIT_MAX_NAMESPACE_SIZE ...
#define CACHEKIT_DEFAULT ...
#define CACHEKIT_ON ...
#define CACHEKIT_OFF ...
#define CACHEKIT_FORMAT_AUTO ...
#define CACHEKIT_FORMAT_INTEROP ...
#define CACHEKIT_FORMAT_PLAIN ...
#define CACHEKIT_FORMAT_AUTO_PYTHON ...
static const double CACHEKIT_TTL_DEFAULT;
typedef struct cachekit_cache_options {
    size_t struct_size;
    const char *backend_url;
    cachekit_backend *backend;
    int format;
    int integrity;
    int encryption;
    const char *master_key_hex;
    const char *previous_keys_hex;
    const char *tenant;
    const char *key_prefix;
    double default_ttl_seconds;
    int l1;
    uint64_t l1_max_bytes;
    uint32_t l1_sweep_interval_ms;
    int swr;
    double swr_threshold_ratio;
    int fail_closed;
    uint64_t max_value_bytes;
    uint32_t load_timeout_ms;
    int cross_process_lock;
    uint32_t lock_hold_ms;
    uint32_t lock_wait_ms;
    const cachekit_backend_options *backend_options;
    double refresh_ttl_on_get;
    int l1_admission;
    ...;
} cachekit_cache_options;
int cachekit_cache_options_init(cachekit_cache_options *opts, size_t struct_size);
int cachekit_cache_new(cachekit_cache **out, const cachekit_cache_options *opts);
void cachekit_cache_free(cachekit_cache *cache);
#define CACHEKIT_SOURCE_NONE ...
#define CACHEKIT_SOURCE_L1 ...
#define CACHEKIT_SOURCE_L2 ...
#define CACHEKIT_SOURCE_LOADED ...
#define CACHEKIT_SOURCE_WAITED ...
typedef struct cachekit_lookup {
    size_t struct_size;
    int source;
    int refresh;
    uint64_t refresh_claim;
    double age_seconds;
    int temporal_keys;
    ...;
} cachekit_lookup;
int cachekit_cache_get(cachekit_cache *cache, cachekit_buf *out, cachekit_lookup *info, const char *ns, const void *key, size_t key_len);
int cachekit_cache_peek(cachekit_cache *cache, cachekit_buf *out, cachekit_lookup *info, const char *ns, const void *key, size_t key_len);
int cachekit_cache_put(cachekit_cache *cache, const char *ns, const void *key, size_t key_len, const void *value, size_t value_len, double ttl_seconds);
typedef struct cachekit_load cachekit_load;
typedef int (*cachekit_loader)(cachekit_load *load, void *payload);
int cachekit_load_set_value(cachekit_load *load, const void *value, size_t value_len);
int cachekit_load_set_ttl(cachekit_load *load, double ttl_seconds);
int cachekit_load_set_error(cachekit_load *load, const char *message);
int cachekit_cache_get_or_load(cachekit_cache *cache, cachekit_buf *out, cachekit_lookup *info, const char *ns, const void *key, size_t key_len, double ttl_seconds, cachekit_loader loader, void *payload);
int cachekit_cache_put_refresh(cachekit_cache *cache, const char *ns, const void *key, size_t key_len, const void *value, size_t value_len, double ttl_seconds, uint64_t refresh_claim);
int cachekit_cache_abandon_refresh(cachekit_cache *cache, const void *key, size_t key_len, uint64_t refresh_claim);
int cachekit_cache_get_for_load(cachekit_cache *cache, cachekit_buf *out, cachekit_lookup *info, const char *ns, const void *key, size_t key_len);
int cachekit_cache_invalidate(cachekit_cache *cache, const char *ns, const void *key, size_t key_len);
int cachekit_cache_invalidate_namespace(cachekit_cache *cache, const char *ns);
int cachekit_cache_clear(cachekit_cache *cache);
int cachekit_cache_track_function(cachekit_cache *cache, const char *ns, const char *function, const void *key_head, size_t key_head_len, int *kept);
int cachekit_cache_invalidate_function(cachekit_cache *cache, const char *ns, const char *function, uint64_t *deleted);
typedef struct cachekit_cache_stats {
    size_t struct_size;
    uint64_t l1_hits, l2_hits, misses, stores, loads, load_errors, waits;
    uint64_t stale_served, refreshes, dropped_fills, too_large, invalidations;
    uint64_t backend_errors, timeouts, corrupt, tampered, wrong_key, downgrade, serializer_mismatch;
    uint64_t l2_latency_count;
    double l2_latency_sum_ms;
    uint64_t l1_entries, l1_bytes, l1_evictions, l1_expirations;
    int breaker_state;
    ...;
} cachekit_cache_stats;
int cachekit_cache_stats_get(cachekit_cache *cache, cachekit_cache_stats *out, const char *ns);
int cachekit_cache_metrics_text(cachekit_cache *cache, cachekit_buf *out);
int cachekit_cache_claims_held(cachekit_cache *cache, uint64_t *out);
typedef struct cachekit_l1 cachekit_l1;
#define CACHEKIT_L1_DEFAULT_MAX_BYTES ...
#define CACHEKIT_L1_MIN_MAX_BYTES ...
#define CACHEKIT_L1_MAX_KEY_SIZE ...
#define CACHEKIT_L1_MAX_NAMESPACE_SIZE ...
#define CACHEKIT_L1_MAX_SHARDS ...
#define CACHEKIT_L1_DEFAULT_SWEEP_INTERVAL_MS ...
#define CACHEKIT_L1_DEFAULT_PROMOTE_INTERVAL_US ...
#define CACHEKIT_L1_ADMISSION_LRU ...
#define CACHEKIT_L1_ADMISSION_TINYLFU ...
static const double CACHEKIT_L1_MAX_TTL_SECONDS;
static const double CACHEKIT_L1_TTL_NONE;
typedef struct cachekit_l1_options {
    size_t struct_size;
    uint64_t max_bytes;
    uint32_t shards;
    uint32_t sweep_interval_ms;
    uint32_t promote_interval_us;
    uint32_t flags;
    int admission;
    ...;
} cachekit_l1_options;
int cachekit_l1_options_init(cachekit_l1_options *opts, size_t struct_size);
int cachekit_l1_new(cachekit_l1 **out, const cachekit_l1_options *opts);
void cachekit_l1_free(cachekit_l1 *l1);
int cachekit_l1_get(cachekit_l1 *l1, cachekit_buf *out, const void *key, size_t key_len);
int cachekit_l1_put(cachekit_l1 *l1, const void *ns, size_t ns_len, const void *key, size_t key_len, const void *value, size_t value_len, double ttl_seconds);
int cachekit_l1_begin_fill(cachekit_l1 *l1, uint64_t *ticket);
int cachekit_l1_put_filled(cachekit_l1 *l1, const void *ns, size_t ns_len, const void *key, size_t key_len, const void *value, size_t value_len, double ttl_seconds, uint64_t ticket, int *stored);
int cachekit_l1_invalidate(cachekit_l1 *l1, const void *key, size_t key_len);
int cachekit_l1_invalidate_namespace(cachekit_l1 *l1, const void *ns, size_t ns_len);
int cachekit_l1_clear(cachekit_l1 *l1);
typedef struct cachekit_l1_counters {
    size_t struct_size;
    uint64_t hits;
    uint64_t misses;
    uint64_t inserts;
    uint64_t evictions;
    uint64_t expirations;
    uint64_t rejected_too_large;
    uint64_t invalidations;
    uint64_t dropped_fills;
    uint64_t entries;
    uint64_t bytes;
    uint64_t max_bytes;
    uint64_t admitted;
    uint64_t rejected_by_admission;
    ...;
} cachekit_l1_counters;
int cachekit_l1_stats(cachekit_l1 *l1, cachekit_l1_counters *out);
/* The _ex forms (per-call errors). */
int cachekit_buf_reserve_ex(cachekit_buf *buf, size_t capacity, cachekit_error *err);
int cachekit_msgpack_check_ex(const void *data, size_t len, uint32_t max_depth, cachekit_error *err);
int cachekit_msgpack_canonical_ex(cachekit_buf *out, const void *data, size_t len, int profile, cachekit_error *err);
int cachekit_msgpack_to_json_ex(cachekit_buf *out, const void *data, size_t len, cachekit_error *err);
int cachekit_serializer_code_ex(cachekit_buf *out, const char *identity, cachekit_error *err);
int cachekit_key_auto_ex(cachekit_buf *out, const char *ns, const char *module, const char *qualname, const void *args, size_t args_len, int integrity, const char *serializer, cachekit_error *err);
int cachekit_key_custom_ex(cachekit_buf *out, const char *ns, const char *module, const char *qualname, const void *key, size_t key_len, cachekit_error *err);
int cachekit_key_interop_ex(cachekit_buf *out, cachekit_buf *canonical, const char *ns, const char *operation, const void *args, size_t args_len, cachekit_error *err);
int cachekit_envelope_wrap_ex(cachekit_buf *out, const void *data, size_t len, const char *format, cachekit_error *err);
int cachekit_envelope_unwrap_ex(cachekit_buf *out, cachekit_buf *format, const void *envelope, size_t len, cachekit_error *err);
int cachekit_frame_encode_ex(cachekit_buf *out, const char *serializer, const char *metadata_json, const void *payload, size_t payload_len, cachekit_error *err);
int cachekit_frame_decode_ex(cachekit_buf *serializer, cachekit_buf *metadata_json, size_t *payload_offset, const void *frame, size_t len, cachekit_error *err);
int cachekit_container_v2_wrap_ex(cachekit_buf *out, const void *value, size_t len, int method, cachekit_error *err);
int cachekit_container_v2_unwrap_ex(cachekit_buf *out, const void *container, size_t len, cachekit_error *err);
int cachekit_master_key_from_hex_ex(unsigned char out[32], const char *hex, size_t len, cachekit_error *err);
int cachekit_crypto_derive_ex(cachekit_derived_keys *out, const void *master_key, size_t master_key_len, const char *tenant, cachekit_error *err);
int cachekit_crypto_aad_ex(cachekit_buf *out, const char *tenant, const char *cache_key, const char *format, int compressed, const char *original_type, cachekit_error *err);
int cachekit_crypto_encrypt_ex(cachekit_buf *out, const unsigned char key[32], const void *aad, size_t aad_len, const void *plaintext, size_t plaintext_len, const unsigned char *nonce, cachekit_error *err);
int cachekit_crypto_decrypt_ex(cachekit_buf *out, const unsigned char key[32], const void *aad, size_t aad_len, const void *ciphertext, size_t ciphertext_len, cachekit_error *err);
int cachekit_keyring_new_ex(cachekit_keyring **out, const char *current_hex, const char *previous_hex, cachekit_error *err);
int cachekit_keyring_new_raw_ex(cachekit_keyring **out, const void *current, size_t current_len, const void *previous, size_t previous_count, cachekit_error *err);
int cachekit_keyring_fingerprint_ex(const cachekit_keyring *keyring, unsigned char out[16], const char *tenant, cachekit_error *err);
int cachekit_keyring_encrypt_ex(const cachekit_keyring *keyring, cachekit_buf *out, const char *tenant, const void *aad, size_t aad_len, const void *plaintext, size_t plaintext_len, cachekit_error *err);
int cachekit_keyring_decrypt_ex(const cachekit_keyring *keyring, cachekit_buf *out, int *key_index, const char *tenant, const unsigned char *fingerprint, const void *aad, size_t aad_len, const void *ciphertext, size_t ciphertext_len, cachekit_error *err);
int cachekit_inspect_ex(cachekit_buf *out_json, const void *data, size_t len, const cachekit_keyring *keyring, const char *tenant, const char *cache_key, cachekit_error *err);
int cachekit_backend_options_init_ex(cachekit_backend_options *opts, size_t struct_size, cachekit_error *err);
int cachekit_backend_open_ex(cachekit_backend **out, const char *url, const cachekit_backend_options *opts, cachekit_error *err);
int cachekit_backend_get_ex(cachekit_backend *backend, cachekit_buf *out, const void *key, size_t key_len, cachekit_error *err);
int cachekit_backend_set_ex(cachekit_backend *backend, const void *key, size_t key_len, const void *value, size_t value_len, double ttl_seconds, cachekit_error *err);
int cachekit_backend_delete_ex(cachekit_backend *backend, const void *key, size_t key_len, cachekit_error *err);
int cachekit_backend_exists_ex(cachekit_backend *backend, const void *key, size_t key_len, cachekit_error *err);
int cachekit_backend_ttl_ex(cachekit_backend *backend, double *ttl_seconds, const void *key, size_t key_len, cachekit_error *err);
int cachekit_backend_incr_ex(cachekit_backend *backend, int64_t *value, const void *key, size_t key_len, int64_t delta, cachekit_error *err);
int cachekit_backend_add_ex(cachekit_backend *backend, int *added, const void *key, size_t key_len, const void *value, size_t value_len, double ttl_seconds, cachekit_error *err);
int cachekit_backend_touch_ex(cachekit_backend *backend, const void *key, size_t key_len, double ttl_seconds, cachekit_error *err);
int cachekit_backend_delete_many_ex(cachekit_backend *backend, uint64_t *deleted, const void *const *keys, const size_t *key_lens, size_t count, cachekit_error *err);
int cachekit_backend_delete_many_packed_ex(cachekit_backend *backend, uint64_t *deleted, const void *keys, const size_t *key_offsets, size_t count, cachekit_error *err);
int cachekit_backend_get_many_ex(cachekit_backend *backend, cachekit_buf *outs, int *results, const void *const *keys, const size_t *key_lens, size_t count, cachekit_error *err);
int cachekit_backend_set_many_ex(cachekit_backend *backend, const void *const *keys, const size_t *key_lens, const void *const *values, const size_t *value_lens, size_t count, double ttl_seconds, cachekit_error *err);
int cachekit_backend_get_many_packed_ex(cachekit_backend *backend, cachekit_buf *values_out, size_t *value_offsets, int *results, const void *keys, const size_t *key_offsets, size_t count, cachekit_error *err);
int cachekit_backend_set_many_packed_ex(cachekit_backend *backend, const void *keys, const size_t *key_offsets, const void *values, const size_t *value_offsets, size_t count, double ttl_seconds, cachekit_error *err);
int cachekit_backend_clear_ex(cachekit_backend *backend, uint64_t *deleted, const void *prefix, size_t prefix_len, cachekit_error *err);
int cachekit_backend_lock_ex(cachekit_backend *backend, cachekit_buf *token, const void *key, size_t key_len, uint32_t hold_ms, cachekit_error *err);
int cachekit_backend_unlock_ex(cachekit_backend *backend, const void *key, size_t key_len, const void *token, size_t token_len, cachekit_error *err);
int cachekit_backend_health_ex(cachekit_backend *backend, double *latency_ms, cachekit_error *err);
int cachekit_backend_stats_get_ex(cachekit_backend *backend, cachekit_backend_stats *out, cachekit_error *err);
int cachekit_cache_options_init_ex(cachekit_cache_options *opts, size_t struct_size, cachekit_error *err);
int cachekit_cache_new_ex(cachekit_cache **out, const cachekit_cache_options *opts, cachekit_error *err);
int cachekit_cache_get_ex(cachekit_cache *cache, cachekit_buf *out, cachekit_lookup *info, const char *ns, const void *key, size_t key_len, cachekit_error *err);
int cachekit_cache_peek_ex(cachekit_cache *cache, cachekit_buf *out, cachekit_lookup *info, const char *ns, const void *key, size_t key_len, cachekit_error *err);
int cachekit_cache_put_ex(cachekit_cache *cache, const char *ns, const void *key, size_t key_len, const void *value, size_t value_len, double ttl_seconds, cachekit_error *err);
int cachekit_load_set_value_ex(cachekit_load *load, const void *value, size_t value_len, cachekit_error *err);
int cachekit_load_set_ttl_ex(cachekit_load *load, double ttl_seconds, cachekit_error *err);
int cachekit_load_set_error_ex(cachekit_load *load, const char *message, cachekit_error *err);
int cachekit_cache_get_or_load_ex(cachekit_cache *cache, cachekit_buf *out, cachekit_lookup *info, const char *ns, const void *key, size_t key_len, double ttl_seconds, cachekit_loader loader, void *payload, cachekit_error *err);
int cachekit_cache_put_refresh_ex(cachekit_cache *cache, const char *ns, const void *key, size_t key_len, const void *value, size_t value_len, double ttl_seconds, uint64_t refresh_claim, cachekit_error *err);
int cachekit_cache_abandon_refresh_ex(cachekit_cache *cache, const void *key, size_t key_len, uint64_t refresh_claim, cachekit_error *err);
int cachekit_cache_get_for_load_ex(cachekit_cache *cache, cachekit_buf *out, cachekit_lookup *info, const char *ns, const void *key, size_t key_len, cachekit_error *err);
int cachekit_cache_invalidate_ex(cachekit_cache *cache, const char *ns, const void *key, size_t key_len, cachekit_error *err);
int cachekit_cache_invalidate_namespace_ex(cachekit_cache *cache, const char *ns, cachekit_error *err);
int cachekit_cache_clear_ex(cachekit_cache *cache, cachekit_error *err);
int cachekit_cache_track_function_ex(cachekit_cache *cache, const char *ns, const char *function, const void *key_head, size_t key_head_len, int *kept, cachekit_error *err);
int cachekit_cache_invalidate_function_ex(cachekit_cache *cache, const char *ns, const char *function, uint64_t *deleted, cachekit_error *err);
int cachekit_cache_stats_get_ex(cachekit_cache *cache, cachekit_cache_stats *out, const char *ns, cachekit_error *err);
int cachekit_cache_metrics_text_ex(cachekit_cache *cache, cachekit_buf *out, cachekit_error *err);
int cachekit_cache_claims_held_ex(cachekit_cache *cache, uint64_t *out, cachekit_error *err);
int cachekit_l1_options_init_ex(cachekit_l1_options *opts, size_t struct_size, cachekit_error *err);
int cachekit_l1_new_ex(cachekit_l1 **out, const cachekit_l1_options *opts, cachekit_error *err);
int cachekit_l1_get_ex(cachekit_l1 *l1, cachekit_buf *out, const void *key, size_t key_len, cachekit_error *err);
int cachekit_l1_put_ex(cachekit_l1 *l1, const void *ns, size_t ns_len, const void *key, size_t key_len, const void *value, size_t value_len, double ttl_seconds, cachekit_error *err);
int cachekit_l1_begin_fill_ex(cachekit_l1 *l1, uint64_t *ticket, cachekit_error *err);
int cachekit_l1_put_filled_ex(cachekit_l1 *l1, const void *ns, size_t ns_len, const void *key, size_t key_len, const void *value, size_t value_len, double ttl_seconds, uint64_t ticket, int *stored, cachekit_error *err);
int cachekit_l1_invalidate_ex(cachekit_l1 *l1, const void *key, size_t key_len, cachekit_error *err);
int cachekit_l1_invalidate_namespace_ex(cachekit_l1 *l1, const void *ns, size_t ns_len, cachekit_error *err);
int cachekit_l1_clear_ex(cachekit_l1 *l1, cachekit_error *err);
int cachekit_l1_stats_ex(cachekit_l1 *l1, cachekit_l1_counters *out, cachekit_error *err);
#define CACHEKIT_LOG_INFO ...
#define CACHEKIT_LOG_WARNING ...
typedef void (*cachekit_log_handler)(int level, const char *event, const char *message, void *user_data);
void cachekit_set_log_handler(cachekit_log_handler fn, void *user_data);
#define CACHEKIT_HEALTH_OK ...
#define CACHEKIT_HEALTH_DOWN ...
#define CACHEKIT_HEALTH_BREAKER_OPEN ...
#define CACHEKIT_COHERENCE_OFF ...
#define CACHEKIT_COHERENCE_LIVE ...
#define CACHEKIT_COHERENCE_SUSPENDED ...
#define CACHEKIT_HEALTH_BACKEND_SIZE ...
typedef struct cachekit_health {
    size_t struct_size;
    int state;
    int coherence;
    uint64_t consecutive_failures;
    double since;
    double last_error_at;
    char backend[256];
    char last_error[1024];
} cachekit_health;
int cachekit_backend_health_get(cachekit_backend *backend, cachekit_health *out);
int cachekit_cache_health_get(cachekit_cache *cache, cachekit_health *out);
int cachekit_backend_health_get_ex(cachekit_backend *backend, cachekit_health *out, cachekit_error *err);
int cachekit_cache_health_get_ex(cachekit_cache *cache, cachekit_health *out, cachekit_error *err);
/* Python callbacks (cffi extern "Python"). */
extern "Python" int _cachekit_py_loader(cachekit_load *load, void *payload);
extern "Python" void _cachekit_py_log(int level, const char *event, const char *message, void *user_data);
"""


class LibcachekitNotFound(RuntimeError):
    """pkg-config cannot find libcachekit: the message says what to install and set."""


NOT_FOUND_HELP = """\
libcachekit was not found by pkg-config ({why}).

The Python package `cachekit` compiles a small extension against an installed
libcachekit (the C library it binds). Build and install that first, then point
pkg-config at its cachekit.pc:

    meson setup build --prefix=$HOME/.local && meson install -C build
    export PKG_CONFIG_PATH=$HOME/.local/lib/x86_64-linux-gnu/pkgconfig   # the dir holding cachekit.pc
    pip install ./wrappers/python

(For a build tree without installing: PKG_CONFIG_PATH=<builddir>/meson-uninstalled
and CACHEKIT_RPATH=<builddir>/src.) pkg-config itself comes from the `pkg-config`
package (Debian: apt install pkg-config)."""


def _run_pkg_config(*args: str) -> str:
    try:
        r = subprocess.run(["pkg-config", *args, "cachekit"], capture_output=True, text=True)
    except OSError as exc:
        raise LibcachekitNotFound(NOT_FOUND_HELP.format(why=f"cannot run pkg-config: {exc.strerror}")) from None
    if r.returncode != 0:
        pc_path = os.environ.get("PKG_CONFIG_PATH") or "unset"
        raise LibcachekitNotFound(NOT_FOUND_HELP.format(why=f"`pkg-config {' '.join(args)} cachekit` failed; "
                                                        f"PKG_CONFIG_PATH is {pc_path}"))
    return r.stdout.strip()


def library_version() -> str:
    """The installed libcachekit's version (the .pc's Version): the package's version too."""
    return _run_pkg_config("--modversion")


def _pkg_config(required: bool = False) -> tuple[list[str], list[str], list[str]]:
    """(include_dirs, library_dirs, libraries) for cachekit from pkg-config."""
    try:
        cflags = _run_pkg_config("--cflags")
        libs = _run_pkg_config("--libs")
    except LibcachekitNotFound:
        if required:
            raise
        return [], [], ["cachekit"]
    inc = [a[2:] for a in shlex.split(cflags) if a.startswith("-I")]
    libdirs = [a[2:] for a in shlex.split(libs) if a.startswith("-L")]
    names = [a[2:] for a in shlex.split(libs) if a.startswith("-l")] or ["cachekit"]
    return inc, libdirs, names


_SYSTEM_LIBDIRS = ("/usr/lib", "/lib", "/usr/lib64", "/lib64")


def _default_rpath() -> list[str]:
    """CACHEKIT_RPATH when set, else the .pc's libdir unless the loader searches it anyway,
    so the installed extension finds libcachekit without LD_LIBRARY_PATH."""
    env = os.environ.get("CACHEKIT_RPATH")
    if env is not None:
        return [d for d in env.split(os.pathsep) if d]
    libdir = os.path.normpath(_run_pkg_config("--variable=libdir"))
    if libdir in _SYSTEM_LIBDIRS or os.path.dirname(libdir) in ("/usr/lib", "/lib"):
        return []
    return [libdir]


def make_ffibuilder(extra_include: list[str] | None = None, extra_libdirs: list[str] | None = None,
                    rpath: list[str] | None = None, required: bool = False) -> FFI:
    inc, libdirs, names = _pkg_config(required)
    inc = list(extra_include or []) + inc
    libdirs = list(extra_libdirs or []) + libdirs
    builder = FFI()
    builder.cdef(CDEF)
    extra_link = ["-Wl,-rpath," + d for d in (rpath or [])]
    builder.set_source(
        "cachekit._ffi",
        "#include <cachekit/cachekit.h>\n",
        include_dirs=inc,
        library_dirs=libdirs,
        libraries=names,
        extra_link_args=extra_link,
        extra_compile_args=["-O2"],
    )
    return builder


def installed_ffibuilder() -> FFI:
    """What setup.py's cffi_modules hook calls: pkg-config must find libcachekit."""
    return make_ffibuilder(rpath=_default_rpath(), required=True)


if __name__ == "__main__":
    installed_ffibuilder().compile(verbose=True)
