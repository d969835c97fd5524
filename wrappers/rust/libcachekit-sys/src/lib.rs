//! Raw bindings of libcachekit's C API, `include/cachekit/cachekit.h` (0.2).
//!
//! Written by hand from the header and kept in this file (no bindgen at build
//! time, so no libclang is needed). `tests/layout.rs` compares every struct's
//! size and field offsets with what a C compiler reports for the real header,
//! and `tests/functions.rs` links every function, so a header change that this
//! file misses fails the tests. Everything here is `unsafe` to call; the safe
//! API is the `libcachekit` crate.
#![no_std]
#![allow(non_camel_case_types)]

use core::ffi::{c_char, c_int, c_uint, c_void};

// ---- Status codes (pinned; cachekit_status) ----
pub type cachekit_status = c_int;
pub const CACHEKIT_OK: c_int = 0;
pub const CACHEKIT_ENOTFOUND: c_int = -1;
pub const CACHEKIT_EINVAL: c_int = -2;
pub const CACHEKIT_ENOMEM: c_int = -3;
pub const CACHEKIT_ECORRUPT: c_int = -4;
pub const CACHEKIT_ETOOBIG: c_int = -5;
pub const CACHEKIT_EBACKEND: c_int = -6;
pub const CACHEKIT_ETIMEOUT: c_int = -7;
pub const CACHEKIT_EUSER: c_int = -8;
pub const CACHEKIT_EDESERIALIZE: c_int = -9;
pub const CACHEKIT_EBOMB: c_int = -10;
pub const CACHEKIT_EDECOMPRESS: c_int = -11;
pub const CACHEKIT_ECHECKSUM: c_int = -12;
pub const CACHEKIT_ESIZE: c_int = -13;
pub const CACHEKIT_EDEPTH: c_int = -14;
pub const CACHEKIT_EOVERCLAIM: c_int = -15;
pub const CACHEKIT_ETRUNCATED: c_int = -16;
pub const CACHEKIT_ETRAILING: c_int = -17;
pub const CACHEKIT_EUNSUPPORTED: c_int = -18;
pub const CACHEKIT_ESEGMENT: c_int = -19;
pub const CACHEKIT_EKEY: c_int = -20;
pub const CACHEKIT_ECIPHERTEXT: c_int = -21;
pub const CACHEKIT_EAUTH: c_int = -22;
pub const CACHEKIT_EKEYNOTFOUND: c_int = -23;
pub const CACHEKIT_EFRAME: c_int = -24;
pub const CACHEKIT_ECRYPTO_UNAVAILABLE: c_int = -25;
pub const CACHEKIT_ENONCE: c_int = -26;
pub const CACHEKIT_EINTERNAL: c_int = -27;
pub const CACHEKIT_EBUSY: c_int = -28;
pub const CACHEKIT_EDEADLOCK: c_int = -29;
pub const CACHEKIT_ECIRCUIT_OPEN: c_int = -30;

// ---- Constants (#define) ----
pub const CACHEKIT_ERROR_NAME_SIZE: usize = 32;
pub const CACHEKIT_ERROR_MESSAGE_SIZE: usize = 1024;
pub const CACHEKIT_MSGPACK_MIN_DEPTH: u32 = 32;
pub const CACHEKIT_MSGPACK_MAX_DEPTH: u32 = 1024;
pub const CACHEKIT_PROFILE_ARGS: c_int = 1;
pub const CACHEKIT_PROFILE_VALUE: c_int = 2;
pub const CACHEKIT_PROFILE_AUTO_ARGS: c_int = 3;
pub const CACHEKIT_MSGPACK_EXT_TIMESTAMP: i8 = -1;
pub const CACHEKIT_MSGPACK_EXT_SET: i8 = 83;
pub const CACHEKIT_ENVELOPE_MAX_SIZE: u32 = 536870912;
pub const CACHEKIT_MAX_COMPRESSION_RATIO: u32 = 1000;
pub const CACHEKIT_V2_METHOD_NONE: c_int = 0;
pub const CACHEKIT_V2_METHOD_LZ4: c_int = 1;
pub const CACHEKIT_KEY_SIZE: usize = 32;
pub const CACHEKIT_FINGERPRINT_SIZE: usize = 16;
pub const CACHEKIT_NONCE_SIZE: usize = 12;
pub const CACHEKIT_TAG_SIZE: usize = 16;
pub const CACHEKIT_MAX_PREVIOUS_KEYS: usize = 3;
pub const CACHEKIT_BREAKER_CLOSED: c_int = 0;
pub const CACHEKIT_BREAKER_OPEN: c_int = 1;
pub const CACHEKIT_BREAKER_HALF_OPEN: c_int = 2;
pub const CACHEKIT_TLS_CERT_REQUIRED: c_int = 0;
pub const CACHEKIT_TLS_CERT_OPTIONAL: c_int = 1;
pub const CACHEKIT_TLS_CERT_NONE: c_int = 2;
pub const CACHEKIT_TLS_CHECK_HOSTNAME_YES: c_int = 1;
pub const CACHEKIT_TLS_CHECK_HOSTNAME_NO: c_int = -1;
pub const CACHEKIT_MAX_NAMESPACE_SIZE: u32 = 1024;
pub const CACHEKIT_DEFAULT: c_int = 0;
pub const CACHEKIT_ON: c_int = 1;
pub const CACHEKIT_OFF: c_int = -1;
pub const CACHEKIT_FORMAT_AUTO: c_int = 0;
pub const CACHEKIT_FORMAT_INTEROP: c_int = 1;
pub const CACHEKIT_FORMAT_AUTO_PYTHON: c_int = 2;
pub const CACHEKIT_FORMAT_PLAIN: c_int = 3;
pub const CACHEKIT_TTL_DEFAULT: f64 = -1.0;
pub const CACHEKIT_SOURCE_NONE: c_int = 0;
pub const CACHEKIT_SOURCE_L1: c_int = 1;
pub const CACHEKIT_SOURCE_L2: c_int = 2;
pub const CACHEKIT_SOURCE_LOADED: c_int = 3;
pub const CACHEKIT_SOURCE_WAITED: c_int = 4;
pub const CACHEKIT_L1_DEFAULT_MAX_BYTES: u32 = 104857600;
pub const CACHEKIT_L1_MIN_MAX_BYTES: u32 = 1048576;
pub const CACHEKIT_L1_MAX_KEY_SIZE: u32 = 65536;
pub const CACHEKIT_L1_MAX_NAMESPACE_SIZE: u32 = 65536;
pub const CACHEKIT_L1_MAX_SHARDS: u32 = 1024;
pub const CACHEKIT_L1_DEFAULT_SWEEP_INTERVAL_MS: u32 = 30000;
pub const CACHEKIT_L1_DEFAULT_PROMOTE_INTERVAL_US: u32 = 1000;
pub const CACHEKIT_L1_MAX_TTL_SECONDS: f64 = 3153600000.0;
pub const CACHEKIT_L1_TTL_NONE: f64 = 0.0;
pub const CACHEKIT_L1_FLAG_PRECISE_CLOCK: u32 = 1;
pub const CACHEKIT_L1_ADMISSION_LRU: c_int = 0;
pub const CACHEKIT_L1_ADMISSION_TINYLFU: c_int = 1;

