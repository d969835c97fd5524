/*
 * libcachekit: the CacheKit caching system behind a stable C ABI.
 *
 * This is the one public header. It compiles as C99 and as C++. Every
 * function is thread-safe unless its comment says otherwise, never throws,
 * and returns an int status: 0 (CACHEKIT_OK) or one of the pinned negative
 * codes below. Detail for a failure is kept in a thread-local last error
 * (cachekit_error_last_message) and, per call, in the cachekit_error of the
 * function's `_ex` form. A miss (CACHEKIT_ENOTFOUND) sets no message. The
 * rules a binding (Rust, Go, Python, ...) relies on are gathered in "The
 * contract for bindings" below; docs/c-api.md explains them at length.
 *
 * Memory: inputs are (pointer, length) pairs or NUL-terminated strings and are
 * copied; the library keeps no caller pointer. Outputs go into a caller-owned,
 * reusable cachekit_buf (initialise with CACHEKIT_BUF_INIT, release with
 * cachekit_buf_dispose). Anything else the library allocates is released with
 * cachekit_free.
 */
#ifndef CACHEKIT_H
#define CACHEKIT_H

#include <stddef.h>
#include <stdint.h>

#include "cachekit/version.h"

#if defined(CACHEKIT_BUILDING_LIBRARY) && defined(__GNUC__)
#define CACHEKIT_API __attribute__((visibility("default")))
#else
#define CACHEKIT_API
#endif

