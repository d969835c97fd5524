// The `_ex` form of every status-returning call: the plain call, on the same
// thread, with its outcome copied into the caller's cachekit_error (see
// capi/call_error.hpp). One line per function; the header documents them.
#include "cachekit/cachekit.h"
#include "capi/call_error.hpp"

extern "C" {

// Buffers
CACHEKIT_DEFINE_EX(cachekit_buf_reserve, (cachekit_buf *buf, size_t capacity, cachekit_error *err),
                   (buf, capacity))

// MessagePack and keys
CACHEKIT_DEFINE_EX(cachekit_msgpack_check, (const void *data, size_t len, uint32_t max_depth, cachekit_error *err),
                   (data, len, max_depth))
CACHEKIT_DEFINE_EX(cachekit_msgpack_canonical, (cachekit_buf *out, const void *data, size_t len, int profile, cachekit_error *err),
                   (out, data, len, profile))
CACHEKIT_DEFINE_EX(cachekit_msgpack_to_json, (cachekit_buf *out, const void *data, size_t len, cachekit_error *err),
                   (out, data, len))
CACHEKIT_DEFINE_EX(cachekit_serializer_code, (cachekit_buf *out, const char *identity, cachekit_error *err),
                   (out, identity))
CACHEKIT_DEFINE_EX(cachekit_key_auto, (cachekit_buf *out, const char *ns, const char *module, const char *qualname, const void *args, size_t args_len, int integrity, const char *serializer, cachekit_error *err),
                   (out, ns, module, qualname, args, args_len, integrity, serializer))
CACHEKIT_DEFINE_EX(cachekit_key_custom, (cachekit_buf *out, const char *ns, const char *module, const char *qualname, const void *key, size_t key_len, cachekit_error *err),
                   (out, ns, module, qualname, key, key_len))
CACHEKIT_DEFINE_EX(cachekit_key_interop, (cachekit_buf *out, cachekit_buf *canonical, const char *ns, const char *operation, const void *args, size_t args_len, cachekit_error *err),
                   (out, canonical, ns, operation, args, args_len))

// Containers
CACHEKIT_DEFINE_EX(cachekit_envelope_wrap, (cachekit_buf *out, const void *data, size_t len, const char *format, cachekit_error *err),
                   (out, data, len, format))
CACHEKIT_DEFINE_EX(cachekit_envelope_unwrap, (cachekit_buf *out, cachekit_buf *format, const void *envelope, size_t len, cachekit_error *err),
                   (out, format, envelope, len))
CACHEKIT_DEFINE_EX(cachekit_frame_encode, (cachekit_buf *out, const char *serializer, const char *metadata_json, const void *payload, size_t payload_len, cachekit_error *err),
                   (out, serializer, metadata_json, payload, payload_len))
CACHEKIT_DEFINE_EX(cachekit_frame_decode, (cachekit_buf *serializer, cachekit_buf *metadata_json, size_t *payload_offset, const void *frame, size_t len, cachekit_error *err),
                   (serializer, metadata_json, payload_offset, frame, len))
CACHEKIT_DEFINE_EX(cachekit_container_v2_wrap, (cachekit_buf *out, const void *value, size_t len, int method, cachekit_error *err),
                   (out, value, len, method))
CACHEKIT_DEFINE_EX(cachekit_container_v2_unwrap, (cachekit_buf *out, const void *container, size_t len, cachekit_error *err),
                   (out, container, len))

// Encryption
CACHEKIT_DEFINE_EX(cachekit_master_key_from_hex, (unsigned char out[CACHEKIT_KEY_SIZE], const char *hex, size_t len, cachekit_error *err),
                   (out, hex, len))
CACHEKIT_DEFINE_EX(cachekit_crypto_derive, (cachekit_derived_keys *out, const void *master_key, size_t master_key_len, const char *tenant, cachekit_error *err),
                   (out, master_key, master_key_len, tenant))
CACHEKIT_DEFINE_EX(cachekit_crypto_aad, (cachekit_buf *out, const char *tenant, const char *cache_key, const char *format, int compressed, const char *original_type, cachekit_error *err),
                   (out, tenant, cache_key, format, compressed, original_type))
CACHEKIT_DEFINE_EX(cachekit_crypto_encrypt, (cachekit_buf *out, const unsigned char key[CACHEKIT_KEY_SIZE], const void *aad, size_t aad_len, const void *plaintext, size_t plaintext_len, const unsigned char *nonce, cachekit_error *err),
                   (out, key, aad, aad_len, plaintext, plaintext_len, nonce))
CACHEKIT_DEFINE_EX(cachekit_crypto_decrypt, (cachekit_buf *out, const unsigned char key[CACHEKIT_KEY_SIZE], const void *aad, size_t aad_len, const void *ciphertext, size_t ciphertext_len, cachekit_error *err),
                   (out, key, aad, aad_len, ciphertext, ciphertext_len))
CACHEKIT_DEFINE_EX(cachekit_keyring_new, (cachekit_keyring **out, const char *current_hex, const char *previous_hex, cachekit_error *err),
                   (out, current_hex, previous_hex))
CACHEKIT_DEFINE_EX(cachekit_keyring_new_raw, (cachekit_keyring **out, const void *current, size_t current_len, const void *previous, size_t previous_count, cachekit_error *err),
                   (out, current, current_len, previous, previous_count))
CACHEKIT_DEFINE_EX(cachekit_keyring_fingerprint, (const cachekit_keyring *keyring, unsigned char out[CACHEKIT_FINGERPRINT_SIZE], const char *tenant, cachekit_error *err),
                   (keyring, out, tenant))
CACHEKIT_DEFINE_EX(cachekit_keyring_encrypt, (const cachekit_keyring *keyring, cachekit_buf *out, const char *tenant, const void *aad, size_t aad_len, const void *plaintext, size_t plaintext_len, cachekit_error *err),
                   (keyring, out, tenant, aad, aad_len, plaintext, plaintext_len))
CACHEKIT_DEFINE_EX(cachekit_keyring_decrypt, (const cachekit_keyring *keyring, cachekit_buf *out, int *key_index, const char *tenant, const unsigned char *fingerprint, const void *aad, size_t aad_len, const void *ciphertext, size_t ciphertext_len, cachekit_error *err),
                   (keyring, out, key_index, tenant, fingerprint, aad, aad_len, ciphertext, ciphertext_len))

// Inspection
CACHEKIT_DEFINE_EX(cachekit_inspect, (cachekit_buf *out_json, const void *data, size_t len, const cachekit_keyring *keyring, const char *tenant, const char *cache_key, cachekit_error *err),
                   (out_json, data, len, keyring, tenant, cache_key))

// L2 backends
CACHEKIT_DEFINE_EX(cachekit_backend_options_init, (cachekit_backend_options *opts, size_t struct_size, cachekit_error *err),
                   (opts, struct_size))
CACHEKIT_DEFINE_EX(cachekit_backend_open, (cachekit_backend **out, const char *url, const cachekit_backend_options *opts, cachekit_error *err),
                   (out, url, opts))
CACHEKIT_DEFINE_EX(cachekit_backend_get, (cachekit_backend *backend, cachekit_buf *out, const void *key, size_t key_len, cachekit_error *err),
                   (backend, out, key, key_len))
CACHEKIT_DEFINE_EX(cachekit_backend_set, (cachekit_backend *backend, const void *key, size_t key_len, const void *value, size_t value_len, double ttl_seconds, cachekit_error *err),
                   (backend, key, key_len, value, value_len, ttl_seconds))
CACHEKIT_DEFINE_EX(cachekit_backend_delete, (cachekit_backend *backend, const void *key, size_t key_len, cachekit_error *err),
                   (backend, key, key_len))
CACHEKIT_DEFINE_EX(cachekit_backend_exists, (cachekit_backend *backend, const void *key, size_t key_len, cachekit_error *err),
                   (backend, key, key_len))
CACHEKIT_DEFINE_EX(cachekit_backend_ttl, (cachekit_backend *backend, double *ttl_seconds, const void *key, size_t key_len, cachekit_error *err),
                   (backend, ttl_seconds, key, key_len))
CACHEKIT_DEFINE_EX(cachekit_backend_get_many, (cachekit_backend *backend, cachekit_buf *outs, int *results, const void *const *keys, const size_t *key_lens, size_t count, cachekit_error *err),
                   (backend, outs, results, keys, key_lens, count))
CACHEKIT_DEFINE_EX(cachekit_backend_set_many, (cachekit_backend *backend, const void *const *keys, const size_t *key_lens, const void *const *values, const size_t *value_lens, size_t count, double ttl_seconds, cachekit_error *err),
                   (backend, keys, key_lens, values, value_lens, count, ttl_seconds))
CACHEKIT_DEFINE_EX(cachekit_backend_get_many_packed, (cachekit_backend *backend, cachekit_buf *values_out, size_t *value_offsets, int *results, const void *keys, const size_t *key_offsets, size_t count, cachekit_error *err),
                   (backend, values_out, value_offsets, results, keys, key_offsets, count))
CACHEKIT_DEFINE_EX(cachekit_backend_set_many_packed, (cachekit_backend *backend, const void *keys, const size_t *key_offsets, const void *values, const size_t *value_offsets, size_t count, double ttl_seconds, cachekit_error *err),
                   (backend, keys, key_offsets, values, value_offsets, count, ttl_seconds))
CACHEKIT_DEFINE_EX(cachekit_backend_clear, (cachekit_backend *backend, uint64_t *deleted, const void *prefix, size_t prefix_len, cachekit_error *err),
                   (backend, deleted, prefix, prefix_len))
CACHEKIT_DEFINE_EX(cachekit_backend_lock, (cachekit_backend *backend, cachekit_buf *token, const void *key, size_t key_len, uint32_t hold_ms, cachekit_error *err),
                   (backend, token, key, key_len, hold_ms))
CACHEKIT_DEFINE_EX(cachekit_backend_unlock, (cachekit_backend *backend, const void *key, size_t key_len, const void *token, size_t token_len, cachekit_error *err),
                   (backend, key, key_len, token, token_len))
CACHEKIT_DEFINE_EX(cachekit_backend_incr, (cachekit_backend *backend, int64_t *value, const void *key, size_t key_len, int64_t delta, cachekit_error *err),
                   (backend, value, key, key_len, delta))
CACHEKIT_DEFINE_EX(cachekit_backend_add, (cachekit_backend *backend, int *added, const void *key, size_t key_len, const void *value, size_t value_len, double ttl_seconds, cachekit_error *err),
                   (backend, added, key, key_len, value, value_len, ttl_seconds))
CACHEKIT_DEFINE_EX(cachekit_backend_touch, (cachekit_backend *backend, const void *key, size_t key_len, double ttl_seconds, cachekit_error *err),
                   (backend, key, key_len, ttl_seconds))
CACHEKIT_DEFINE_EX(cachekit_backend_delete_many, (cachekit_backend *backend, uint64_t *deleted, const void *const *keys, const size_t *key_lens, size_t count, cachekit_error *err),
                   (backend, deleted, keys, key_lens, count))
CACHEKIT_DEFINE_EX(cachekit_backend_delete_many_packed, (cachekit_backend *backend, uint64_t *deleted, const void *keys, const size_t *key_offsets, size_t count, cachekit_error *err),
                   (backend, deleted, keys, key_offsets, count))
CACHEKIT_DEFINE_EX(cachekit_backend_health, (cachekit_backend *backend, double *latency_ms, cachekit_error *err),
                   (backend, latency_ms))
CACHEKIT_DEFINE_EX(cachekit_backend_stats_get, (cachekit_backend *backend, cachekit_backend_stats *out, cachekit_error *err),
                   (backend, out))

// The cache handle
CACHEKIT_DEFINE_EX(cachekit_cache_options_init, (cachekit_cache_options *opts, size_t struct_size, cachekit_error *err),
                   (opts, struct_size))
CACHEKIT_DEFINE_EX(cachekit_cache_new, (cachekit_cache **out, const cachekit_cache_options *opts, cachekit_error *err),
                   (out, opts))
CACHEKIT_DEFINE_EX(cachekit_cache_get, (cachekit_cache *cache, cachekit_buf *out, cachekit_lookup *info, const char *ns, const void *key, size_t key_len, cachekit_error *err),
                   (cache, out, info, ns, key, key_len))
CACHEKIT_DEFINE_EX(cachekit_cache_peek, (cachekit_cache *cache, cachekit_buf *out, cachekit_lookup *info, const char *ns, const void *key, size_t key_len, cachekit_error *err),
                   (cache, out, info, ns, key, key_len))
CACHEKIT_DEFINE_EX(cachekit_cache_put, (cachekit_cache *cache, const char *ns, const void *key, size_t key_len, const void *value, size_t value_len, double ttl_seconds, cachekit_error *err),
                   (cache, ns, key, key_len, value, value_len, ttl_seconds))
CACHEKIT_DEFINE_EX(cachekit_load_set_value, (cachekit_load *load, const void *value, size_t value_len, cachekit_error *err),
                   (load, value, value_len))
CACHEKIT_DEFINE_EX(cachekit_load_set_ttl, (cachekit_load *load, double ttl_seconds, cachekit_error *err),
                   (load, ttl_seconds))
CACHEKIT_DEFINE_EX(cachekit_load_set_error, (cachekit_load *load, const char *message, cachekit_error *err),
                   (load, message))
CACHEKIT_DEFINE_EX(cachekit_cache_get_or_load, (cachekit_cache *cache, cachekit_buf *out, cachekit_lookup *info, const char *ns, const void *key, size_t key_len, double ttl_seconds, cachekit_loader loader, void *payload, cachekit_error *err),
                   (cache, out, info, ns, key, key_len, ttl_seconds, loader, payload))
CACHEKIT_DEFINE_EX(cachekit_cache_put_refresh, (cachekit_cache *cache, const char *ns, const void *key, size_t key_len, const void *value, size_t value_len, double ttl_seconds, uint64_t refresh_claim, cachekit_error *err),
                   (cache, ns, key, key_len, value, value_len, ttl_seconds, refresh_claim))
CACHEKIT_DEFINE_EX(cachekit_cache_abandon_refresh, (cachekit_cache *cache, const void *key, size_t key_len, uint64_t refresh_claim, cachekit_error *err),
                   (cache, key, key_len, refresh_claim))
CACHEKIT_DEFINE_EX(cachekit_cache_get_for_load, (cachekit_cache *cache, cachekit_buf *out, cachekit_lookup *info, const char *ns, const void *key, size_t key_len, cachekit_error *err),
                   (cache, out, info, ns, key, key_len))
CACHEKIT_DEFINE_EX(cachekit_cache_invalidate, (cachekit_cache *cache, const char *ns, const void *key, size_t key_len, cachekit_error *err),
                   (cache, ns, key, key_len))
CACHEKIT_DEFINE_EX(cachekit_cache_invalidate_namespace, (cachekit_cache *cache, const char *ns, cachekit_error *err),
                   (cache, ns))
CACHEKIT_DEFINE_EX(cachekit_cache_clear, (cachekit_cache *cache, cachekit_error *err),
                   (cache))
CACHEKIT_DEFINE_EX(cachekit_cache_track_function, (cachekit_cache *cache, const char *ns, const char *function, const void *key_head, size_t key_head_len, int *kept, cachekit_error *err),
                   (cache, ns, function, key_head, key_head_len, kept))
CACHEKIT_DEFINE_EX(cachekit_cache_invalidate_function, (cachekit_cache *cache, const char *ns, const char *function, uint64_t *deleted, cachekit_error *err),
                   (cache, ns, function, deleted))
CACHEKIT_DEFINE_EX(cachekit_cache_stats_get, (cachekit_cache *cache, cachekit_cache_stats *out, const char *ns, cachekit_error *err),
                   (cache, out, ns))
CACHEKIT_DEFINE_EX(cachekit_cache_metrics_text, (cachekit_cache *cache, cachekit_buf *out, cachekit_error *err),
                   (cache, out))
CACHEKIT_DEFINE_EX(cachekit_cache_claims_held, (cachekit_cache *cache, uint64_t *out, cachekit_error *err),
                   (cache, out))

// L1
CACHEKIT_DEFINE_EX(cachekit_l1_options_init, (cachekit_l1_options *opts, size_t struct_size, cachekit_error *err),
                   (opts, struct_size))
CACHEKIT_DEFINE_EX(cachekit_l1_new, (cachekit_l1 **out, const cachekit_l1_options *opts, cachekit_error *err),
                   (out, opts))
CACHEKIT_DEFINE_EX(cachekit_l1_get, (cachekit_l1 *l1, cachekit_buf *out, const void *key, size_t key_len, cachekit_error *err),
                   (l1, out, key, key_len))
CACHEKIT_DEFINE_EX(cachekit_l1_put, (cachekit_l1 *l1, const void *ns, size_t ns_len, const void *key, size_t key_len, const void *value, size_t value_len, double ttl_seconds, cachekit_error *err),
                   (l1, ns, ns_len, key, key_len, value, value_len, ttl_seconds))
CACHEKIT_DEFINE_EX(cachekit_l1_begin_fill, (cachekit_l1 *l1, uint64_t *ticket, cachekit_error *err),
                   (l1, ticket))
CACHEKIT_DEFINE_EX(cachekit_l1_put_filled, (cachekit_l1 *l1, const void *ns, size_t ns_len, const void *key, size_t key_len, const void *value, size_t value_len, double ttl_seconds, uint64_t ticket, int *stored, cachekit_error *err),
                   (l1, ns, ns_len, key, key_len, value, value_len, ttl_seconds, ticket, stored))
CACHEKIT_DEFINE_EX(cachekit_l1_invalidate, (cachekit_l1 *l1, const void *key, size_t key_len, cachekit_error *err),
                   (l1, key, key_len))
CACHEKIT_DEFINE_EX(cachekit_l1_invalidate_namespace, (cachekit_l1 *l1, const void *ns, size_t ns_len, cachekit_error *err),
                   (l1, ns, ns_len))
CACHEKIT_DEFINE_EX(cachekit_l1_clear, (cachekit_l1 *l1, cachekit_error *err),
                   (l1))
CACHEKIT_DEFINE_EX(cachekit_l1_stats, (cachekit_l1 *l1, cachekit_l1_counters *out, cachekit_error *err),
                   (l1, out))

// Seeing failures
CACHEKIT_DEFINE_EX(cachekit_backend_health_get, (cachekit_backend *backend, cachekit_health *out, cachekit_error *err),
                   (backend, out))
CACHEKIT_DEFINE_EX(cachekit_cache_health_get, (cachekit_cache *cache, cachekit_health *out, cachekit_error *err),
                   (cache, out))

}  // extern "C"