// ---- Opaque handles ----
macro_rules! opaque {
    ($($name:ident),*) => {$(
        #[repr(C)]
        pub struct $name {
            _private: [u8; 0],
            // Not Send/Sync/Unpin by itself: the safe crate decides.
            _marker: core::marker::PhantomData<(*mut u8, core::marker::PhantomPinned)>,
        }
    )*};
}
opaque!(
    cachekit_keyring,
    cachekit_backend,
    cachekit_cache,
    cachekit_load,
    cachekit_l1
);

// ---- Structs (checked by tests/layout.rs) ----
#[repr(C)]
#[derive(Clone, Copy)]
pub struct cachekit_error {
    pub struct_size: usize,
    pub code: c_int,
    pub name: [c_char; CACHEKIT_ERROR_NAME_SIZE],
    pub message: [c_char; CACHEKIT_ERROR_MESSAGE_SIZE],
}

impl cachekit_error {
    /// CACHEKIT_ERROR_INIT.
    pub const INIT: cachekit_error = cachekit_error {
        struct_size: core::mem::size_of::<cachekit_error>(),
        code: 0,
        name: [0; CACHEKIT_ERROR_NAME_SIZE],
        message: [0; CACHEKIT_ERROR_MESSAGE_SIZE],
    };
}

#[repr(C)]
#[derive(Debug)]
pub struct cachekit_buf {
    pub ptr: *mut c_char,
    pub size: usize,
    pub capacity: usize,
}