#ifdef __cplusplus
#define CACHEKIT_NOEXCEPT noexcept
extern "C" {
#else
#define CACHEKIT_NOEXCEPT
#endif

/* ======================================================================
 * Status codes (pinned: never renumbered, only appended)
 * ====================================================================== */

typedef enum cachekit_status {
    CACHEKIT_OK = 0,
    CACHEKIT_ENOTFOUND = -1,           /* a miss: no message is set */
    CACHEKIT_EINVAL = -2,              /* InvalidArgument */
    CACHEKIT_ENOMEM = -3,              /* OutOfMemory */
    CACHEKIT_ECORRUPT = -4,            /* Corrupt: a stored entry failed its checks */
    CACHEKIT_ETOOBIG = -5,             /* InputTooLarge */
    CACHEKIT_EBACKEND = -6,            /* BackendError */
    CACHEKIT_ETIMEOUT = -7,            /* Timeout */
    CACHEKIT_EUSER = -8,               /* UserError: a loader callback failed */
    CACHEKIT_EDESERIALIZE = -9,        /* DeserializationFailed */
    CACHEKIT_EBOMB = -10,              /* DecompressionBomb */
    CACHEKIT_EDECOMPRESS = -11,        /* DecompressionFailed */
    CACHEKIT_ECHECKSUM = -12,          /* ChecksumMismatch */
    CACHEKIT_ESIZE = -13,              /* SizeValidationFailed */
    CACHEKIT_EDEPTH = -14,             /* DepthExceeded */
    CACHEKIT_EOVERCLAIM = -15,         /* Overclaim */
    CACHEKIT_ETRUNCATED = -16,         /* Truncated */
    CACHEKIT_ETRAILING = -17,          /* TrailingBytes */
    CACHEKIT_EUNSUPPORTED = -18,       /* UnsupportedType */
    CACHEKIT_ESEGMENT = -19,           /* InvalidSegment */
    CACHEKIT_EKEY = -20,               /* InvalidKey */
    CACHEKIT_ECIPHERTEXT = -21,        /* InvalidCiphertext */
    CACHEKIT_EAUTH = -22,              /* AuthenticationFailed */
    CACHEKIT_EKEYNOTFOUND = -23,       /* KeyNotFound */
    CACHEKIT_EFRAME = -24,             /* InvalidFrame */
    CACHEKIT_ECRYPTO_UNAVAILABLE = -25, /* CryptoUnavailable: no usable AES-256-GCM provider */
    CACHEKIT_ENONCE = -26,             /* NonceExhausted: the counter would wrap */
    CACHEKIT_EINTERNAL = -27,          /* Internal: a bug; please report it */
    CACHEKIT_EBUSY = -28,              /* Busy: a resource is in use */
    CACHEKIT_EDEADLOCK = -29,          /* Deadlock: a loader asked for its own key */
    CACHEKIT_ECIRCUIT_OPEN = -30       /* CircuitOpen: the backend's breaker is open */
} cachekit_status;

/* The stable name of a status code ("InvalidArgument", "Overclaim", ...), the
 * same names `cachekit codec` reports. Unknown codes give "Unknown". The
 * string is static. Since 0.1. */
CACHEKIT_API const char *cachekit_error_name(int code) CACHEKIT_NOEXCEPT;

/* The code of the last failure on this thread (0 when none). Since 0.1. */
CACHEKIT_API int cachekit_error_last_code(void) CACHEKIT_NOEXCEPT;

/* The message of the last failure on this thread ("" when none). The pointer
 * stays valid until the next failing call on this thread. Since 0.1. */
CACHEKIT_API const char *cachekit_error_last_message(void) CACHEKIT_NOEXCEPT;

/* Forget the last failure on this thread. Since 0.1. */
CACHEKIT_API void cachekit_error_clear(void) CACHEKIT_NOEXCEPT;

/* The outcome of one call, for the `_ex` form of every function that returns
 * an int status and can fail (declared together at the end of this header).
 * The `_ex` function takes `cachekit_error *err` as its LAST parameter, runs
 * exactly as its plain twin (same status, same thread-local last error) and,
 * when err is not NULL, also writes that call's outcome into *err before it
 * returns:
 *   - code: the returned status (CACHEKIT_OK included);
 *   - name: cachekit_error_name(code), NUL-terminated;
 *   - message: the failure's message, NUL-terminated; "" on success, on a
 *     miss (CACHEKIT_ENOTFOUND) and when the failure has none. A message
 *     longer than CACHEKIT_ERROR_MESSAGE_SIZE - 1 bytes is cut after the last
 *     whole UTF-8 sequence that fits and ends in "...".
 * The struct holds no pointer and has a fixed size, so a Go caller can pass
 * the address of a Go value and a Rust caller a &mut to a plain struct; the
 * library keeps no reference to it after the call. Set struct_size (the INIT
 * macro does): a struct_size smaller than this (0.2) form is CACHEKIT_EINVAL
 * and the call is not made; later versions only append fields and write no
 * byte past struct_size. err NULL = the plain call. Since 0.2. */
#define CACHEKIT_ERROR_NAME_SIZE 32
#define CACHEKIT_ERROR_MESSAGE_SIZE 1024

typedef struct cachekit_error {
    size_t struct_size;
    int code;
    char name[CACHEKIT_ERROR_NAME_SIZE];
    char message[CACHEKIT_ERROR_MESSAGE_SIZE];
} cachekit_error;

#define CACHEKIT_ERROR_INIT {sizeof(cachekit_error), 0, "", ""}

/* ======================================================================
 * The contract for bindings
 *
 * Threads. Every handle (cachekit_keyring, cachekit_backend, cachekit_cache,
 * cachekit_l1) may be used by any number of threads at once: every call on it
 * may run concurrently with every other, except its *_free, which must not
 * race with any call on the same handle (free it once nothing uses it).
 * Free-standing calls (codec, keys, crypto, inspect) are reentrant. A
 * cachekit_buf or cachekit_error must not be used by two calls at once.
 * No call keeps a caller pointer after it returns (borrowed handles in
 * options, e.g. cachekit_cache_options.backend, are the documented
 * exception: they must outlive what borrows them).
 *
 * Errors. Read a failure's detail from the call's own cachekit_error (the
 * `_ex` forms) or, on the same thread and before any other call of this
 * library, from cachekit_error_last_code/_message. A binding whose threads
 * may change between two foreign calls (Go's goroutines) must use `_ex`.
 *
 * Options and evolution. Every options, stats or out struct starts with
 * size_t struct_size and only ever gains fields at its end. The caller sets
 * struct_size to the sizeof its header gives (the *_INIT macros and the
 * *_options_init functions do): the library reads only the fields that fit
 * (the rest take their defaults) and writes only bytes below struct_size. A
 * struct never embeds another versioned struct by value: it points to it
 * (e.g. cachekit_cache_options.backend_options), and NULL means the
 * defaults, so each struct grows on its own. The status codes are pinned;
 * new ones are appended.
 *
 * Strings. `const char *` parameters are NUL-terminated UTF-8 and cannot
 * hold a NUL byte: a binding must refuse a string with an embedded NUL
 * before the call (a silent cut would name another namespace or key).
 * Binary data (keys, values, L1 namespaces) is passed as (pointer, length).
 * A cache namespace (`ns`) holds 0..CACHEKIT_MAX_NAMESPACE_SIZE bytes of
 * valid UTF-8: longer or invalid is CACHEKIT_EINVAL with a message.
 *
 * Batches. cachekit_backend_get_many_packed and _set_many_packed take all
 * keys (and values) as one buffer plus count + 1 offsets, so a caller passes
 * no array of pointers (Go forbids Go pointers to Go pointers).
 *
 * Loaders (cachekit_loader). A loader runs on the thread that called
 * cachekit_cache_get_or_load, synchronously, with no library lock held. Its
 * cachekit_load pointer is valid only during that loader call. It may call
 * cachekit_load_set_value/_ttl/_error on it, and any function of this library
 * on other keys or handles (including get_or_load of other keys, of the same
 * cache); asking the same cache for its own key gives CACHEKIT_EDEADLOCK.
 * Concurrent callers of the same key wait for it up to load_timeout_ms (then
 * CACHEKIT_ETIMEOUT). It must return: 0 after setting a value, non-zero for
 * a failure (every waiter gets CACHEKIT_EUSER, nothing is cached). It must
 * not leave by longjmp, a C++ exception or a foreign unwind (a Rust panic, a
 * Go panic, a Lua error): a binding catches those inside its callback,
 * returns non-zero, and re-raises after the C call returned. Should one jump
 * out anyway, what the library's frames held leaks, but the key is not
 * wedged: the thread's next call for it (from at or above the jumped-over
 * frame, or deeper once that stack memory was reused) finishes the old
 * flight with CACHEKIT_EUSER and loads afresh, and other threads wait at
 * most load_timeout_ms once.
 *
 * Fork. A child process may go on using every handle it inherited, from the
 * thread that forked (other threads do not exist in the child). Per object:
 *   - cachekit_keyring: the child reseeds its nonce source (a
 *     pthread_atfork handler, plus a process-id check on the seal path), so
 *     parent and child never seal under one key with the same nonce.
 *   - cachekit_backend (Redis): the child drops every inherited connection
 *     without sending anything on it (the descriptor is closed only; no
 *     QUIT) and reconnects on its next call, so no reply can reach the wrong
 *     process. The file backend needs nothing (its locks are per open file
 *     description and are re-taken per call). The memory backend's lock is
 *     taken around fork() and fresh in the child, and the cross-process
 *     locks (cross_process_lock) other threads of the parent held have
 *     lapsed there (only the forking thread's own still hold).
 *   - cachekit_cache: its backend and keyring as above; its L1 as below;
 *     its own locks (key stripes, claim tables) are taken around fork() and
 *     fresh in the child; single-flight loads and refresh claims that other
 *     threads of the parent had in flight are forgotten (their keys load
 *     afresh, at once). A loader that forks stays its key's leader in the
 *     child.
 *   - cachekit_l1: the entries are kept; its sweeper thread is restarted in
 *     the child and its lock state reset.
 * A call that is running in another thread while fork() happens is not
 * carried into the child.
 * ====================================================================== */

/* ======================================================================
 * Version
 * ====================================================================== */

/* The runtime twins of CACHEKIT_VERSION_STRING and CACHEKIT_VERSION_NUMBER,
 * to compare the library you run with the header you built against. */
CACHEKIT_API const char *cachekit_version_string(void) CACHEKIT_NOEXCEPT;
CACHEKIT_API unsigned cachekit_version_number(void) CACHEKIT_NOEXCEPT;

/* ======================================================================
 * Buffers and memory
 * ====================================================================== */

/* A growable output buffer owned by the caller. `ptr` is NULL or memory the
 * library allocated; `size` is the number of valid bytes; `capacity` what is
 * allocated. Every call that writes a buffer replaces its contents (reusing
 * the allocation when large enough) and keeps one NUL byte after `size` bytes,
 * so text outputs can be read as C strings. */
typedef struct cachekit_buf {
    char *ptr;
    size_t size;
    size_t capacity;
} cachekit_buf;

#define CACHEKIT_BUF_INIT {NULL, 0, 0}

/* Release the buffer's memory and reset it to CACHEKIT_BUF_INIT. Accepts NULL.
 * Since 0.1. */
CACHEKIT_API void cachekit_buf_dispose(cachekit_buf *buf) CACHEKIT_NOEXCEPT;

/* Make sure the buffer can hold `capacity` bytes (plus the NUL). Since 0.1. */
CACHEKIT_API int cachekit_buf_reserve(cachekit_buf *buf, size_t capacity) CACHEKIT_NOEXCEPT;

/* Release memory the library allocated outside a cachekit_buf. Accepts NULL.
 * Since 0.1. */
CACHEKIT_API void cachekit_free(void *ptr) CACHEKIT_NOEXCEPT;

/* ======================================================================
 * Codec calls: MessagePack
 *
 * Every untrusted MessagePack document goes through the bounded decoder:
 * nesting depth at most max_depth (32..1024; 0 means 1024), the declared slots
 * of the whole document (array element = 1, map pair = 2, str/bin/ext bytes)
 * summed in checked 64-bit arithmetic must not exceed the input length - 1,
 * the root item must be complete, and exactly one document is allowed.
 * Errors: CACHEKIT_EDEPTH, CACHEKIT_EOVERCLAIM, CACHEKIT_ETRUNCATED,
 * CACHEKIT_ETRAILING, CACHEKIT_EDESERIALIZE (a reserved byte 0xc1).
 * ====================================================================== */

#define CACHEKIT_MSGPACK_MIN_DEPTH 32
#define CACHEKIT_MSGPACK_MAX_DEPTH 1024

/* Profiles of cachekit_msgpack_canonical. */
typedef enum cachekit_msgpack_profile {
    /* Interop/v1 arguments: shortest widths, string map keys sorted by code
     * point at every level, float64 only, integral floats in [-2^63, 2^64)
     * collapsed to ints, NaN and infinities rejected, no ext types except the
     * two input extensions below. */
    CACHEKIT_PROFILE_ARGS = 1,
    /* Interop/v1 values: as ARGS but floats are never collapsed. */
    CACHEKIT_PROFILE_VALUE = 2,
    /* Auto-mode (reference Python SDK) arguments `[args, kwargs]`: shortest
     * widths, float64 only, -0.0 written as 0.0, maps whose keys are all
     * strings sorted by code point; other maps keep their order; no ext. */
    CACHEKIT_PROFILE_AUTO_ARGS = 3
} cachekit_msgpack_profile;

/* Input extensions a wrapper may use in ARGS documents for values MessagePack
 * has no type for. Timestamp (ext -1, the standard MessagePack timestamp) is
 * an aware datetime: it becomes float64 floor(microseconds)/1e6 (collapsed
 * when integral). Ext CACHEKIT_MSGPACK_EXT_SET holds one MessagePack array:
 * a set, written as an array of its canonical elements sorted by encoded
 * bytes without duplicates. */
#define CACHEKIT_MSGPACK_EXT_TIMESTAMP (-1)
#define CACHEKIT_MSGPACK_EXT_SET 83

/* Check that `data` is exactly one well-formed MessagePack document within
 * the decode bounds. Since 0.1. */
CACHEKIT_API int cachekit_msgpack_check(const void *data, size_t len,
                                        uint32_t max_depth) CACHEKIT_NOEXCEPT;

/* Re-encode one document canonically under `profile` into `out`. Errors as
 * for cachekit_msgpack_check, plus CACHEKIT_EUNSUPPORTED (NaN, infinity,
 * non-string map key, ext type, invalid UTF-8) and CACHEKIT_EINVAL. Since 0.1. */
CACHEKIT_API int cachekit_msgpack_canonical(cachekit_buf *out, const void *data, size_t len,
                                            int profile) CACHEKIT_NOEXCEPT;

/* Render one bounded MessagePack document as JSON text (bin as
 * {"$bytes": hex}, ext as {"$ext": type, "data": hex}, non-string map keys
 * as their JSON text). For operators and tools. Since 0.1. */
CACHEKIT_API int cachekit_msgpack_to_json(cachekit_buf *out, const void *data,
                                          size_t len) CACHEKIT_NOEXCEPT;

/* ======================================================================
 * Codec calls: cache keys
 * ====================================================================== */

/* The serializer code of an auto-mode key for a serializer identity:
 * "std"/"default"/"standard" -> "s", "auto"/"pythonic" -> "a", "orjson" -> "o",
 * "arrow" -> "w", "local" -> "l", anything else -> "x" + 4 hex digits of
 * BLAKE2b(identity, 2 bytes). NULL or "" is CACHEKIT_EINVAL. Since 0.1. */
CACHEKIT_API int cachekit_serializer_code(cachekit_buf *out,
                                          const char *identity) CACHEKIT_NOEXCEPT;

/* The auto-mode key of the reference Python SDK:
 * [ns:{namespace}:]func:{module}.{qualname}:args:{blake2b256}:{1|0}{code}.
 * `args` is the MessagePack of `[positional, keyword]` as the wrapper
 * normalised it (re-encoded with CACHEKIT_PROFILE_AUTO_ARGS before hashing);
 * `ns` may be NULL or "" for no namespace; `serializer` is an identity as for
 * cachekit_serializer_code. Keys longer than 250 code points are shortened to
 * key[:50] + ":" + 32 hex digits. Since 0.1. */
CACHEKIT_API int cachekit_key_auto(cachekit_buf *out, const char *ns, const char *module,
                                   const char *qualname, const void *args, size_t args_len,
                                   int integrity, const char *serializer) CACHEKIT_NOEXCEPT;

/* The reference Python SDK's (0.24+) key of a function with a key function
 * (`key=`): {16 hex digits of BLAKE3("{module}.{qualname}")}-{ns}:{key},
 * where `ns` NULL or "" is "default" and `key` is the key function's string
 * (UTF-8, may be empty), e.g. "e3dfcb32576a6a4e-ub:k1". Since 0.2. */
CACHEKIT_API int cachekit_key_custom(cachekit_buf *out, const char *ns, const char *module,
                                     const char *qualname, const void *key,
                                     size_t key_len) CACHEKIT_NOEXCEPT;

/* The interop/v1 key {namespace}:{operation}:{blake2b256(canonical args)}.
 * `args` is the MessagePack array of the call's bound arguments in any valid
 * encoding; it is canonicalised with CACHEKIT_PROFILE_ARGS, and the canonical
 * bytes are written to `canonical` when it is not NULL. Segments must match
 * ^[a-z0-9][a-z0-9._-]{0,63}$, must not contain "..", and the namespace must
 * not be "ns" or "nsapi" (CACHEKIT_ESEGMENT). Since 0.1. */
CACHEKIT_API int cachekit_key_interop(cachekit_buf *out, cachekit_buf *canonical, const char *ns,
                                      const char *operation, const void *args,
                                      size_t args_len) CACHEKIT_NOEXCEPT;

/* ======================================================================
 * Codec calls: containers (ByteStorage envelope, CK v3 frame, interop/v2)
 * ====================================================================== */

/* 512 MiB: the largest envelope, compressed block or original payload. */
#define CACHEKIT_ENVELOPE_MAX_SIZE 536870912u
#define CACHEKIT_MAX_COMPRESSION_RATIO 1000u

/* Wrap `data` in the canonical ByteStorage envelope
 * [lz4 block as bin, xxh3-64 as 8 uints, original_size, format].
 * CACHEKIT_ETOOBIG past 512 MiB. Since 0.1. */
CACHEKIT_API int cachekit_envelope_wrap(cachekit_buf *out, const void *data, size_t len,
                                        const char *format) CACHEKIT_NOEXCEPT;

/* Unwrap a ByteStorage envelope (canonical bin or legacy integer-array form),
 * following the protocol's retrieve order: CACHEKIT_ETOOBIG,
 * CACHEKIT_EDESERIALIZE, CACHEKIT_EBOMB, CACHEKIT_EDECOMPRESS,
 * CACHEKIT_ECHECKSUM, CACHEKIT_ESIZE. The format string goes to `format`
 * when it is not NULL. Since 0.1. */
CACHEKIT_API int cachekit_envelope_unwrap(cachekit_buf *out, cachekit_buf *format,
                                          const void *envelope, size_t len) CACHEKIT_NOEXCEPT;

/* Encode a CK v3 frame: "CK" 03 u32be(hlen) {"s": serializer, "m": metadata,
 * "v": "2.0"} payload. `metadata_json` is a JSON object; its keys keep their
 * order and it is written with the reference SDK's separators. Since 0.1. */
CACHEKIT_API int cachekit_frame_encode(cachekit_buf *out, const char *serializer,
                                       const char *metadata_json, const void *payload,
                                       size_t payload_len) CACHEKIT_NOEXCEPT;

/* Decode a CK v3 frame. The serializer name goes to `serializer`, the
 * metadata object as JSON text to `metadata_json` (either may be NULL), and
 * the payload is frame[*payload_offset .. len). CACHEKIT_EFRAME for a frame
 * shorter than 7 bytes, a bad magic, a version other than 3, a header past the
 * end or a header that is not {"s": str, "m": object, ...}. Since 0.1. */
CACHEKIT_API int cachekit_frame_decode(cachekit_buf *serializer, cachekit_buf *metadata_json,
                                       size_t *payload_offset, const void *frame,
                                       size_t len) CACHEKIT_NOEXCEPT;

/* Interop/v2 (DRAFT): C1 02 + msgpack [method, original_size, payload:bin].
 * Methods for cachekit_container_v2_wrap. */
#define CACHEKIT_V2_METHOD_NONE 0
#define CACHEKIT_V2_METHOD_LZ4 1

/* Wrap one MessagePack value in an interop/v2 container. Since 0.1. */
CACHEKIT_API int cachekit_container_v2_wrap(cachekit_buf *out, const void *value, size_t len,
                                            int method) CACHEKIT_NOEXCEPT;

/* Unwrap an interop/v2 container (limits checked before decompression) and
 * check the value is one bounded MessagePack document. Since 0.1. */
CACHEKIT_API int cachekit_container_v2_unwrap(cachekit_buf *out, const void *container,
                                              size_t len) CACHEKIT_NOEXCEPT;

/* ======================================================================
 * Codec calls: encryption (AES-256-GCM, HKDF-SHA256 keys, AAD v0x03)
 * ====================================================================== */

#define CACHEKIT_KEY_SIZE 32
#define CACHEKIT_FINGERPRINT_SIZE 16
#define CACHEKIT_NONCE_SIZE 12
#define CACHEKIT_TAG_SIZE 16
#define CACHEKIT_MAX_PREVIOUS_KEYS 3

/* 1 when AES-256-GCM can run: libsodium's where the CPU has AES-NI and
 * PCLMUL, OpenSSL's EVP elsewhere (the same bytes), so on every CPU unless
 * CACHEKIT_AES_GCM_PROVIDER forces one that cannot. Every encrypting call
 * answers CACHEKIT_ECRYPTO_UNAVAILABLE (or CACHEKIT_EINVAL for a bad
 * CACHEKIT_AES_GCM_PROVIDER) where it cannot. */
CACHEKIT_API int cachekit_crypto_available(void) CACHEKIT_NOEXCEPT;

/* Decode a master key given as hex: exactly 64 hex digits, nothing else (no
 * 0x, sign, white space or odd length). Since 0.1. */
CACHEKIT_API int cachekit_master_key_from_hex(unsigned char out[CACHEKIT_KEY_SIZE],
                                              const char *hex, size_t len) CACHEKIT_NOEXCEPT;

/* The keys derived from a master key for one tenant. */
typedef struct cachekit_derived_keys {
    unsigned char encryption[CACHEKIT_KEY_SIZE];     /* HKDF domain "encryption" */
    unsigned char authentication[CACHEKIT_KEY_SIZE]; /* HKDF domain "authentication" */
    unsigned char cache_keys[CACHEKIT_KEY_SIZE];     /* HKDF domain "cache_keys" */
    unsigned char fingerprint[CACHEKIT_FINGERPRINT_SIZE];
} cachekit_derived_keys;

/* Derive a tenant's keys from a raw master key of exactly 32 bytes. `tenant`
 * NULL means "default"; it holds 1..1024 bytes. Since 0.1. */
CACHEKIT_API int cachekit_crypto_derive(cachekit_derived_keys *out, const void *master_key,
                                        size_t master_key_len,
                                        const char *tenant) CACHEKIT_NOEXCEPT;

/* Build AAD v0x03: 03 then u32be(len)+bytes of tenant (NULL = "default"),
 * cache_key, format, "True"/"False", and original_type when not NULL.
 * Since 0.1. */
CACHEKIT_API int cachekit_crypto_aad(cachekit_buf *out, const char *tenant, const char *cache_key,
                                     const char *format, int compressed,
                                     const char *original_type) CACHEKIT_NOEXCEPT;

/* Seal with a derived 32-byte AES key: out = nonce(12) || ciphertext || tag(16).
 * `nonce` NULL draws a random nonce; a fixed nonce is for known-answer tests.
 * Since 0.1. */
CACHEKIT_API int cachekit_crypto_encrypt(cachekit_buf *out, const unsigned char key[CACHEKIT_KEY_SIZE],
                                         const void *aad, size_t aad_len, const void *plaintext,
                                         size_t plaintext_len,
                                         const unsigned char *nonce) CACHEKIT_NOEXCEPT;

/* Open nonce || ciphertext || tag with a derived key. CACHEKIT_ECIPHERTEXT
 * when shorter than 28 bytes, CACHEKIT_EAUTH when the tag does not verify.
 * Since 0.1. */
CACHEKIT_API int cachekit_crypto_decrypt(cachekit_buf *out, const unsigned char key[CACHEKIT_KEY_SIZE],
                                         const void *aad, size_t aad_len, const void *ciphertext,
                                         size_t ciphertext_len) CACHEKIT_NOEXCEPT;

/* A keyring: the current master key plus up to 3 decrypt-only previous keys.
 * Thread-safe; tenants' derived keys are cached inside. */
typedef struct cachekit_keyring cachekit_keyring;

/* Create a keyring from hex master keys. `previous_hex` is NULL, "" or a
 * comma-separated list (at most 3, none equal to the current key). Since 0.1. */
CACHEKIT_API int cachekit_keyring_new(cachekit_keyring **out, const char *current_hex,
                                      const char *previous_hex) CACHEKIT_NOEXCEPT;

/* Create a keyring from raw 32-byte keys; `previous` holds previous_count
 * consecutive 32-byte keys. Since 0.1. */
CACHEKIT_API int cachekit_keyring_new_raw(cachekit_keyring **out, const void *current,
                                          size_t current_len, const void *previous,
                                          size_t previous_count) CACHEKIT_NOEXCEPT;

/* Destroy a keyring (NULL accepted). Must not race with other calls on it. */
CACHEKIT_API void cachekit_keyring_free(cachekit_keyring *keyring) CACHEKIT_NOEXCEPT;

/* The fingerprint of the current key for `tenant` (NULL = "default"). */
CACHEKIT_API int cachekit_keyring_fingerprint(const cachekit_keyring *keyring,
                                              unsigned char out[CACHEKIT_FINGERPRINT_SIZE],
                                              const char *tenant) CACHEKIT_NOEXCEPT;

/* Seal with the current key for `tenant` and a counter nonce (u64be instance
 * id || u32be counter). Nonces never repeat, across fork() too: each keyring
 * draws its instance id from the kernel (getrandom), and a keyring inherited
 * through fork() draws a fresh one on the child's first seal. When the
 * counter reaches 2^32 it rolls to a fresh random instance id and restarts;
 * CACHEKIT_ENONCE only when the kernel gives no random bytes. Since 0.1. */
CACHEKIT_API int cachekit_keyring_encrypt(const cachekit_keyring *keyring, cachekit_buf *out,
                                          const char *tenant, const void *aad, size_t aad_len,
                                          const void *plaintext,
                                          size_t plaintext_len) CACHEKIT_NOEXCEPT;

/* Open with the keyring. With a `fingerprint` (16 bytes) the key whose derived
 * fingerprint matches is the only one tried (CACHEKIT_EKEYNOTFOUND if none);
 * without one, the current key then each previous key, moving on only after
 * an authentication failure. The index of the key that opened it (0 =
 * current) goes to `key_index` when not NULL. Since 0.1. */
CACHEKIT_API int cachekit_keyring_decrypt(const cachekit_keyring *keyring, cachekit_buf *out,
                                          int *key_index, const char *tenant,
                                          const unsigned char *fingerprint, const void *aad,
                                          size_t aad_len, const void *ciphertext,
                                          size_t ciphertext_len) CACHEKIT_NOEXCEPT;

/* ======================================================================
 * Codec calls: inspection, for operators
 * ====================================================================== */

/* Describe a stored value as a JSON object: {"kind": "ck_frame" | "envelope" |
 * "interop_v2" | "msgpack" | "ciphertext" | "unknown", "size": n, "checks":
 * "pass" | "fail" | "not_checked", "error": name?, "message": text?,
 * "value": decoded JSON?, ...}. With a keyring and cache_key, ciphertext is
 * opened first. Never fails on bad input (that is reported inside the JSON);
 * fails only for bad arguments or memory. Since 0.1. */
CACHEKIT_API int cachekit_inspect(cachekit_buf *out_json, const void *data, size_t len,
                                  const cachekit_keyring *keyring, const char *tenant,
                                  const char *cache_key) CACHEKIT_NOEXCEPT;

/* ======================================================================
 * L2 backends: Redis (hiredis), a shared directory of files, process memory
 *
 * A backend handle is what a cache's second tier talks to, also usable on its
 * own (the `cachekit get|set|del|inspect --backend URL` commands do). Every
 * call has a deadline (command_timeout_ms) and goes through a circuit breaker:
 * after breaker_failures consecutive failures the breaker opens and calls
 * fail at once with CACHEKIT_ECIRCUIT_OPEN; after breaker_recovery_ms it lets
 * breaker_half_open_calls trial calls through, and breaker_successes
 * successes close it again (a failure re-opens it). With fail_open (the
 * default) a failed read is a miss (CACHEKIT_ENOTFOUND) and a failed write is
 * skipped (CACHEKIT_OK), both counted in the stats; with fail_open = 0 the
 * error is returned (CACHEKIT_EBACKEND, CACHEKIT_ETIMEOUT,
 * CACHEKIT_ECIRCUIT_OPEN, CACHEKIT_EBUSY when backpressure rejects a call).
 * All calls are thread-safe, except cachekit_backend_free.
 * ====================================================================== */

typedef struct cachekit_backend cachekit_backend;

/* Breaker states, as cachekit_backend_stats reports them (and the
 * circuit_breaker_state metric: 0 closed, 1 open, 2 half-open). */
#define CACHEKIT_BREAKER_CLOSED 0
#define CACHEKIT_BREAKER_OPEN 1
#define CACHEKIT_BREAKER_HALF_OPEN 2

/* Options of cachekit_backend_open. Zero means the default given. The
 * library reads only the fields that fit in struct_size. Since 0.1. */
typedef struct cachekit_backend_options {
    size_t struct_size;
    uint32_t pool_size;               /* Redis connections: 10 */
    uint32_t connect_timeout_ms;      /* Redis connect + AUTH + SELECT: 500 (never past the call's deadline) */
    uint32_t command_timeout_ms;      /* every call's whole deadline, all reads and writes: 250 (a cache
                                         must fail fast); a timeout counts as a breaker failure */
    uint32_t breaker_failures;        /* consecutive failures that open it: 5 */
    uint32_t breaker_recovery_ms;     /* open -> half-open: 30000 */
    uint32_t breaker_half_open_calls; /* trial calls admitted when half-open: 3 */
    uint32_t breaker_successes;       /* half-open successes that close it: 3 */
    int breaker_disabled;             /* 1: no breaker */
    int fail_closed;                  /* 1: return errors instead of degrading */
    uint32_t max_concurrency;         /* backpressure bound on calls in flight: 0 = none */
    uint32_t backpressure_wait_ms;    /* how long a call waits for a slot: 100 */
    uint64_t file_max_bytes;          /* file backend size limit: 1 GiB */
    uint64_t file_max_entries;        /* file backend entry limit: 10000 */
    uint64_t file_max_value_bytes;    /* file backend largest value: 100 MiB */
    uint64_t max_reply_bytes;         /* Redis: largest reply read, framing included; a bigger value is
                                         CACHEKIT_ETOOBIG, refused from its length before it is read.
                                         0 = 513 MiB for a backend opened alone; a cache's own backend
                                         takes its max_value_bytes plus envelope overhead. Since 0.2. */
    /* Redis over TLS, the fields of redis-py's ssl* keywords (Since 0.2). They
     * apply to redis:// and rediss:// only: set on a file://, memory://, unix://
     * or cluster URL they are CACHEKIT_EINVAL. A rediss:// URL's own ssl_* query
     * parameters win over these, as in redis-py's from_url(url, **kwargs), so
     * the URL an operator deploys has the last word. Strings are copied at open;
     * NULL or "" = unset. A bad file is CACHEKIT_EINVAL naming it. */
    int tls;                          /* 1: TLS even for a redis:// URL (rediss:// always is); 0 = as the URL
                                         says. Without TLS the other tls_* fields are CACHEKIT_EINVAL. */
    int tls_cert_reqs;                /* CACHEKIT_TLS_CERT_REQUIRED (0), _OPTIONAL or _NONE (ssl_cert_reqs) */
    int tls_check_hostname;           /* 0: when cert_reqs is required; CACHEKIT_TLS_CHECK_HOSTNAME_YES (1)
                                         or _NO (-1) (ssl_check_hostname) */
    const char *tls_ca_certs;         /* PEM CA bundle (ssl_ca_certs); with tls_ca_path unset too: the system's */
    const char *tls_ca_path;          /* c_rehash'ed CA directory (ssl_ca_path) */
    const char *tls_certfile;         /* client certificate chain, mutual TLS (ssl_certfile) */
    const char *tls_keyfile;          /* its key; unset: in tls_certfile (ssl_keyfile) */
} cachekit_backend_options;

/* cachekit_backend_options.tls_cert_reqs, as redis-py's ssl_cert_reqs
 * "required", "optional", "none". */
#define CACHEKIT_TLS_CERT_REQUIRED 0
#define CACHEKIT_TLS_CERT_OPTIONAL 1
#define CACHEKIT_TLS_CERT_NONE 2
/* cachekit_backend_options.tls_check_hostname (0: the default). */
#define CACHEKIT_TLS_CHECK_HOSTNAME_YES 1
#define CACHEKIT_TLS_CHECK_HOSTNAME_NO (-1)

#define CACHEKIT_BACKEND_OPTIONS_INIT \
    {sizeof(cachekit_backend_options), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, NULL, NULL, NULL}

/* Fill `opts` with the defaults for a caller whose struct has struct_size
 * bytes (for FFI callers). Since 0.1. */
CACHEKIT_API int cachekit_backend_options_init(cachekit_backend_options *opts,
                                               size_t struct_size) CACHEKIT_NOEXCEPT;

/* Open a backend by URL: redis://[user:password@]host[:port][/db],
 * rediss://... (TLS, redis-py's ssl_* query parameters; or redis:// with opts->tls),
 * redis-cluster://host:port[,host:port...], rediss-cluster://... (TLS, or opts->tls),
 * redis-sentinel://h[:p],.../master[/db], rediss-sentinel://... (TLS),
 * unix:///path/to.sock[?db=N], file:///absolute/dir, memory:// . NULL takes
 * CACHEKIT_REDIS_URL, then REDIS_URL. The Redis backend connects lazily; a server
 * that is down makes calls fail, not the open. opts NULL = defaults.
 * Every call ends within command_timeout_ms (connect included), however
 * slowly the server answers; replies are bounded by max_reply_bytes before
 * they are read. Fork-safe: after fork() a child's first call drops the
 * Redis connections it inherited (closing its copies of the sockets,
 * sending nothing: the parent's stay open and in step) and connects anew;
 * the breaker state is inherited, calls in flight in other threads are not.
 * Since 0.1. */
CACHEKIT_API int cachekit_backend_open(cachekit_backend **out, const char *url,
                                       const cachekit_backend_options *opts) CACHEKIT_NOEXCEPT;

/* Close a backend (NULL accepted). Must not race with other calls on it. */
CACHEKIT_API void cachekit_backend_free(cachekit_backend *backend) CACHEKIT_NOEXCEPT;

/* "redis", "file" or "memory". Static string. */
CACHEKIT_API const char *cachekit_backend_kind(const cachekit_backend *backend) CACHEKIT_NOEXCEPT;

/* Read a value: CACHEKIT_OK with the bytes in `out`, or CACHEKIT_ENOTFOUND. */
CACHEKIT_API int cachekit_backend_get(cachekit_backend *backend, cachekit_buf *out, const void *key,
                                      size_t key_len) CACHEKIT_NOEXCEPT;

/* Write a value; ttl_seconds 0 means no expiry (negative, NaN or infinite
 * is CACHEKIT_EINVAL; sub-millisecond TTLs round up to 1 ms). */
CACHEKIT_API int cachekit_backend_set(cachekit_backend *backend, const void *key, size_t key_len,
                                      const void *value, size_t value_len,
                                      double ttl_seconds) CACHEKIT_NOEXCEPT;

/* Delete a key: CACHEKIT_OK when it existed, CACHEKIT_ENOTFOUND when not. */
CACHEKIT_API int cachekit_backend_delete(cachekit_backend *backend, const void *key,
                                         size_t key_len) CACHEKIT_NOEXCEPT;

/* CACHEKIT_OK when the key exists, CACHEKIT_ENOTFOUND when not. */
CACHEKIT_API int cachekit_backend_exists(cachekit_backend *backend, const void *key,
                                         size_t key_len) CACHEKIT_NOEXCEPT;

/* The remaining time to live in seconds: -1.0 for a key without expiry.
 * CACHEKIT_ENOTFOUND when the key does not exist. */
CACHEKIT_API int cachekit_backend_ttl(cachekit_backend *backend, double *ttl_seconds, const void *key,
                                      size_t key_len) CACHEKIT_NOEXCEPT;

/* Read `count` keys in one round trip (MGET on Redis). results[i] is set to
 * CACHEKIT_OK (bytes in outs[i]) or CACHEKIT_ENOTFOUND. Since 0.1. */
CACHEKIT_API int cachekit_backend_get_many(cachekit_backend *backend, cachekit_buf *outs, int *results,
                                           const void *const *keys, const size_t *key_lens,
                                           size_t count) CACHEKIT_NOEXCEPT;

/* Write `count` values in one round trip (pipelined SET), all with one TTL. */
CACHEKIT_API int cachekit_backend_set_many(cachekit_backend *backend, const void *const *keys,
                                           const size_t *key_lens, const void *const *values,
                                           const size_t *value_lens, size_t count,
                                           double ttl_seconds) CACHEKIT_NOEXCEPT;

/* The packed forms of get_many and set_many: no array of pointers (a Go
 * caller may pass Go memory; Go forbids Go pointers to Go pointers). Key i is
 * keys[key_offsets[i] .. key_offsets[i + 1]); key_offsets holds count + 1
 * non-decreasing offsets and `keys` holds key_offsets[count] bytes. Values
 * are packed the same way: get_many_packed writes every value found, one
 * after another, to `values_out` and sets value_offsets[0 .. count] (count +
 * 1 entries) so value i is values_out->ptr[value_offsets[i] ..
 * value_offsets[i + 1]); a miss has results[i] = CACHEKIT_ENOTFOUND and an
 * empty range. Same round trips, limits and errors as the pointer forms
 * (CACHEKIT_EINVAL for decreasing offsets or an empty or too long key). On
 * failure the outputs are unspecified. Since 0.2. */
CACHEKIT_API int cachekit_backend_get_many_packed(cachekit_backend *backend, cachekit_buf *values_out,
                                                  size_t *value_offsets, int *results, const void *keys,
                                                  const size_t *key_offsets, size_t count) CACHEKIT_NOEXCEPT;

CACHEKIT_API int cachekit_backend_set_many_packed(cachekit_backend *backend, const void *keys,
                                                  const size_t *key_offsets, const void *values,
                                                  const size_t *value_offsets, size_t count,
                                                  double ttl_seconds) CACHEKIT_NOEXCEPT;

/* Delete every key that starts with `prefix` (SCAN MATCH + UNLINK in batches
 * on Redis, never KEYS); the count deleted goes to `deleted` when not NULL.
 * This is the raw, explicit form: it deletes whatever the prefix matches,
 * the cache's keys or not. An empty prefix clears everything — the whole
 * Redis database (other applications' keys too) or the whole file
 * directory: the explicit database-wide clear (cachekit_cache_clear
 * deletes only the cache's own keys). The file backend stores hashed names,
 * so it can clear everything but not a prefix (CACHEKIT_EINVAL). */
CACHEKIT_API int cachekit_backend_clear(cachekit_backend *backend, uint64_t *deleted, const void *prefix,
                                        size_t prefix_len) CACHEKIT_NOEXCEPT;

/* Try to take the lock named `key` for hold_ms (SET NX PX with a random
 * token on Redis). CACHEKIT_OK with the token in `token`, or CACHEKIT_EBUSY
 * when someone else holds it. */
CACHEKIT_API int cachekit_backend_lock(cachekit_backend *backend, cachekit_buf *token, const void *key,
                                       size_t key_len, uint32_t hold_ms) CACHEKIT_NOEXCEPT;

/* Release a lock if `token` still owns it (compare-and-delete). CACHEKIT_OK
 * when released, CACHEKIT_ENOTFOUND when it expired or another owner holds it. */
CACHEKIT_API int cachekit_backend_unlock(cachekit_backend *backend, const void *key, size_t key_len,
                                         const void *token, size_t token_len) CACHEKIT_NOEXCEPT;

/* Add `delta` to the signed 64-bit integer stored under `key` as decimal
 * digits (as Redis INCRBY stores it: no sign but '-', no leading zeros, no
 * spaces), in one round trip and atomically on the server (a Lua script on
 * Redis; under the entry's lock on the file backend); the TTL stays as it
 * was. CACHEKIT_OK with the new value in `*value`; CACHEKIT_ENOTFOUND (no
 * message) when the key does not exist (nothing is created);
 * CACHEKIT_EUNSUPPORTED when the value is not such an integer;
 * CACHEKIT_ETOOBIG when the result would not fit in 64 bits (the value is
 * left as it was). Neither is a backend failure: the breaker does not see
 * them. A failed increment is never degraded, even with fail_open.
 * Since 0.2. */
CACHEKIT_API int cachekit_backend_incr(cachekit_backend *backend, int64_t *value, const void *key,
                                       size_t key_len, int64_t delta) CACHEKIT_NOEXCEPT;

/* Store a value only if the key does not exist (SET NX PX on Redis), with
 * ttl_seconds as cachekit_backend_set takes it. `*added` (when not NULL) is
 * 1 when it was stored, 0 when the key existed and was left alone. With
 * fail_open a failed add is skipped and reports 0. Since 0.2. */
CACHEKIT_API int cachekit_backend_add(cachekit_backend *backend, int *added, const void *key,
                                      size_t key_len, const void *value, size_t value_len,
                                      double ttl_seconds) CACHEKIT_NOEXCEPT;

/* Give an existing key a new time to live from now, leaving its value
 * alone: ttl_seconds > 0 (PEXPIRE on Redis) or 0 for no expiry (PERSIST).
 * CACHEKIT_OK when the key existed, CACHEKIT_ENOTFOUND when not. One round
 * trip. With fail_open a failed touch is skipped and reports
 * CACHEKIT_ENOTFOUND. Since 0.2. */
CACHEKIT_API int cachekit_backend_touch(cachekit_backend *backend, const void *key, size_t key_len,
                                        double ttl_seconds) CACHEKIT_NOEXCEPT;

/* Delete `count` keys in one round trip where the backend allows (UNLINK of
 * up to 1000 keys per command on Redis; on a cluster one UNLINK per hash
 * slot, every node's commands written before any reply is read). The number
 * of keys that existed goes to `*deleted` when not NULL. Keys as for
 * cachekit_backend_delete (an empty key is CACHEKIT_EINVAL, nothing
 * deleted). With fail_open a failed delete is skipped and reports 0.
 * Since 0.2. */
CACHEKIT_API int cachekit_backend_delete_many(cachekit_backend *backend, uint64_t *deleted,
                                              const void *const *keys, const size_t *key_lens,
                                              size_t count) CACHEKIT_NOEXCEPT;

/* cachekit_backend_delete_many with the keys packed as
 * cachekit_backend_get_many_packed takes them. Since 0.2. */
CACHEKIT_API int cachekit_backend_delete_many_packed(cachekit_backend *backend, uint64_t *deleted,
                                                     const void *keys, const size_t *key_offsets,
                                                     size_t count) CACHEKIT_NOEXCEPT;

/* Ping the backend; the round trip in milliseconds goes to latency_ms. Health
 * is never degraded: a failure is always returned. */
CACHEKIT_API int cachekit_backend_health(cachekit_backend *backend, double *latency_ms) CACHEKIT_NOEXCEPT;

/* Counters of a backend handle. struct_size first; only fields that fit are
 * written. Since 0.1. */
typedef struct cachekit_backend_stats {
    size_t struct_size;
    int breaker_state;          /* CACHEKIT_BREAKER_* */
    uint64_t calls;             /* calls attempted against the backend */
    uint64_t failures;          /* errors and timeouts */
    uint64_t timeouts;
    uint64_t rejected_open;     /* failed fast: breaker open */
    uint64_t rejected_busy;     /* failed fast: backpressure */
    uint64_t degraded_reads;    /* fail-open: an error turned into a miss */
    uint64_t skipped_writes;    /* fail-open: an error turned into a skipped write */
    uint64_t breaker_opened;    /* times the breaker opened */
    double latency_ms_sum;      /* over successful calls */
    uint64_t latency_count;
} cachekit_backend_stats;

CACHEKIT_API int cachekit_backend_stats_get(cachekit_backend *backend,
                                            cachekit_backend_stats *out) CACHEKIT_NOEXCEPT;

/* ======================================================================
 * The cache handle: L1 -> L2 -> load, with single-flight and SWR
 *
 * A cachekit_cache ties the in-process L1, the codec and an L2 backend
 * together. Values are MessagePack payloads (one document each); the handle
 * writes them in the configured stored form (auto mode: the reference SDK's
 * CK v3 frame around the envelope or ciphertext; interop: plain MessagePack
 * or ciphertext) and verifies every entry it reads (envelope checks,
 * decryption, no plaintext where encryption is required). Keys are the
 * codec's keys (cachekit_key_auto / cachekit_key_interop). Every call takes
 * the namespace the key belongs to (NULL = ""), for namespace invalidation
 * and per-namespace metrics: a NUL-terminated UTF-8 string of at most
 * CACHEKIT_MAX_NAMESPACE_SIZE bytes (no (pointer, length) form: a binding
 * refuses a namespace with an embedded NUL itself). A longer or invalid one
 * is CACHEKIT_EINVAL with a message, on every call that reads it (a
 * cachekit_cache_get answered from L1 without `info` does not read it). All
 * calls are thread-safe except cachekit_cache_free.
 * ====================================================================== */

/* The longest cache namespace, in bytes. */
#define CACHEKIT_MAX_NAMESPACE_SIZE 1024u

typedef struct cachekit_cache cachekit_cache;

/* Three-way switches in options: 0 takes the default (or the environment). */
#define CACHEKIT_DEFAULT 0
#define CACHEKIT_ON 1
#define CACHEKIT_OFF (-1)

#define CACHEKIT_FORMAT_AUTO 0    /* the reference Python SDK's stored form */
#define CACHEKIT_FORMAT_INTEROP 1 /* interop/v1: every CacheKit SDK reads it */
/* Auto mode under the reference Python SDK's "auto" serializer: the frame is
 * tagged "auto" (not "default") and only such frames are read; the payload is
 * the wrapper's (MessagePack with that serializer's type markers). Since 0.2. */
#define CACHEKIT_FORMAT_AUTO_PYTHON 2
/* Plain MessagePack values under any key: interop/v1's stored form without
 * its key rule, for the Rust SDK's get/set under a client `.namespace(ns)`
 * (key_prefix "ns:"; an encrypted entry's AAD binds the prefixed key).
 * CACHEKIT_FORMAT_INTEROP refuses a key_prefix; this one takes it. */
#define CACHEKIT_FORMAT_PLAIN 3

/* ttl_seconds value meaning "the cache's default TTL" in calls that take a TTL. */
#define CACHEKIT_TTL_DEFAULT (-1.0)

/* Options of cachekit_cache_new. Explicit fields win over the environment:
 * CACHEKIT_REDIS_URL (then REDIS_URL), CACHEKIT_FILE_CACHE_DIR,
 * CACHEKIT_L1_MAX_SIZE_MB (100), CACHEKIT_L1_CLEANUP_INTERVAL_SECONDS (30),
 * CACHEKIT_L1_ADMISSION (lru),
 * CACHEKIT_MASTER_KEY, CACHEKIT_PREVIOUS_MASTER_KEYS,
 * CACHEKIT_ENCRYPTION_FAIL_CLOSED, CACHEKIT_MAX_VALUE_SIZE (100 MiB). Naming
 * both CACHEKIT_REDIS_URL and CACHEKIT_FILE_CACHE_DIR is CACHEKIT_EINVAL.
 * With no URL, backend or environment, the L2 is the file backend in a
 * per-user directory (the embedded default): $XDG_CACHE_HOME/cachekit when
 * XDG_CACHE_HOME is an absolute path, else $TMPDIR/cachekit-<euid> (TMPDIR
 * unset: /tmp), created 0700; an existing one that is a symlink, not a
 * directory, owned by another user or open to group or others is refused
 * with CACHEKIT_EINVAL. CACHEKIT_MASTER_KEY is a key
 * source only: encryption is on only when `encryption` says so. Since 0.1. */
typedef struct cachekit_cache_options {
    size_t struct_size;
    const char *backend_url;        /* NULL: the environment; "none": no L2 (L1 only) */
    cachekit_backend *backend;      /* borrowed, must outlive the cache; wins over backend_url.
                                       It keeps its own policy: open it with fail_closed = 1 so
                                       the cache sees (counts, degrades or returns) backend errors */
    int format;                     /* CACHEKIT_FORMAT_AUTO (default), _INTEROP or _AUTO_PYTHON */
    int integrity;                  /* auto mode envelope: default on */
    int encryption;                 /* default off; on needs a master key */
    const char *master_key_hex;     /* NULL: CACHEKIT_MASTER_KEY */
    const char *previous_keys_hex;  /* NULL: CACHEKIT_PREVIOUS_MASTER_KEYS */
    const char *tenant;             /* NULL: "default" */
    const char *key_prefix;         /* L2 storage prefix, e.g. "t:default:"; bound in auto-mode AADs */
    double default_ttl_seconds;     /* 0: no expiry */
    int l1;                         /* default on */
    uint64_t l1_max_bytes;          /* 0: CACHEKIT_L1_MAX_SIZE_MB or 100 MiB */
    uint32_t l1_sweep_interval_ms;  /* 0: CACHEKIT_L1_CLEANUP_INTERVAL_SECONDS or 30 s */
    int swr;                        /* stale-while-revalidate on L1 hits: default off */
    double swr_threshold_ratio;     /* 0: 0.5; a hit older than ttl x ratio (+-10 %) is stale */
    int fail_closed;                /* on: backend errors and refused entries are errors */
    uint64_t max_value_bytes;       /* 0: CACHEKIT_MAX_VALUE_SIZE or 100 MiB */
    uint32_t load_timeout_ms;       /* how long a single-flight waiter waits: 30000 */
    int cross_process_lock;         /* on: one process computes, through the backend's lock */
    uint32_t lock_hold_ms;          /* 30000 */
    uint32_t lock_wait_ms;          /* 5000 */
    /* For a backend opened from a URL; NULL = the defaults. Read during
     * cachekit_cache_new only (the library keeps a copy). Since 0.2, when
     * it replaced the struct embedded here by value. */
    const cachekit_backend_options *backend_options;
    /* The reference SDK's refresh_ttl_on_get with its ttl_refresh_threshold:
     * 0 (the default) = off; a fraction f in (0, 1] = an L2 hit of an entry
     * that expires and has less than default_ttl_seconds x f left gets
     * default_ttl_seconds again (Redis PEXPIRE, the file backend's expiry
     * header rewritten in place, the memory backend's expiry), value and
     * bytes untouched; the reference's default threshold is 0.5. L1 hits do
     * not refresh. A failed refresh leaves the TTL and the hit stands
     * (docs/cache.md). Needs default_ttl_seconds > 0. Since 0.2, appended: a caller
     * whose struct_size ends before it gets 0. */
    double refresh_ttl_on_get;
    /* What the L1 keeps when its budget is full (see cachekit_l1_options.
     * admission): CACHEKIT_L1_ADMISSION_LRU (0, the default: the environment's
     * CACHEKIT_L1_ADMISSION=lru|tinylfu, else LRU) or
     * CACHEKIT_L1_ADMISSION_TINYLFU. Since 0.2, appended: a caller whose struct_size
     * ends before it gets 0. */
    int l1_admission;
} cachekit_cache_options;

/* Fill `opts` with defaults for a caller whose struct has struct_size bytes. */
CACHEKIT_API int cachekit_cache_options_init(cachekit_cache_options *opts,
                                             size_t struct_size) CACHEKIT_NOEXCEPT;

/* Create a cache (opts NULL = defaults and environment). Since 0.1. */
CACHEKIT_API int cachekit_cache_new(cachekit_cache **out,
                                    const cachekit_cache_options *opts) CACHEKIT_NOEXCEPT;

/* Destroy a cache (NULL accepted). Must not race with other calls on it. */
CACHEKIT_API void cachekit_cache_free(cachekit_cache *cache) CACHEKIT_NOEXCEPT;

/* Where a value came from (cachekit_lookup.source). */
#define CACHEKIT_SOURCE_NONE 0
#define CACHEKIT_SOURCE_L1 1
#define CACHEKIT_SOURCE_L2 2
#define CACHEKIT_SOURCE_LOADED 3  /* this caller ran the loader */
#define CACHEKIT_SOURCE_WAITED 4  /* another caller's load, shared */

/* What a lookup learned. `refresh` = 1 means the value was stale and this
 * caller (exactly one) should refresh it: compute a new value on its own
 * runtime and hand it back with cachekit_cache_put_refresh(refresh_claim),
 * or release the claim with cachekit_cache_abandon_refresh. Since 0.1. */
typedef struct cachekit_lookup {
    size_t struct_size;
    int source;
    int refresh;
    uint64_t refresh_claim;
    double age_seconds;  /* of an L1 hit, else -1 */
    /* For readers of the reference SDK's values: 1 when the payload contains
     * a str "__datetime__", "__date__" or "__time__" (its temporal sentinel
     * maps may be there), 0 when it cannot hold one, -1 when this lookup did
     * not check the payload (an L1 hit, another caller's load). The check
     * every L2 read makes anyway notes it, so a wrapper need not search.
     * Added after the first form of this struct: a caller whose struct_size
     * ends before it gets every other field. */
    int temporal_keys;
} cachekit_lookup;

#define CACHEKIT_LOOKUP_INIT {sizeof(cachekit_lookup), 0, 0, 0, -1.0, -1}

/* Read a value: CACHEKIT_OK with the payload in `out`, or CACHEKIT_ENOTFOUND.
 * `info` may be NULL. */
CACHEKIT_API int cachekit_cache_get(cachekit_cache *cache, cachekit_buf *out, cachekit_lookup *info,
                                    const char *ns, const void *key, size_t key_len) CACHEKIT_NOEXCEPT;

/* The L1 part of cachekit_cache_get alone, for callers that must not block
 * (an async binding's executor thread): CACHEKIT_OK with the payload of an
 * L1 hit in `out`, else CACHEKIT_ENOTFOUND (also when L1 is off). It never
 * reads or waits on L2, never joins a load, and counts no miss (the caller's
 * following get or get_or_load does). `info` may be NULL; with SWR a stale
 * hit may hand out a refresh claim as cachekit_cache_get does. Since 0.2. */
CACHEKIT_API int cachekit_cache_peek(cachekit_cache *cache, cachekit_buf *out, cachekit_lookup *info,
                                     const char *ns, const void *key, size_t key_len) CACHEKIT_NOEXCEPT;

/* Store a payload (one MessagePack document) in both tiers. ttl_seconds:
 * CACHEKIT_TTL_DEFAULT, 0 for no expiry, or > 0. CACHEKIT_ETOOBIG (not
 * stored) past max_value_bytes. */
CACHEKIT_API int cachekit_cache_put(cachekit_cache *cache, const char *ns, const void *key, size_t key_len,
                                    const void *value, size_t value_len,
                                    double ttl_seconds) CACHEKIT_NOEXCEPT;

/* The context a loader fills. */
typedef struct cachekit_load cachekit_load;

/* A loader computes the value for a missing key on the calling thread. It
 * sets the value with cachekit_load_set_value and returns 0, or returns
 * non-zero (optionally after cachekit_load_set_error): every waiter then gets
 * CACHEKIT_EUSER and nothing is cached. No library lock is held while it runs.
 * `load` is valid only during the call. A loader must return (no longjmp, no
 * exception or foreign unwind): see "Loaders" in the contract for bindings
 * near the top of this header for what it may call and what a binding does
 * with a panic. */
typedef int (*cachekit_loader)(cachekit_load *load, void *payload);

CACHEKIT_API int cachekit_load_set_value(cachekit_load *load, const void *value,
                                         size_t value_len) CACHEKIT_NOEXCEPT;
/* Override the TTL for this value (CACHEKIT_TTL_DEFAULT, 0 = none, > 0). */
CACHEKIT_API int cachekit_load_set_ttl(cachekit_load *load, double ttl_seconds) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_load_set_error(cachekit_load *load, const char *message) CACHEKIT_NOEXCEPT;

/* Get, or run `loader` once per key across concurrent callers in this
 * process (the others wait up to load_timeout_ms and get the same bytes).
 * A loader that asks for its own key gets CACHEKIT_EDEADLOCK. Values past
 * max_value_bytes are returned but not stored. A miss reads L2 once. When
 * the call's L2 read failed or timed out (fail-open), the rest of the call
 * leaves L2 alone (no cross-process lock, no L2 write; the value goes to L1
 * only), so an outage costs a call one command timeout at most. A value
 * whose key was put or invalidated while the loader ran is returned but not
 * stored. Since 0.1. */
CACHEKIT_API int cachekit_cache_get_or_load(cachekit_cache *cache, cachekit_buf *out, cachekit_lookup *info,
                                            const char *ns, const void *key, size_t key_len,
                                            double ttl_seconds, cachekit_loader loader,
                                            void *payload) CACHEKIT_NOEXCEPT;

/* Land a stale-while-revalidate refresh, or a load claimed by
 * cachekit_cache_get_for_load. CACHEKIT_ENOTFOUND when the claim lost to an
 * invalidation or a newer write (nothing is stored). */
CACHEKIT_API int cachekit_cache_put_refresh(cachekit_cache *cache, const char *ns, const void *key,
                                            size_t key_len, const void *value, size_t value_len,
                                            double ttl_seconds, uint64_t refresh_claim) CACHEKIT_NOEXCEPT;

/* Give up a refresh claim so a later stale hit may claim it again, or a
 * load claim of cachekit_cache_get_for_load (counted in load_errors). */
CACHEKIT_API int cachekit_cache_abandon_refresh(cachekit_cache *cache, const void *key, size_t key_len,
                                                uint64_t refresh_claim) CACHEKIT_NOEXCEPT;

/* cachekit_cache_get for a caller that computes a missing value on its own
 * runtime (an async binding's event loop or executor), where
 * cachekit_cache_get_or_load cannot run the function. A hit is
 * cachekit_cache_get's (L1, then L2 read once; with SWR a stale hit may
 * carry a refresh claim). On a miss (CACHEKIT_ENOTFOUND) info->refresh is 1
 * and info->refresh_claim a load claim: the caller computes the value and
 * lands it with cachekit_cache_put_refresh(refresh_claim), which stores
 * nothing and answers CACHEKIT_ENOTFOUND when the key was put or
 * invalidated (key, namespace or clear, through this handle) after the
 * claim was taken, or releases it with cachekit_cache_abandon_refresh (the
 * function failed or was cancelled). A load claim orders, it does not
 * exclude: like the claim of a get_or_load leader, a newer claim of the
 * same key replaces an older one, whose put_refresh then stores nothing
 * (the newest load lands); callers dedupe concurrent loads of a key
 * themselves. Every put_refresh of a load claim counts in `loads` (stored
 * or not, as get_or_load counts), every abandon of a claim still known in
 * `load_errors`. put_refresh writes L2 as a put does (unlike get_or_load,
 * it does not skip L2 after a failed read). In a forked child a claim
 * taken before fork() holds nothing up: the child's next claim of the key
 * replaces it. `info` is required (CACHEKIT_EINVAL when NULL). Since 0.2. */
CACHEKIT_API int cachekit_cache_get_for_load(cachekit_cache *cache, cachekit_buf *out, cachekit_lookup *info,
                                             const char *ns, const void *key, size_t key_len) CACHEKIT_NOEXCEPT;

/* Invalidate one key, a namespace, or everything, in both tiers. A load,
 * write or read-through fill that began before the invalidation never
 * stores after it (in L1 or L2), however slow it is; a read that began
 * before a newer put never lands after it either. No lock of the cache is
 * held across the L2 call: other keys' calls go on meanwhile, and a
 * namespace invalidation or clear SCANs in batches.
 * Namespace invalidation and clear delete only the cache's own key space:
 * keys of its format under its key_prefix, each checked for the exact shape
 * before deletion — auto mode {prefix}[ns:{ns}:]func:{fn}:args:{64 hex}:
 * {0|1}{code} (or its shortened long form), interop {prefix}{ns}:{op}:
 * {64 hex}; namespace invalidation only those of `ns`. Other applications'
 * keys in the same database, keys of other prefixes and keys of other
 * shapes stay (a key of another shape put through this cache leaves L1
 * only: invalidate it by key). A database-wide clear is the explicit
 * cachekit_backend_clear with an empty prefix. The file backend stores
 * hashed names: clear empties its directory (the cache's own), and
 * cachekit_cache_invalidate_namespace clears L1 and answers CACHEKIT_EINVAL
 * (the L2 entries live out their TTL; invalidate keys one by one, or use
 * Redis or memory). Under fail-open a failed L2 delete is counted and
 * skipped. See docs/cache.md "Invalidation". */
CACHEKIT_API int cachekit_cache_invalidate(cachekit_cache *cache, const char *ns, const void *key,
                                           size_t key_len) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_cache_invalidate_namespace(cachekit_cache *cache, const char *ns) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_cache_clear(cachekit_cache *cache) CACHEKIT_NOEXCEPT;

/* The reference SDK's server-side key registry (docs/redis.md "Key
 * registry"), so that whole-function invalidation by any process, ours or
 * the reference SDK's, removes every process's entries of the function.
 * cachekit_cache_track_function declares a function: `function` is its
 * identity as the reference hashes it ("{module}.{qualname}"), `ns` its
 * namespace (NULL or "" for none), `key_head` the bytes every key of the
 * function starts with, ending in ':' ("[ns:{ns}:]func:{fn}:args:" in auto
 * mode, "{ns}:{operation}:" in interop mode). From then on each L2 write of
 * such a key (put, loaded value, refresh) also runs SADD
 * {key_prefix}ck:reg:{ns}:{16 hex of BLAKE3(function)} {key} and EXPIRE of
 * that set to 7 days, in the same round trip; a failed registry write does
 * not fail the put (counted as errors kind="registry" in the metrics text).
 * `kept` (may be NULL) is set to 1 when the L2 keeps registries (Redis), 0
 * otherwise (file, memory, no L2: nothing is written). Declare functions
 * once per cache, before their first write.
 * cachekit_cache_invalidate_function deletes every key the function's
 * registry lists, whoever wrote it, from L2 (UNLINK of {key_prefix}{member},
 * in SSCAN batches, each member removed after its key) and from this
 * cache's L1, until the registry is empty (and so gone); `deleted` (may be
 * NULL) gets the number of keys drained. Keys no registry lists (written
 * before the declaration, by a failed registry write, or long-form keys no
 * head covers) are not reached: invalidate them by key. Without a registry
 * it does nothing and answers CACHEKIT_OK with 0. Since 0.2. */
CACHEKIT_API int cachekit_cache_track_function(cachekit_cache *cache, const char *ns, const char *function,
                                               const void *key_head, size_t key_head_len,
                                               int *kept) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_cache_invalidate_function(cachekit_cache *cache, const char *ns, const char *function,
                                                    uint64_t *deleted) CACHEKIT_NOEXCEPT;

/* Counters of a cache (all namespaces, or one). struct_size first; only the
 * fields that fit are written. Totals are exact at the moment they are read.
 * Since 0.1. */
typedef struct cachekit_cache_stats {
    size_t struct_size;
    uint64_t l1_hits, l2_hits, misses, stores, loads, load_errors, waits;
    uint64_t stale_served, refreshes, dropped_fills, too_large, invalidations;
    uint64_t backend_errors, timeouts, corrupt, tampered, wrong_key, downgrade, serializer_mismatch;
    uint64_t l2_latency_count;
    double l2_latency_sum_ms;
    uint64_t l1_entries, l1_bytes, l1_evictions, l1_expirations; /* whole cache, even for one namespace */
    int breaker_state;                                            /* CACHEKIT_BREAKER_* */
} cachekit_cache_stats;

/* `ns` NULL sums every namespace. */
CACHEKIT_API int cachekit_cache_stats_get(cachekit_cache *cache, cachekit_cache_stats *out,
                                          const char *ns) CACHEKIT_NOEXCEPT;

/* The metrics in the Prometheus text format (cache_operations_total,
 * cache_operation_duration_ms, cache_operation_size_bytes,
 * circuit_breaker_state, cachekit_cache_errors_total, ...). At most 1,024
 * namespaces have series of their own; the least recently used are folded
 * into the series namespace="__other__" (counts added, never lost), as are
 * names longer than 256 bytes. cachekit_cache_stats_get with a namespace
 * reports that namespace's own series (zeros once folded). */
CACHEKIT_API int cachekit_cache_metrics_text(cachekit_cache *cache, cachekit_buf *out) CACHEKIT_NOEXCEPT;

/* Debugging: how many stale-while-revalidate refresh claims and
 * get_for_load load claims the cache still holds (taken, not yet landed
 * with put_refresh or released with abandon_refresh). A binding whose
 * holders always report back sees it return to 0 once its loads end. A
 * claim nobody reports back is purged once its lease (load_timeout_ms) has
 * passed twice, a cancelled one once its lease has passed. Since 0.2. */
CACHEKIT_API int cachekit_cache_claims_held(cachekit_cache *cache, uint64_t *out) CACHEKIT_NOEXCEPT;

/* ======================================================================
 * L1: in-process byte cache (sharded, byte budget, LRU, TTL, namespaces)
 * ====================================================================== */

/* An L1 cache keeps byte-string values under byte-string keys in this
 * process's memory. Each entry belongs to a namespace (a byte string; empty
 * is the default namespace) and may have a time to live. A byte budget bounds
 * the memory: every entry is charged its key, its value and a fixed overhead
 * (about 130 bytes; see docs/l1.md), and an entry charged more than 1/8 of
 * the budget is not admitted. When the budget is full, expired entries go
 * first, then the least recently used. TTLs are measured on the monotonic
 * clock, to one kernel tick (1-4 ms) unless CACHEKIT_L1_FLAG_PRECISE_CLOCK is
 * set. Invalidating a key, a namespace or
 * everything is immediate, and a fill started (cachekit_l1_begin_fill) before
 * an invalidation can never store its value after it.
 *
 * All calls on a cachekit_l1 are thread-safe, except cachekit_l1_free, which
 * must not race with any other call on the same cache.
 *
 * Namespaces are bounded: at most 4,096 namespace records are kept (a record
 * without entries is dropped); entries of further namespaces share one
 * record, and any namespace invalidation then also ends those (extra misses,
 * never stale values).
 *
 * fork(): a cachekit_l1 may be used in a child process. Its locks are taken
 * around fork() and fresh in the child, so other threads of the parent cannot
 * leave them locked; the background sweeper, which does not exist in the
 * child, starts again on the child's first write, miss or stats call. */

typedef struct cachekit_l1 cachekit_l1;

#define CACHEKIT_L1_DEFAULT_MAX_BYTES 104857600u   /* 100 MiB */
#define CACHEKIT_L1_MIN_MAX_BYTES 1048576u         /* 1 MiB */
#define CACHEKIT_L1_MAX_KEY_SIZE 65536u            /* keys are 1..65536 bytes */
#define CACHEKIT_L1_MAX_NAMESPACE_SIZE 65536u      /* namespaces are 0..65536 bytes */
#define CACHEKIT_L1_MAX_SHARDS 1024u
#define CACHEKIT_L1_DEFAULT_SWEEP_INTERVAL_MS 30000u
#define CACHEKIT_L1_DEFAULT_PROMOTE_INTERVAL_US 1000u
/* The longest TTL accepted, in seconds (100 years). */
#define CACHEKIT_L1_MAX_TTL_SECONDS 3153600000.0
/* ttl_seconds value meaning "never expires". */
#define CACHEKIT_L1_TTL_NONE 0.0

/* Options of cachekit_l1_new. Set struct_size to sizeof(cachekit_l1_options)
 * (CACHEKIT_L1_OPTIONS_INIT and cachekit_l1_options_init do); the library
 * reads only the fields that fit in struct_size and gives the others their
 * defaults, so callers built against an older header keep working.
 * Since 0.1. */
typedef struct cachekit_l1_options {
    size_t struct_size;
    /* The byte budget: 0 means CACHEKIT_L1_DEFAULT_MAX_BYTES; otherwise at
     * least CACHEKIT_L1_MIN_MAX_BYTES (smaller is CACHEKIT_EINVAL). */
    uint64_t max_bytes;
    /* Lock shards: 0 means automatic (64); otherwise rounded up to a power of
     * two, at most CACHEKIT_L1_MAX_SHARDS. */
    uint32_t shards;
    /* Period of the background sweep that frees expired entries, in
     * milliseconds; 0 runs no sweeper thread (expired entries are then
     * dropped on read and by eviction only). */
    uint32_t sweep_interval_ms;
    /* A hit moves its entry to the head of the LRU list at most once per this
     * many microseconds (0: on every hit, exact LRU). */
    uint32_t promote_interval_us;
    /* CACHEKIT_L1_FLAG_* bits; unknown bits are CACHEKIT_EINVAL. */
    uint32_t flags;
    /* Eviction and admission: CACHEKIT_L1_ADMISSION_LRU (0, the default) or
     * CACHEKIT_L1_ADMISSION_TINYLFU; other values are CACHEKIT_EINVAL. Since
     * 0.2, appended: a caller whose struct_size ends before it gets LRU. */
    int admission;
} cachekit_l1_options;

/* Evict the least recently used entry of the shard. */
#define CACHEKIT_L1_ADMISSION_LRU 0
/* W-TinyLFU: new entries enter a window of 1% of the budget; one leaving
 * the window replaces the main region's least recently used entry only if
 * it was read more often (a frequency sketch counts every read). Keeps a hot
 * set through scans and gets hits on loops larger than the cache. */
#define CACHEKIT_L1_ADMISSION_TINYLFU 1

/* Read CLOCK_MONOTONIC on every call (about 25 ns) so deadlines are exact to
 * the nanosecond. Without it the cache reads CLOCK_MONOTONIC_COARSE (about
 * 3 ns): an entry then expires within one kernel tick (1-4 ms) of its TTL. */
#define CACHEKIT_L1_FLAG_PRECISE_CLOCK 1u

#define CACHEKIT_L1_OPTIONS_INIT                                                          \
    {sizeof(cachekit_l1_options), 0, 0, CACHEKIT_L1_DEFAULT_SWEEP_INTERVAL_MS,          \
     CACHEKIT_L1_DEFAULT_PROMOTE_INTERVAL_US, 0, CACHEKIT_L1_ADMISSION_LRU}

/* Fill `opts` with the defaults, for callers (FFI) that cannot use
 * CACHEKIT_L1_OPTIONS_INIT: zeroes struct_size bytes, sets the fields that fit
 * and struct_size. CACHEKIT_EINVAL if opts is NULL or struct_size is smaller
 * than a size_t. Since 0.1. */
CACHEKIT_API int cachekit_l1_options_init(cachekit_l1_options *opts,
                                          size_t struct_size) CACHEKIT_NOEXCEPT;

/* Create a cache and write its handle to *out (NULL on failure). `opts` may be
 * NULL for the defaults. The caller owns the handle and releases it with
 * cachekit_l1_free. Errors: CACHEKIT_EINVAL (NULL out, bad struct_size or an
 * option out of range), CACHEKIT_ENOMEM. Since 0.1. */
CACHEKIT_API int cachekit_l1_new(cachekit_l1 **out,
                                 const cachekit_l1_options *opts) CACHEKIT_NOEXCEPT;

/* Destroy a cache and its entries; stops its sweeper thread promptly.
 * Accepts NULL. Must not race with other calls on the same cache. Since 0.1. */
CACHEKIT_API void cachekit_l1_free(cachekit_l1 *l1) CACHEKIT_NOEXCEPT;

/* Copy the value stored under `key` into `out`. CACHEKIT_OK on a hit,
 * CACHEKIT_ENOTFOUND (no message) when the key is absent, expired or
 * invalidated; `out` is left untouched on a miss. CACHEKIT_EINVAL for a NULL
 * cache or buffer, or a key that is NULL, empty or longer than
 * CACHEKIT_L1_MAX_KEY_SIZE. Since 0.1. */
CACHEKIT_API int cachekit_l1_get(cachekit_l1 *l1, cachekit_buf *out, const void *key,
                                 size_t key_len) CACHEKIT_NOEXCEPT;

/* Store a copy of `value` under `key` in namespace `ns` (NULL with ns_len 0,
 * or an empty namespace, is the default namespace), replacing any older
 * value. ttl_seconds is the time to live; CACHEKIT_L1_TTL_NONE (0) means it
 * never expires. Errors: CACHEKIT_EINVAL (bad pointers, empty or too long
 * key or namespace, ttl_seconds negative, NaN, infinite or above
 * CACHEKIT_L1_MAX_TTL_SECONDS), CACHEKIT_ETOOBIG when the entry would be
 * charged more than 1/8 of the budget (it is not stored and any older value
 * under the key is removed), CACHEKIT_ENOMEM. Since 0.1. */
CACHEKIT_API int cachekit_l1_put(cachekit_l1 *l1, const void *ns, size_t ns_len, const void *key,
                                 size_t key_len, const void *value, size_t value_len,
                                 double ttl_seconds) CACHEKIT_NOEXCEPT;

/* Take a fill ticket before computing a value that will be stored with
 * cachekit_l1_put_filled. Writes it to *ticket. Since 0.1. */
CACHEKIT_API int cachekit_l1_begin_fill(cachekit_l1 *l1, uint64_t *ticket) CACHEKIT_NOEXCEPT;

/* As cachekit_l1_put, but the value is dropped (not stored, *stored = 0) when
 * the key, its namespace or the whole cache was invalidated after `ticket`
 * was taken, so an invalidation is never undone by a slow fill. *stored (when
 * `stored` is not NULL) is 1 when the value was stored. A dropped fill still
 * returns CACHEKIT_OK. (Rarely, an invalidation of another key that shares a
 * tombstone slot also drops the fill; it never lets a stale one through.)
 * Since 0.1. */
CACHEKIT_API int cachekit_l1_put_filled(cachekit_l1 *l1, const void *ns, size_t ns_len,
                                        const void *key, size_t key_len, const void *value,
                                        size_t value_len, double ttl_seconds, uint64_t ticket,
                                        int *stored) CACHEKIT_NOEXCEPT;

/* Remove the value under `key`, if any (CACHEKIT_OK either way). Since 0.1. */
CACHEKIT_API int cachekit_l1_invalidate(cachekit_l1 *l1, const void *key,
                                        size_t key_len) CACHEKIT_NOEXCEPT;

/* Invalidate every entry of namespace `ns` in O(1): they stop being visible
 * at once and their memory is reclaimed by reads, eviction and the sweep.
 * An empty namespace is the default namespace. Since 0.1. */
CACHEKIT_API int cachekit_l1_invalidate_namespace(cachekit_l1 *l1, const void *ns,
                                                  size_t ns_len) CACHEKIT_NOEXCEPT;

/* Remove every entry. Since 0.1. */
CACHEKIT_API int cachekit_l1_clear(cachekit_l1 *l1) CACHEKIT_NOEXCEPT;

/* Counters of a cache. The caller sets struct_size to
 * sizeof(cachekit_l1_counters); the library fills only the fields that fit.
 * Since 0.1. */
typedef struct cachekit_l1_counters {
    size_t struct_size;
    uint64_t hits;
    uint64_t misses;
    uint64_t inserts;
    uint64_t evictions;          /* live entries removed to make room (LRU) */
    uint64_t expirations;        /* expired entries removed */
    uint64_t rejected_too_large; /* puts charged more than max_bytes / 8 */
    uint64_t invalidations;      /* entries removed by invalidation or clear */
    uint64_t dropped_fills;      /* cachekit_l1_put_filled calls dropped */
    uint64_t entries;            /* entries held now */
    uint64_t bytes;              /* bytes charged now (never above max_bytes) */
    uint64_t max_bytes;          /* the budget */
    /* CACHEKIT_L1_ADMISSION_TINYLFU only (0 otherwise). Since 0.2, appended. */
    uint64_t admitted;              /* window entries admitted over a main-region victim */
    uint64_t rejected_by_admission; /* window entries evicted by the contest (also in evictions) */
} cachekit_l1_counters;

/* Fill `out` with the cache's counters. They are exact: every call is counted
 * once. CACHEKIT_EINVAL when out is NULL or out->struct_size is smaller than
 * a size_t. Since 0.1. */
CACHEKIT_API int cachekit_l1_stats(cachekit_l1 *l1, cachekit_l1_counters *out) CACHEKIT_NOEXCEPT;

/* ======================================================================
 * The `_ex` forms: the same calls with their outcome in a cachekit_error
 *
 * Each `name_ex(..., cachekit_error *err)` is `name(...)` plus the per-call
 * error described at cachekit_error: same status, same effects, same
 * thread-local last error; err (the last parameter) may be NULL. A function
 * added later that returns a status gets its `_ex` form in the same release.
 * Since 0.2.
 * ====================================================================== */

/* Buffers */
CACHEKIT_API int cachekit_buf_reserve_ex(cachekit_buf *buf, size_t capacity,
                                         cachekit_error *err) CACHEKIT_NOEXCEPT;

/* MessagePack and keys */
CACHEKIT_API int cachekit_msgpack_check_ex(const void *data, size_t len, uint32_t max_depth,
                                           cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_msgpack_canonical_ex(cachekit_buf *out, const void *data, size_t len,
                                               int profile, cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_msgpack_to_json_ex(cachekit_buf *out, const void *data, size_t len,
                                             cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_serializer_code_ex(cachekit_buf *out, const char *identity,
                                             cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_key_auto_ex(cachekit_buf *out, const char *ns, const char *module,
                                      const char *qualname, const void *args, size_t args_len,
                                      int integrity, const char *serializer,
                                      cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_key_custom_ex(cachekit_buf *out, const char *ns, const char *module,
                                        const char *qualname, const void *key, size_t key_len,
                                        cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_key_interop_ex(cachekit_buf *out, cachekit_buf *canonical, const char *ns,
                                         const char *operation, const void *args, size_t args_len,
                                         cachekit_error *err) CACHEKIT_NOEXCEPT;

/* Containers */
CACHEKIT_API int cachekit_envelope_wrap_ex(cachekit_buf *out, const void *data, size_t len,
                                           const char *format, cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_envelope_unwrap_ex(cachekit_buf *out, cachekit_buf *format,
                                             const void *envelope, size_t len,
                                             cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_frame_encode_ex(cachekit_buf *out, const char *serializer,
                                          const char *metadata_json, const void *payload,
                                          size_t payload_len, cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_frame_decode_ex(cachekit_buf *serializer, cachekit_buf *metadata_json,
                                          size_t *payload_offset, const void *frame, size_t len,
                                          cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_container_v2_wrap_ex(cachekit_buf *out, const void *value, size_t len,
                                               int method, cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_container_v2_unwrap_ex(cachekit_buf *out, const void *container, size_t len,
                                                 cachekit_error *err) CACHEKIT_NOEXCEPT;

/* Encryption */
CACHEKIT_API int cachekit_master_key_from_hex_ex(unsigned char out[CACHEKIT_KEY_SIZE], const char *hex,
                                                 size_t len, cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_crypto_derive_ex(cachekit_derived_keys *out, const void *master_key,
                                           size_t master_key_len, const char *tenant,
                                           cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_crypto_aad_ex(cachekit_buf *out, const char *tenant, const char *cache_key,
                                        const char *format, int compressed, const char *original_type,
                                        cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_crypto_encrypt_ex(cachekit_buf *out,
                                            const unsigned char key[CACHEKIT_KEY_SIZE], const void *aad,
                                            size_t aad_len, const void *plaintext, size_t plaintext_len,
                                            const unsigned char *nonce,
                                            cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_crypto_decrypt_ex(cachekit_buf *out,
                                            const unsigned char key[CACHEKIT_KEY_SIZE], const void *aad,
                                            size_t aad_len, const void *ciphertext,
                                            size_t ciphertext_len,
                                            cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_keyring_new_ex(cachekit_keyring **out, const char *current_hex,
                                         const char *previous_hex,
                                         cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_keyring_new_raw_ex(cachekit_keyring **out, const void *current,
                                             size_t current_len, const void *previous,
                                             size_t previous_count,
                                             cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_keyring_fingerprint_ex(const cachekit_keyring *keyring,
                                                 unsigned char out[CACHEKIT_FINGERPRINT_SIZE],
                                                 const char *tenant,
                                                 cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_keyring_encrypt_ex(const cachekit_keyring *keyring, cachekit_buf *out,
                                             const char *tenant, const void *aad, size_t aad_len,
                                             const void *plaintext, size_t plaintext_len,
                                             cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_keyring_decrypt_ex(const cachekit_keyring *keyring, cachekit_buf *out,
                                             int *key_index, const char *tenant,
                                             const unsigned char *fingerprint, const void *aad,
                                             size_t aad_len, const void *ciphertext,
                                             size_t ciphertext_len,
                                             cachekit_error *err) CACHEKIT_NOEXCEPT;

/* Inspection */
CACHEKIT_API int cachekit_inspect_ex(cachekit_buf *out_json, const void *data, size_t len,
                                     const cachekit_keyring *keyring, const char *tenant,
                                     const char *cache_key, cachekit_error *err) CACHEKIT_NOEXCEPT;

/* L2 backends */
CACHEKIT_API int cachekit_backend_options_init_ex(cachekit_backend_options *opts, size_t struct_size,
                                                  cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_backend_open_ex(cachekit_backend **out, const char *url,
                                          const cachekit_backend_options *opts,
                                          cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_backend_get_ex(cachekit_backend *backend, cachekit_buf *out, const void *key,
                                         size_t key_len, cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_backend_set_ex(cachekit_backend *backend, const void *key, size_t key_len,
                                         const void *value, size_t value_len, double ttl_seconds,
                                         cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_backend_delete_ex(cachekit_backend *backend, const void *key, size_t key_len,
                                            cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_backend_exists_ex(cachekit_backend *backend, const void *key, size_t key_len,
                                            cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_backend_ttl_ex(cachekit_backend *backend, double *ttl_seconds,
                                         const void *key, size_t key_len,
                                         cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_backend_get_many_ex(cachekit_backend *backend, cachekit_buf *outs,
                                              int *results, const void *const *keys,
                                              const size_t *key_lens, size_t count,
                                              cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_backend_set_many_ex(cachekit_backend *backend, const void *const *keys,
                                              const size_t *key_lens, const void *const *values,
                                              const size_t *value_lens, size_t count,
                                              double ttl_seconds,
                                              cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_backend_get_many_packed_ex(cachekit_backend *backend,
                                                     cachekit_buf *values_out, size_t *value_offsets,
                                                     int *results, const void *keys,
                                                     const size_t *key_offsets, size_t count,
                                                     cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_backend_set_many_packed_ex(cachekit_backend *backend, const void *keys,
                                                     const size_t *key_offsets, const void *values,
                                                     const size_t *value_offsets, size_t count,
                                                     double ttl_seconds,
                                                     cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_backend_clear_ex(cachekit_backend *backend, uint64_t *deleted,
                                           const void *prefix, size_t prefix_len,
                                           cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_backend_lock_ex(cachekit_backend *backend, cachekit_buf *token,
                                          const void *key, size_t key_len, uint32_t hold_ms,
                                          cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_backend_unlock_ex(cachekit_backend *backend, const void *key, size_t key_len,
                                            const void *token, size_t token_len,
                                            cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_backend_incr_ex(cachekit_backend *backend, int64_t *value, const void *key,
                                          size_t key_len, int64_t delta,
                                          cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_backend_add_ex(cachekit_backend *backend, int *added, const void *key,
                                         size_t key_len, const void *value, size_t value_len,
                                         double ttl_seconds, cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_backend_touch_ex(cachekit_backend *backend, const void *key, size_t key_len,
                                           double ttl_seconds, cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_backend_delete_many_ex(cachekit_backend *backend, uint64_t *deleted,
                                                 const void *const *keys, const size_t *key_lens,
                                                 size_t count, cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_backend_delete_many_packed_ex(cachekit_backend *backend, uint64_t *deleted,
                                                        const void *keys, const size_t *key_offsets,
                                                        size_t count, cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_backend_health_ex(cachekit_backend *backend, double *latency_ms,
                                            cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_backend_stats_get_ex(cachekit_backend *backend, cachekit_backend_stats *out,
                                               cachekit_error *err) CACHEKIT_NOEXCEPT;

/* The cache handle */
CACHEKIT_API int cachekit_cache_options_init_ex(cachekit_cache_options *opts, size_t struct_size,
                                                cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_cache_new_ex(cachekit_cache **out, const cachekit_cache_options *opts,
                                       cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_cache_get_ex(cachekit_cache *cache, cachekit_buf *out, cachekit_lookup *info,
                                       const char *ns, const void *key, size_t key_len,
                                       cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_cache_peek_ex(cachekit_cache *cache, cachekit_buf *out, cachekit_lookup *info,
                                        const char *ns, const void *key, size_t key_len,
                                        cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_cache_put_ex(cachekit_cache *cache, const char *ns, const void *key,
                                       size_t key_len, const void *value, size_t value_len,
                                       double ttl_seconds, cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_load_set_value_ex(cachekit_load *load, const void *value, size_t value_len,
                                            cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_load_set_ttl_ex(cachekit_load *load, double ttl_seconds,
                                          cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_load_set_error_ex(cachekit_load *load, const char *message,
                                            cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_cache_get_or_load_ex(cachekit_cache *cache, cachekit_buf *out,
                                               cachekit_lookup *info, const char *ns, const void *key,
                                               size_t key_len, double ttl_seconds,
                                               cachekit_loader loader, void *payload,
                                               cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_cache_put_refresh_ex(cachekit_cache *cache, const char *ns, const void *key,
                                               size_t key_len, const void *value, size_t value_len,
                                               double ttl_seconds, uint64_t refresh_claim,
                                               cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_cache_abandon_refresh_ex(cachekit_cache *cache, const void *key,
                                                   size_t key_len, uint64_t refresh_claim,
                                                   cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_cache_get_for_load_ex(cachekit_cache *cache, cachekit_buf *out,
                                                cachekit_lookup *info, const char *ns, const void *key,
                                                size_t key_len, cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_cache_invalidate_ex(cachekit_cache *cache, const char *ns, const void *key,
                                              size_t key_len, cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_cache_invalidate_namespace_ex(cachekit_cache *cache, const char *ns,
                                                        cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_cache_clear_ex(cachekit_cache *cache, cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_cache_track_function_ex(cachekit_cache *cache, const char *ns, const char *function,
                                                  const void *key_head, size_t key_head_len, int *kept,
                                                  cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_cache_invalidate_function_ex(cachekit_cache *cache, const char *ns, const char *function,
                                                       uint64_t *deleted, cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_cache_stats_get_ex(cachekit_cache *cache, cachekit_cache_stats *out,
                                             const char *ns, cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_cache_metrics_text_ex(cachekit_cache *cache, cachekit_buf *out,
                                                cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_cache_claims_held_ex(cachekit_cache *cache, uint64_t *out,
                                               cachekit_error *err) CACHEKIT_NOEXCEPT;

/* L1 */
CACHEKIT_API int cachekit_l1_options_init_ex(cachekit_l1_options *opts, size_t struct_size,
                                             cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_l1_new_ex(cachekit_l1 **out, const cachekit_l1_options *opts,
                                    cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_l1_get_ex(cachekit_l1 *l1, cachekit_buf *out, const void *key, size_t key_len,
                                    cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_l1_put_ex(cachekit_l1 *l1, const void *ns, size_t ns_len, const void *key,
                                    size_t key_len, const void *value, size_t value_len,
                                    double ttl_seconds, cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_l1_begin_fill_ex(cachekit_l1 *l1, uint64_t *ticket,
                                           cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_l1_put_filled_ex(cachekit_l1 *l1, const void *ns, size_t ns_len,
                                           const void *key, size_t key_len, const void *value,
                                           size_t value_len, double ttl_seconds, uint64_t ticket,
                                           int *stored, cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_l1_invalidate_ex(cachekit_l1 *l1, const void *key, size_t key_len,
                                           cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_l1_invalidate_namespace_ex(cachekit_l1 *l1, const void *ns, size_t ns_len,
                                                     cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_l1_clear_ex(cachekit_l1 *l1, cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_l1_stats_ex(cachekit_l1 *l1, cachekit_l1_counters *out,
                                      cachekit_error *err) CACHEKIT_NOEXCEPT;

/* ======================================================================
 * Seeing failures: the log handler and the backend's health
 *
 * Reads fail open, so a backend that is down looks like a cache that always
 * misses. The library reports the transitions it sees to one process-wide
 * handler, on the thread that noticed them (a caller's, or a coherence feed's
 * own thread), with no library lock held (the handler may call the library):
 *   "backend_down"        WARNING  the first failed call after a success (or
 *                                  the first call ever): connect refused, AUTH
 *                                  refused, a timeout, the connection lost...
 *   "breaker_open"        WARNING  the circuit breaker opened
 *   "backend_recovered"   INFO     the first successful call after a failure
 *   "coherence_suspended" WARNING  the L1 coherence feed was lost (L1 shut)
 *   "coherence_resumed"   INFO     it is subscribed again (L1 back in use)
 * The message names the backend by its URL without the password and without
 * the query, then the cause: "redis://127.0.0.1:6390: connect failed:
 * Connection refused". On a Redis Cluster each node logs its own transitions,
 * "redis-cluster://...: node 127.0.0.1:7002: <cause>", and the cluster's
 * health is DOWN while any node of its slot map is. Each backend, each
 * cluster node (and each cache's coherence feed) logs at
 * most one line per event kind per 60 s; what it holds back is counted and
 * told in its next line of that kind. No handler (the default) = silent:
 * the library never writes to stderr. The strings are valid only during the
 * call. Since 0.2.
 * ====================================================================== */

#define CACHEKIT_LOG_INFO 20    /* the numbers of Python's logging levels */
#define CACHEKIT_LOG_WARNING 30

typedef void (*cachekit_log_handler)(int level, const char *event, const char *message, void *user_data);

/* Install `fn` (NULL: none) for every later event, process-wide; user_data
 * is passed back as is. A handler must return (no longjmp, exception or
 * foreign unwind), should be quick, and stays installed in a forked child.
 * Registering is cheap but leaks a few bytes per call: register once.
 * Since 0.2. */
CACHEKIT_API void cachekit_set_log_handler(cachekit_log_handler fn, void *user_data) CACHEKIT_NOEXCEPT;

/* Health states of cachekit_health.state. */
#define CACHEKIT_HEALTH_OK 0           /* the last call that reached the backend succeeded (or none yet) */
#define CACHEKIT_HEALTH_DOWN 1         /* the last call that reached it failed */
#define CACHEKIT_HEALTH_BREAKER_OPEN 2 /* down, and the breaker fails calls fast (open or half-open) */

/* L1 coherence states of cachekit_health.coherence. */
#define CACHEKIT_COHERENCE_OFF 0       /* no coherence feed (not Redis, l1_coherence=off, no L1) */
#define CACHEKIT_COHERENCE_LIVE 1      /* subscribed: the L1 is in use */
#define CACHEKIT_COHERENCE_SUSPENDED 2 /* lost: the L1 is flushed and bypassed */

#define CACHEKIT_HEALTH_BACKEND_SIZE 256

/* What a backend's calls have seen so far; no round trip is made to fill it
 * (cachekit_backend_health pings). No pointer, fixed size. struct_size first;
 * only the fields that fit are written. Since 0.2. */
typedef struct cachekit_health {
    size_t struct_size;
    int state;                     /* CACHEKIT_HEALTH_* */
    int coherence;                 /* CACHEKIT_COHERENCE_* (a cache's; OFF for a backend alone) */
    uint64_t consecutive_failures; /* failed calls since the last success */
    double since;                  /* Unix time (s) the backend went down or came back; 0: never changed */
    double last_error_at;          /* Unix time (s) of the last failure; 0: none */
    char backend[CACHEKIT_HEALTH_BACKEND_SIZE];  /* the URL without password or query ("" without L2) */
    char last_error[CACHEKIT_ERROR_MESSAGE_SIZE]; /* the last failure's cause ("" when none) */
} cachekit_health;

#define CACHEKIT_HEALTH_INIT {sizeof(cachekit_health), 0, 0, 0, 0.0, 0.0, "", ""}

/* A backend handle's health. Since 0.2. */
CACHEKIT_API int cachekit_backend_health_get(cachekit_backend *backend, cachekit_health *out) CACHEKIT_NOEXCEPT;

/* A cache's L2 health and its coherence state; a cache without L2 reports
 * CACHEKIT_HEALTH_OK with backend "". Since 0.2. */
CACHEKIT_API int cachekit_cache_health_get(cachekit_cache *cache, cachekit_health *out) CACHEKIT_NOEXCEPT;

CACHEKIT_API int cachekit_backend_health_get_ex(cachekit_backend *backend, cachekit_health *out,
                                                cachekit_error *err) CACHEKIT_NOEXCEPT;
CACHEKIT_API int cachekit_cache_health_get_ex(cachekit_cache *cache, cachekit_health *out,
                                              cachekit_error *err) CACHEKIT_NOEXCEPT;

#ifdef __cplusplus
}
#endif

#endif /* CACHEKIT_H */