impl cachekit_buf {
    /// CACHEKIT_BUF_INIT.
    pub const INIT: cachekit_buf = cachekit_buf {
        ptr: core::ptr::null_mut(),
        size: 0,
        capacity: 0,
    };
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct cachekit_derived_keys {
    pub encryption: [u8; CACHEKIT_KEY_SIZE],
    pub authentication: [u8; CACHEKIT_KEY_SIZE],
    pub cache_keys: [u8; CACHEKIT_KEY_SIZE],
    pub fingerprint: [u8; CACHEKIT_FINGERPRINT_SIZE],
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct cachekit_backend_options {
    pub struct_size: usize,
    pub pool_size: u32,
    pub connect_timeout_ms: u32,
    pub command_timeout_ms: u32,
    pub breaker_failures: u32,
    pub breaker_recovery_ms: u32,
    pub breaker_half_open_calls: u32,
    pub breaker_successes: u32,
    pub breaker_disabled: c_int,
    pub fail_closed: c_int,
    pub max_concurrency: u32,
    pub backpressure_wait_ms: u32,
    pub file_max_bytes: u64,
    pub file_max_entries: u64,
    pub file_max_value_bytes: u64,
    pub max_reply_bytes: u64,
    pub tls: c_int,
    pub tls_cert_reqs: c_int,
    pub tls_check_hostname: c_int,
    pub tls_ca_certs: *const c_char,
    pub tls_ca_path: *const c_char,
    pub tls_certfile: *const c_char,
    pub tls_keyfile: *const c_char,
}

// By hand: raw pointers have no Default. All zero and NULL, as
// CACHEKIT_BACKEND_OPTIONS_INIT but struct_size (set it, or call
// cachekit_backend_options_init).
impl Default for cachekit_backend_options {
    fn default() -> Self {
        cachekit_backend_options {
            struct_size: 0,
            pool_size: 0,
            connect_timeout_ms: 0,
            command_timeout_ms: 0,
            breaker_failures: 0,
            breaker_recovery_ms: 0,
            breaker_half_open_calls: 0,
            breaker_successes: 0,
            breaker_disabled: 0,
            fail_closed: 0,
            max_concurrency: 0,
            backpressure_wait_ms: 0,
            file_max_bytes: 0,
            file_max_entries: 0,
            file_max_value_bytes: 0,
            max_reply_bytes: 0,
            tls: 0,
            tls_cert_reqs: 0,
            tls_check_hostname: 0,
            tls_ca_certs: core::ptr::null(),
            tls_ca_path: core::ptr::null(),
            tls_certfile: core::ptr::null(),
            tls_keyfile: core::ptr::null(),
        }
    }
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct cachekit_backend_stats {
    pub struct_size: usize,
    pub breaker_state: c_int,
    pub calls: u64,
    pub failures: u64,
    pub timeouts: u64,
    pub rejected_open: u64,
    pub rejected_busy: u64,
    pub degraded_reads: u64,
    pub skipped_writes: u64,
    pub breaker_opened: u64,
    pub latency_ms_sum: f64,
    pub latency_count: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct cachekit_cache_options {
    pub struct_size: usize,
    pub backend_url: *const c_char,
    pub backend: *mut cachekit_backend,
    pub format: c_int,
    pub integrity: c_int,
    pub encryption: c_int,
    pub master_key_hex: *const c_char,
    pub previous_keys_hex: *const c_char,
    pub tenant: *const c_char,
    pub key_prefix: *const c_char,
    pub default_ttl_seconds: f64,
    pub l1: c_int,
    pub l1_max_bytes: u64,
    pub l1_sweep_interval_ms: u32,
    pub swr: c_int,
    pub swr_threshold_ratio: f64,
    pub fail_closed: c_int,
    pub max_value_bytes: u64,
    pub load_timeout_ms: u32,
    pub cross_process_lock: c_int,
    pub lock_hold_ms: u32,
    pub lock_wait_ms: u32,
    pub backend_options: *const cachekit_backend_options,
    pub refresh_ttl_on_get: f64,
    pub l1_admission: c_int,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct cachekit_lookup {
    pub struct_size: usize,
    pub source: c_int,
    pub refresh: c_int,
    pub refresh_claim: u64,
    pub age_seconds: f64,
    pub temporal_keys: c_int,
}

impl cachekit_lookup {
    /// CACHEKIT_LOOKUP_INIT.
    pub const INIT: cachekit_lookup = cachekit_lookup {
        struct_size: core::mem::size_of::<cachekit_lookup>(),
        source: 0,
        refresh: 0,
        refresh_claim: 0,
        age_seconds: -1.0,
        temporal_keys: -1,
    };
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct cachekit_cache_stats {
    pub struct_size: usize,
    pub l1_hits: u64,
    pub l2_hits: u64,
    pub misses: u64,
    pub stores: u64,
    pub loads: u64,
    pub load_errors: u64,
    pub waits: u64,
    pub stale_served: u64,
    pub refreshes: u64,
    pub dropped_fills: u64,
    pub too_large: u64,
    pub invalidations: u64,
    pub backend_errors: u64,
    pub timeouts: u64,
    pub corrupt: u64,
    pub tampered: u64,
    pub wrong_key: u64,
    pub downgrade: u64,
    pub serializer_mismatch: u64,
    pub l2_latency_count: u64,
    pub l2_latency_sum_ms: f64,
    pub l1_entries: u64,
    pub l1_bytes: u64,
    pub l1_evictions: u64,
    pub l1_expirations: u64,
    pub breaker_state: c_int,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct cachekit_l1_options {
    pub struct_size: usize,
    pub max_bytes: u64,
    pub shards: u32,
    pub sweep_interval_ms: u32,
    pub promote_interval_us: u32,
    pub flags: u32,
    pub admission: c_int,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct cachekit_l1_counters {
    pub struct_size: usize,
    pub hits: u64,
    pub misses: u64,
    pub inserts: u64,
    pub evictions: u64,
    pub expirations: u64,
    pub rejected_too_large: u64,
    pub invalidations: u64,
    pub dropped_fills: u64,
    pub entries: u64,
    pub bytes: u64,
    pub max_bytes: u64,
    pub admitted: u64,
    pub rejected_by_admission: u64,
}

/// A loader callback: must return (never unwind); see "Loaders" in the header.
pub type cachekit_loader = Option<unsafe extern "C" fn(load: *mut cachekit_load, payload: *mut c_void) -> c_int>;

extern "C" {
    pub fn cachekit_error_name(code: c_int) -> *const c_char;
    pub fn cachekit_error_last_code() -> c_int;
    pub fn cachekit_error_last_message() -> *const c_char;
    pub fn cachekit_error_clear();
    pub fn cachekit_version_string() -> *const c_char;
    pub fn cachekit_version_number() -> c_uint;
    pub fn cachekit_buf_dispose(buf: *mut cachekit_buf);
    pub fn cachekit_buf_reserve(buf: *mut cachekit_buf, capacity: usize) -> c_int;
    pub fn cachekit_free(ptr: *mut c_void);
    pub fn cachekit_msgpack_check(data: *const c_void, len: usize, max_depth: u32) -> c_int;
    pub fn cachekit_msgpack_canonical(out: *mut cachekit_buf, data: *const c_void, len: usize, profile: c_int)
        -> c_int;
    pub fn cachekit_msgpack_to_json(out: *mut cachekit_buf, data: *const c_void, len: usize) -> c_int;
    pub fn cachekit_serializer_code(out: *mut cachekit_buf, identity: *const c_char) -> c_int;
    pub fn cachekit_key_auto(
        out: *mut cachekit_buf,
        ns: *const c_char,
        module: *const c_char,
        qualname: *const c_char,
        args: *const c_void,
        args_len: usize,
        integrity: c_int,
        serializer: *const c_char,
    ) -> c_int;
    pub fn cachekit_key_custom(
        out: *mut cachekit_buf,
        ns: *const c_char,
        module: *const c_char,
        qualname: *const c_char,
        key: *const c_void,
        key_len: usize,
    ) -> c_int;
    pub fn cachekit_key_interop(
        out: *mut cachekit_buf,
        canonical: *mut cachekit_buf,
        ns: *const c_char,
        operation: *const c_char,
        args: *const c_void,
        args_len: usize,
    ) -> c_int;
    pub fn cachekit_envelope_wrap(
        out: *mut cachekit_buf,
        data: *const c_void,
        len: usize,
        format: *const c_char,
    ) -> c_int;
    pub fn cachekit_envelope_unwrap(
        out: *mut cachekit_buf,
        format: *mut cachekit_buf,
        envelope: *const c_void,
        len: usize,
    ) -> c_int;
    pub fn cachekit_frame_encode(
        out: *mut cachekit_buf,
        serializer: *const c_char,
        metadata_json: *const c_char,
        payload: *const c_void,
        payload_len: usize,
    ) -> c_int;
    pub fn cachekit_frame_decode(
        serializer: *mut cachekit_buf,
        metadata_json: *mut cachekit_buf,
        payload_offset: *mut usize,
        frame: *const c_void,
        len: usize,
    ) -> c_int;
    pub fn cachekit_container_v2_wrap(out: *mut cachekit_buf, value: *const c_void, len: usize, method: c_int)
        -> c_int;
    pub fn cachekit_container_v2_unwrap(out: *mut cachekit_buf, container: *const c_void, len: usize) -> c_int;
    pub fn cachekit_crypto_available() -> c_int;
    pub fn cachekit_master_key_from_hex(out: *mut u8, hex: *const c_char, len: usize) -> c_int;
    pub fn cachekit_crypto_derive(
        out: *mut cachekit_derived_keys,
        master_key: *const c_void,
        master_key_len: usize,
        tenant: *const c_char,
    ) -> c_int;
    pub fn cachekit_crypto_aad(
        out: *mut cachekit_buf,
        tenant: *const c_char,
        cache_key: *const c_char,
        format: *const c_char,
        compressed: c_int,
        original_type: *const c_char,
    ) -> c_int;
    pub fn cachekit_crypto_encrypt(
        out: *mut cachekit_buf,
        key: *const u8,
        aad: *const c_void,
        aad_len: usize,
        plaintext: *const c_void,
        plaintext_len: usize,
        nonce: *const u8,
    ) -> c_int;
    pub fn cachekit_crypto_decrypt(
        out: *mut cachekit_buf,
        key: *const u8,
        aad: *const c_void,
        aad_len: usize,
        ciphertext: *const c_void,
        ciphertext_len: usize,
    ) -> c_int;
    pub fn cachekit_keyring_new(
        out: *mut *mut cachekit_keyring,
        current_hex: *const c_char,
        previous_hex: *const c_char,
    ) -> c_int;
    pub fn cachekit_keyring_new_raw(
        out: *mut *mut cachekit_keyring,
        current: *const c_void,
        current_len: usize,
        previous: *const c_void,
        previous_count: usize,
    ) -> c_int;
    pub fn cachekit_keyring_free(keyring: *mut cachekit_keyring);
    pub fn cachekit_keyring_fingerprint(keyring: *const cachekit_keyring, out: *mut u8, tenant: *const c_char)
        -> c_int;
    pub fn cachekit_keyring_encrypt(
        keyring: *const cachekit_keyring,
        out: *mut cachekit_buf,
        tenant: *const c_char,
        aad: *const c_void,
        aad_len: usize,
        plaintext: *const c_void,
        plaintext_len: usize,
    ) -> c_int;
    pub fn cachekit_keyring_decrypt(
        keyring: *const cachekit_keyring,
        out: *mut cachekit_buf,
        key_index: *mut c_int,
        tenant: *const c_char,
        fingerprint: *const u8,
        aad: *const c_void,
        aad_len: usize,
        ciphertext: *const c_void,
        ciphertext_len: usize,
    ) -> c_int;
    pub fn cachekit_inspect(
        out_json: *mut cachekit_buf,
        data: *const c_void,
        len: usize,
        keyring: *const cachekit_keyring,
        tenant: *const c_char,
        cache_key: *const c_char,
    ) -> c_int;
    pub fn cachekit_backend_options_init(opts: *mut cachekit_backend_options, struct_size: usize) -> c_int;
    pub fn cachekit_backend_open(
        out: *mut *mut cachekit_backend,
        url: *const c_char,
        opts: *const cachekit_backend_options,
    ) -> c_int;
    pub fn cachekit_backend_free(backend: *mut cachekit_backend);
    pub fn cachekit_backend_kind(backend: *const cachekit_backend) -> *const c_char;
    pub fn cachekit_backend_get(
        backend: *mut cachekit_backend,
        out: *mut cachekit_buf,
        key: *const c_void,
        key_len: usize,
    ) -> c_int;
    pub fn cachekit_backend_set(
        backend: *mut cachekit_backend,
        key: *const c_void,
        key_len: usize,
        value: *const c_void,
        value_len: usize,
        ttl_seconds: f64,
    ) -> c_int;
    pub fn cachekit_backend_delete(backend: *mut cachekit_backend, key: *const c_void, key_len: usize) -> c_int;
    pub fn cachekit_backend_exists(backend: *mut cachekit_backend, key: *const c_void, key_len: usize) -> c_int;
    pub fn cachekit_backend_incr(
        backend: *mut cachekit_backend,
        value: *mut i64,
        key: *const c_void,
        key_len: usize,
        delta: i64,
    ) -> c_int;
    pub fn cachekit_backend_add(
        backend: *mut cachekit_backend,
        added: *mut c_int,
        key: *const c_void,
        key_len: usize,
        value: *const c_void,
        value_len: usize,
        ttl_seconds: f64,
    ) -> c_int;
    pub fn cachekit_backend_touch(
        backend: *mut cachekit_backend,
        key: *const c_void,
        key_len: usize,
        ttl_seconds: f64,
    ) -> c_int;
    pub fn cachekit_backend_delete_many(
        backend: *mut cachekit_backend,
        deleted: *mut u64,
        keys: *const *const c_void,
        key_lens: *const usize,
        count: usize,
    ) -> c_int;
    pub fn cachekit_backend_delete_many_packed(
        backend: *mut cachekit_backend,
        deleted: *mut u64,
        keys: *const c_void,
        key_offsets: *const usize,
        count: usize,
    ) -> c_int;
    pub fn cachekit_backend_ttl(
        backend: *mut cachekit_backend,
        ttl_seconds: *mut f64,
        key: *const c_void,
        key_len: usize,
    ) -> c_int;
    pub fn cachekit_backend_get_many(
        backend: *mut cachekit_backend,
        outs: *mut cachekit_buf,
        results: *mut c_int,
        keys: *const *const c_void,
        key_lens: *const usize,
        count: usize,
    ) -> c_int;
    pub fn cachekit_backend_set_many(
        backend: *mut cachekit_backend,
        keys: *const *const c_void,
        key_lens: *const usize,
        values: *const *const c_void,
        value_lens: *const usize,
        count: usize,
        ttl_seconds: f64,
    ) -> c_int;
    pub fn cachekit_backend_get_many_packed(
        backend: *mut cachekit_backend,
        values_out: *mut cachekit_buf,
        value_offsets: *mut usize,
        results: *mut c_int,
        keys: *const c_void,
        key_offsets: *const usize,
        count: usize,
    ) -> c_int;
    pub fn cachekit_backend_set_many_packed(
        backend: *mut cachekit_backend,
        keys: *const c_void,
        key_offsets: *const usize,
        values: *const c_void,
        value_offsets: *const usize,
        count: usize,
        ttl_seconds: f64,
    ) -> c_int;
    pub fn cachekit_backend_clear(
        backend: *mut cachekit_backend,
        deleted: *mut u64,
        prefix: *const c_void,
        prefix_len: usize,
    ) -> c_int;
    pub fn cachekit_backend_lock(
        backend: *mut cachekit_backend,
        token: *mut cachekit_buf,
        key: *const c_void,
        key_len: usize,
        hold_ms: u32,
    ) -> c_int;
    pub fn cachekit_backend_unlock(
        backend: *mut cachekit_backend,
        key: *const c_void,
        key_len: usize,
        token: *const c_void,
        token_len: usize,
    ) -> c_int;
    pub fn cachekit_backend_health(backend: *mut cachekit_backend, latency_ms: *mut f64) -> c_int;
    pub fn cachekit_backend_stats_get(backend: *mut cachekit_backend, out: *mut cachekit_backend_stats) -> c_int;
    pub fn cachekit_cache_options_init(opts: *mut cachekit_cache_options, struct_size: usize) -> c_int;
    pub fn cachekit_cache_new(out: *mut *mut cachekit_cache, opts: *const cachekit_cache_options) -> c_int;
    pub fn cachekit_cache_free(cache: *mut cachekit_cache);
    pub fn cachekit_cache_get(
        cache: *mut cachekit_cache,
        out: *mut cachekit_buf,
        info: *mut cachekit_lookup,
        ns: *const c_char,
        key: *const c_void,
        key_len: usize,
    ) -> c_int;
    pub fn cachekit_cache_peek(
        cache: *mut cachekit_cache,
        out: *mut cachekit_buf,
        info: *mut cachekit_lookup,
        ns: *const c_char,
        key: *const c_void,
        key_len: usize,
    ) -> c_int;
    pub fn cachekit_cache_put(
        cache: *mut cachekit_cache,
        ns: *const c_char,
        key: *const c_void,
        key_len: usize,
        value: *const c_void,
        value_len: usize,
        ttl_seconds: f64,
    ) -> c_int;
    pub fn cachekit_load_set_value(load: *mut cachekit_load, value: *const c_void, value_len: usize) -> c_int;
    pub fn cachekit_load_set_ttl(load: *mut cachekit_load, ttl_seconds: f64) -> c_int;
    pub fn cachekit_load_set_error(load: *mut cachekit_load, message: *const c_char) -> c_int;
    pub fn cachekit_cache_get_or_load(
        cache: *mut cachekit_cache,
        out: *mut cachekit_buf,
        info: *mut cachekit_lookup,
        ns: *const c_char,
        key: *const c_void,
        key_len: usize,
        ttl_seconds: f64,
        loader: cachekit_loader,
        payload: *mut c_void,
    ) -> c_int;
    pub fn cachekit_cache_put_refresh(
        cache: *mut cachekit_cache,
        ns: *const c_char,
        key: *const c_void,
        key_len: usize,
        value: *const c_void,
        value_len: usize,
        ttl_seconds: f64,
        refresh_claim: u64,
    ) -> c_int;
    pub fn cachekit_cache_abandon_refresh(
        cache: *mut cachekit_cache,
        key: *const c_void,
        key_len: usize,
        refresh_claim: u64,
    ) -> c_int;
    pub fn cachekit_cache_get_for_load(
        cache: *mut cachekit_cache,
        out: *mut cachekit_buf,
        info: *mut cachekit_lookup,
        ns: *const c_char,
        key: *const c_void,
        key_len: usize,
    ) -> c_int;
    pub fn cachekit_cache_invalidate(
        cache: *mut cachekit_cache,
        ns: *const c_char,
        key: *const c_void,
        key_len: usize,
    ) -> c_int;
    pub fn cachekit_cache_invalidate_namespace(cache: *mut cachekit_cache, ns: *const c_char) -> c_int;
    pub fn cachekit_cache_clear(cache: *mut cachekit_cache) -> c_int;
    pub fn cachekit_cache_track_function(
        cache: *mut cachekit_cache,
        ns: *const c_char,
        function: *const c_char,
        key_head: *const c_void,
        key_head_len: usize,
        kept: *mut c_int,
    ) -> c_int;
    pub fn cachekit_cache_invalidate_function(
        cache: *mut cachekit_cache,
        ns: *const c_char,
        function: *const c_char,
        deleted: *mut u64,
    ) -> c_int;
    pub fn cachekit_cache_stats_get(
        cache: *mut cachekit_cache,
        out: *mut cachekit_cache_stats,
        ns: *const c_char,
    ) -> c_int;
    pub fn cachekit_cache_metrics_text(cache: *mut cachekit_cache, out: *mut cachekit_buf) -> c_int;
    pub fn cachekit_l1_options_init(opts: *mut cachekit_l1_options, struct_size: usize) -> c_int;
    pub fn cachekit_l1_new(out: *mut *mut cachekit_l1, opts: *const cachekit_l1_options) -> c_int;
    pub fn cachekit_l1_free(l1: *mut cachekit_l1);
    pub fn cachekit_l1_get(l1: *mut cachekit_l1, out: *mut cachekit_buf, key: *const c_void, key_len: usize) -> c_int;
    pub fn cachekit_l1_put(
        l1: *mut cachekit_l1,
        ns: *const c_void,
        ns_len: usize,
        key: *const c_void,
        key_len: usize,
        value: *const c_void,
        value_len: usize,
        ttl_seconds: f64,
    ) -> c_int;
    pub fn cachekit_l1_begin_fill(l1: *mut cachekit_l1, ticket: *mut u64) -> c_int;
    pub fn cachekit_l1_put_filled(
        l1: *mut cachekit_l1,
        ns: *const c_void,
        ns_len: usize,
        key: *const c_void,
        key_len: usize,
        value: *const c_void,
        value_len: usize,
        ttl_seconds: f64,
        ticket: u64,
        stored: *mut c_int,
    ) -> c_int;
    pub fn cachekit_l1_invalidate(l1: *mut cachekit_l1, key: *const c_void, key_len: usize) -> c_int;
    pub fn cachekit_l1_invalidate_namespace(l1: *mut cachekit_l1, ns: *const c_void, ns_len: usize) -> c_int;
    pub fn cachekit_l1_clear(l1: *mut cachekit_l1) -> c_int;
    pub fn cachekit_l1_stats(l1: *mut cachekit_l1, out: *mut cachekit_l1_counters) -> c_int;
    pub fn cachekit_buf_reserve_ex(buf: *mut cachekit_buf, capacity: usize, err: *mut cachekit_error) -> c_int;
    pub fn cachekit_msgpack_check_ex(
        data: *const c_void,
        len: usize,
        max_depth: u32,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_msgpack_canonical_ex(
        out: *mut cachekit_buf,
        data: *const c_void,
        len: usize,
        profile: c_int,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_msgpack_to_json_ex(
        out: *mut cachekit_buf,
        data: *const c_void,
        len: usize,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_serializer_code_ex(
        out: *mut cachekit_buf,
        identity: *const c_char,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_key_auto_ex(
        out: *mut cachekit_buf,
        ns: *const c_char,
        module: *const c_char,
        qualname: *const c_char,
        args: *const c_void,
        args_len: usize,
        integrity: c_int,
        serializer: *const c_char,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_key_custom_ex(
        out: *mut cachekit_buf,
        ns: *const c_char,
        module: *const c_char,
        qualname: *const c_char,
        key: *const c_void,
        key_len: usize,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_key_interop_ex(
        out: *mut cachekit_buf,
        canonical: *mut cachekit_buf,
        ns: *const c_char,
        operation: *const c_char,
        args: *const c_void,
        args_len: usize,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_envelope_wrap_ex(
        out: *mut cachekit_buf,
        data: *const c_void,
        len: usize,
        format: *const c_char,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_envelope_unwrap_ex(
        out: *mut cachekit_buf,
        format: *mut cachekit_buf,
        envelope: *const c_void,
        len: usize,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_frame_encode_ex(
        out: *mut cachekit_buf,
        serializer: *const c_char,
        metadata_json: *const c_char,
        payload: *const c_void,
        payload_len: usize,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_frame_decode_ex(
        serializer: *mut cachekit_buf,
        metadata_json: *mut cachekit_buf,
        payload_offset: *mut usize,
        frame: *const c_void,
        len: usize,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_container_v2_wrap_ex(
        out: *mut cachekit_buf,
        value: *const c_void,
        len: usize,
        method: c_int,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_container_v2_unwrap_ex(
        out: *mut cachekit_buf,
        container: *const c_void,
        len: usize,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_master_key_from_hex_ex(
        out: *mut u8,
        hex: *const c_char,
        len: usize,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_crypto_derive_ex(
        out: *mut cachekit_derived_keys,
        master_key: *const c_void,
        master_key_len: usize,
        tenant: *const c_char,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_crypto_aad_ex(
        out: *mut cachekit_buf,
        tenant: *const c_char,
        cache_key: *const c_char,
        format: *const c_char,
        compressed: c_int,
        original_type: *const c_char,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_crypto_encrypt_ex(
        out: *mut cachekit_buf,
        key: *const u8,
        aad: *const c_void,
        aad_len: usize,
        plaintext: *const c_void,
        plaintext_len: usize,
        nonce: *const u8,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_crypto_decrypt_ex(
        out: *mut cachekit_buf,
        key: *const u8,
        aad: *const c_void,
        aad_len: usize,
        ciphertext: *const c_void,
        ciphertext_len: usize,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_keyring_new_ex(
        out: *mut *mut cachekit_keyring,
        current_hex: *const c_char,
        previous_hex: *const c_char,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_keyring_new_raw_ex(
        out: *mut *mut cachekit_keyring,
        current: *const c_void,
        current_len: usize,
        previous: *const c_void,
        previous_count: usize,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_keyring_fingerprint_ex(
        keyring: *const cachekit_keyring,
        out: *mut u8,
        tenant: *const c_char,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_keyring_encrypt_ex(
        keyring: *const cachekit_keyring,
        out: *mut cachekit_buf,
        tenant: *const c_char,
        aad: *const c_void,
        aad_len: usize,
        plaintext: *const c_void,
        plaintext_len: usize,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_keyring_decrypt_ex(
        keyring: *const cachekit_keyring,
        out: *mut cachekit_buf,
        key_index: *mut c_int,
        tenant: *const c_char,
        fingerprint: *const u8,
        aad: *const c_void,
        aad_len: usize,
        ciphertext: *const c_void,
        ciphertext_len: usize,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_inspect_ex(
        out_json: *mut cachekit_buf,
        data: *const c_void,
        len: usize,
        keyring: *const cachekit_keyring,
        tenant: *const c_char,
        cache_key: *const c_char,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_backend_options_init_ex(
        opts: *mut cachekit_backend_options,
        struct_size: usize,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_backend_open_ex(
        out: *mut *mut cachekit_backend,
        url: *const c_char,
        opts: *const cachekit_backend_options,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_backend_get_ex(
        backend: *mut cachekit_backend,
        out: *mut cachekit_buf,
        key: *const c_void,
        key_len: usize,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_backend_set_ex(
        backend: *mut cachekit_backend,
        key: *const c_void,
        key_len: usize,
        value: *const c_void,
        value_len: usize,
        ttl_seconds: f64,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_backend_delete_ex(
        backend: *mut cachekit_backend,
        key: *const c_void,
        key_len: usize,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_backend_exists_ex(
        backend: *mut cachekit_backend,
        key: *const c_void,
        key_len: usize,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_backend_incr_ex(
        backend: *mut cachekit_backend,
        value: *mut i64,
        key: *const c_void,
        key_len: usize,
        delta: i64,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_backend_add_ex(
        backend: *mut cachekit_backend,
        added: *mut c_int,
        key: *const c_void,
        key_len: usize,
        value: *const c_void,
        value_len: usize,
        ttl_seconds: f64,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_backend_touch_ex(
        backend: *mut cachekit_backend,
        key: *const c_void,
        key_len: usize,
        ttl_seconds: f64,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_backend_delete_many_ex(
        backend: *mut cachekit_backend,
        deleted: *mut u64,
        keys: *const *const c_void,
        key_lens: *const usize,
        count: usize,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_backend_delete_many_packed_ex(
        backend: *mut cachekit_backend,
        deleted: *mut u64,
        keys: *const c_void,
        key_offsets: *const usize,
        count: usize,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_backend_ttl_ex(
        backend: *mut cachekit_backend,
        ttl_seconds: *mut f64,
        key: *const c_void,
        key_len: usize,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_backend_get_many_ex(
        backend: *mut cachekit_backend,
        outs: *mut cachekit_buf,
        results: *mut c_int,
        keys: *const *const c_void,
        key_lens: *const usize,
        count: usize,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_backend_set_many_ex(
        backend: *mut cachekit_backend,
        keys: *const *const c_void,
        key_lens: *const usize,
        values: *const *const c_void,
        value_lens: *const usize,
        count: usize,
        ttl_seconds: f64,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_backend_get_many_packed_ex(
        backend: *mut cachekit_backend,
        values_out: *mut cachekit_buf,
        value_offsets: *mut usize,
        results: *mut c_int,
        keys: *const c_void,
        key_offsets: *const usize,
        count: usize,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_backend_set_many_packed_ex(
        backend: *mut cachekit_backend,
        keys: *const c_void,
        key_offsets: *const usize,
        values: *const c_void,
        value_offsets: *const usize,
        count: usize,
        ttl_seconds: f64,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_backend_clear_ex(
        backend: *mut cachekit_backend,
        deleted: *mut u64,
        prefix: *const c_void,
        prefix_len: usize,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_backend_lock_ex(
        backend: *mut cachekit_backend,
        token: *mut cachekit_buf,
        key: *const c_void,
        key_len: usize,
        hold_ms: u32,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_backend_unlock_ex(
        backend: *mut cachekit_backend,
        key: *const c_void,
        key_len: usize,
        token: *const c_void,
        token_len: usize,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_backend_health_ex(
        backend: *mut cachekit_backend,
        latency_ms: *mut f64,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_backend_stats_get_ex(
        backend: *mut cachekit_backend,
        out: *mut cachekit_backend_stats,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_cache_options_init_ex(
        opts: *mut cachekit_cache_options,
        struct_size: usize,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_cache_new_ex(
        out: *mut *mut cachekit_cache,
        opts: *const cachekit_cache_options,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_cache_get_ex(
        cache: *mut cachekit_cache,
        out: *mut cachekit_buf,
        info: *mut cachekit_lookup,
        ns: *const c_char,
        key: *const c_void,
        key_len: usize,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_cache_peek_ex(
        cache: *mut cachekit_cache,
        out: *mut cachekit_buf,
        info: *mut cachekit_lookup,
        ns: *const c_char,
        key: *const c_void,
        key_len: usize,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_cache_put_ex(
        cache: *mut cachekit_cache,
        ns: *const c_char,
        key: *const c_void,
        key_len: usize,
        value: *const c_void,
        value_len: usize,
        ttl_seconds: f64,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_load_set_value_ex(
        load: *mut cachekit_load,
        value: *const c_void,
        value_len: usize,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_load_set_ttl_ex(load: *mut cachekit_load, ttl_seconds: f64, err: *mut cachekit_error) -> c_int;
    pub fn cachekit_load_set_error_ex(
        load: *mut cachekit_load,
        message: *const c_char,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_cache_get_or_load_ex(
        cache: *mut cachekit_cache,
        out: *mut cachekit_buf,
        info: *mut cachekit_lookup,
        ns: *const c_char,
        key: *const c_void,
        key_len: usize,
        ttl_seconds: f64,
        loader: cachekit_loader,
        payload: *mut c_void,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_cache_put_refresh_ex(
        cache: *mut cachekit_cache,
        ns: *const c_char,
        key: *const c_void,
        key_len: usize,
        value: *const c_void,
        value_len: usize,
        ttl_seconds: f64,
        refresh_claim: u64,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_cache_abandon_refresh_ex(
        cache: *mut cachekit_cache,
        key: *const c_void,
        key_len: usize,
        refresh_claim: u64,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_cache_get_for_load_ex(
        cache: *mut cachekit_cache,
        out: *mut cachekit_buf,
        info: *mut cachekit_lookup,
        ns: *const c_char,
        key: *const c_void,
        key_len: usize,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_cache_invalidate_ex(
        cache: *mut cachekit_cache,
        ns: *const c_char,
        key: *const c_void,
        key_len: usize,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_cache_invalidate_namespace_ex(
        cache: *mut cachekit_cache,
        ns: *const c_char,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_cache_clear_ex(cache: *mut cachekit_cache, err: *mut cachekit_error) -> c_int;
    pub fn cachekit_cache_track_function_ex(
        cache: *mut cachekit_cache,
        ns: *const c_char,
        function: *const c_char,
        key_head: *const c_void,
        key_head_len: usize,
        kept: *mut c_int,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_cache_invalidate_function_ex(
        cache: *mut cachekit_cache,
        ns: *const c_char,
        function: *const c_char,
        deleted: *mut u64,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_cache_stats_get_ex(
        cache: *mut cachekit_cache,
        out: *mut cachekit_cache_stats,
        ns: *const c_char,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_cache_metrics_text_ex(
        cache: *mut cachekit_cache,
        out: *mut cachekit_buf,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_l1_options_init_ex(
        opts: *mut cachekit_l1_options,
        struct_size: usize,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_l1_new_ex(
        out: *mut *mut cachekit_l1,
        opts: *const cachekit_l1_options,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_l1_get_ex(
        l1: *mut cachekit_l1,
        out: *mut cachekit_buf,
        key: *const c_void,
        key_len: usize,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_l1_put_ex(
        l1: *mut cachekit_l1,
        ns: *const c_void,
        ns_len: usize,
        key: *const c_void,
        key_len: usize,
        value: *const c_void,
        value_len: usize,
        ttl_seconds: f64,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_l1_begin_fill_ex(l1: *mut cachekit_l1, ticket: *mut u64, err: *mut cachekit_error) -> c_int;
    pub fn cachekit_l1_put_filled_ex(
        l1: *mut cachekit_l1,
        ns: *const c_void,
        ns_len: usize,
        key: *const c_void,
        key_len: usize,
        value: *const c_void,
        value_len: usize,
        ttl_seconds: f64,
        ticket: u64,
        stored: *mut c_int,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_l1_invalidate_ex(
        l1: *mut cachekit_l1,
        key: *const c_void,
        key_len: usize,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_l1_invalidate_namespace_ex(
        l1: *mut cachekit_l1,
        ns: *const c_void,
        ns_len: usize,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_l1_clear_ex(l1: *mut cachekit_l1, err: *mut cachekit_error) -> c_int;
    pub fn cachekit_l1_stats_ex(
        l1: *mut cachekit_l1,
        out: *mut cachekit_l1_counters,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_backend_health_get_ex(
        backend: *mut cachekit_backend,
        out: *mut cachekit_health,
        err: *mut cachekit_error,
    ) -> c_int;
    pub fn cachekit_cache_health_get_ex(
        cache: *mut cachekit_cache,
        out: *mut cachekit_health,
        err: *mut cachekit_error,
    ) -> c_int;
}

// Seeing failures: the log handler and the backend's health (since 0.2).
pub const CACHEKIT_LOG_INFO: c_int = 20;
pub const CACHEKIT_LOG_WARNING: c_int = 30;
pub const CACHEKIT_HEALTH_OK: c_int = 0;
pub const CACHEKIT_HEALTH_DOWN: c_int = 1;
pub const CACHEKIT_HEALTH_BREAKER_OPEN: c_int = 2;
pub const CACHEKIT_COHERENCE_OFF: c_int = 0;
pub const CACHEKIT_COHERENCE_LIVE: c_int = 1;
pub const CACHEKIT_COHERENCE_SUSPENDED: c_int = 2;
pub const CACHEKIT_HEALTH_BACKEND_SIZE: usize = 256;

/// cachekit_log_handler: called on any thread, with no library lock held; must not unwind.
pub type cachekit_log_handler =
    Option<unsafe extern "C" fn(level: c_int, event: *const c_char, message: *const c_char, user_data: *mut c_void)>;

#[repr(C)]
#[derive(Clone, Copy)]
pub struct cachekit_health {
    pub struct_size: usize,
    pub state: c_int,
    pub coherence: c_int,
    pub consecutive_failures: u64,
    pub since: f64,
    pub last_error_at: f64,
    pub backend: [c_char; CACHEKIT_HEALTH_BACKEND_SIZE],
    pub last_error: [c_char; CACHEKIT_ERROR_MESSAGE_SIZE],
}

impl cachekit_health {
    /// CACHEKIT_HEALTH_INIT.
    pub const INIT: cachekit_health = cachekit_health {
        struct_size: core::mem::size_of::<cachekit_health>(),
        state: 0,
        coherence: 0,
        consecutive_failures: 0,
        since: 0.0,
        last_error_at: 0.0,
        backend: [0; CACHEKIT_HEALTH_BACKEND_SIZE],
        last_error: [0; CACHEKIT_ERROR_MESSAGE_SIZE],
    };
}

extern "C" {
    pub fn cachekit_set_log_handler(fn_: cachekit_log_handler, user_data: *mut c_void);
    pub fn cachekit_backend_health_get(backend: *mut cachekit_backend, out: *mut cachekit_health) -> c_int;
    pub fn cachekit_cache_health_get(cache: *mut cachekit_cache, out: *mut cachekit_health) -> c_int;
}
