//! `CacheBuilder`: the options of cachekit_cache_new (cachekit_cache_options).
use crate::ffi::{call, cstring};
use crate::{Cache, Error};
use core::ptr::{null, null_mut, NonNull};
use libcachekit_sys as sys;
use std::ffi::CString;
use std::path::PathBuf;
use std::time::Duration;

/// How values are stored in L2.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Interop/v1: plain MessagePack (or its ciphertext); every CacheKit SDK
    /// reads it. The default here, since typed values are interop values.
    Interop,
    /// The reference Python SDK's stored form (CK v3 frame around the envelope).
    Auto,
    /// Interop's plain MessagePack under any key, a `key_prefix` allowed:
    /// cachekit-rs's get/set under a client `.namespace(ns)` is `Plain` with
    /// `key_prefix(format!("{ns}:"))`.
    Plain,
}

/// What the L1 keeps when its budget is full (cachekit_cache_options.l1_admission).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum L1Admission {
    /// Evict the least recently used entry (the C library's default; unset,
    /// CACHEKIT_L1_ADMISSION may choose).
    Lru,
    /// W-TinyLFU: an entry leaving a small window replaces the least recently
    /// used one only if it was read more often. Keeps a hot set through scans.
    TinyLfu,
}

/// Whether the Redis server's certificate is verified (redis-py's
/// `ssl_cert_reqs`; cachekit_backend_options.tls_cert_reqs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SslCertReqs {
    /// Verify it (the default).
    Required,
    /// Verify it too: for a client, Python's `ssl` treats both the same.
    Optional,
    /// Accept any certificate (and check no host name).
    None,
}

/// The TLS settings of the backend (cachekit_backend_options' tls_* fields).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Tls {
    ssl: bool,
    cert_reqs: Option<SslCertReqs>,
    check_hostname: Option<bool>,
    ca_certs: Option<PathBuf>,
    ca_path: Option<PathBuf>,
    certfile: Option<PathBuf>,
    keyfile: Option<PathBuf>,
}

/// Where L2 lives.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Backend {
    /// NULL URL: CACHEKIT_REDIS_URL / REDIS_URL / CACHEKIT_FILE_CACHE_DIR, else
    /// the per-user file directory (the embedded default).
    Environment,
    /// "none": L1 only.
    None,
    Url(String),
}

/// Builds a `Cache`. Unset options take the C library's defaults (and its
/// environment variables, see docs/cache.md); explicit ones win.
#[derive(Debug, Clone)]
pub struct CacheBuilder {
    backend: Backend,
    format: Format,
    integrity: Option<bool>,
    encryption: Option<Option<String>>,
    previous_keys: Option<Vec<String>>,
    tenant: Option<String>,
    key_prefix: Option<String>,
    default_ttl: Option<Duration>,
    l1: Option<bool>,
    l1_max_bytes: u64,
    l1_sweep_interval: Option<Duration>,
    l1_admission: Option<L1Admission>,
    swr: Option<bool>,
    swr_threshold_ratio: f64,
    fail_closed: Option<bool>,
    max_value_bytes: u64,
    load_timeout: Option<Duration>,
    cross_process_lock: Option<bool>,
    command_timeout: Option<Duration>,
    connect_timeout: Option<Duration>,
    pool_size: u32,
    tls: Tls,
}

fn switch(v: Option<bool>) -> core::ffi::c_int {
    match v {
        None => sys::CACHEKIT_DEFAULT,
        Some(true) => sys::CACHEKIT_ON,
        Some(false) => sys::CACHEKIT_OFF,
    }
}

fn millis(what: &str, d: Option<Duration>) -> Result<u32, Error> {
    match d {
        None => Ok(0),
        Some(d) => {
            let ms = d.as_millis();
            if ms == 0 || ms > u32::MAX as u128 {
                Err(Error::invalid(format!(
                    "{what} must be between 1 ms and {} ms",
                    u32::MAX
                )))
            } else {
                Ok(ms as u32)
            }
        }
    }
}

impl Default for CacheBuilder {
    fn default() -> Self {
        CacheBuilder {
            backend: Backend::Environment,
            format: Format::Interop,
            integrity: None,
            encryption: None,
            previous_keys: None,
            tenant: None,
            key_prefix: None,
            default_ttl: None,
            l1: None,
            l1_max_bytes: 0,
            l1_sweep_interval: None,
            l1_admission: None,
            swr: None,
            swr_threshold_ratio: 0.0,
            fail_closed: None,
            max_value_bytes: 0,
            load_timeout: None,
            cross_process_lock: None,
            command_timeout: None,
            connect_timeout: None,
            pool_size: 0,
            tls: Tls::default(),
        }
    }
}

impl CacheBuilder {
    /// The interop rule the reference SDK enforces too (it refuses
    /// key-prefixing backends in interop mode): checked here so the answer
    /// does not depend on the C library's version.
    fn check_interop(&self) -> Result<(), Error> {
        match (&self.format, self.key_prefix.as_deref()) {
            (Format::Interop, Some(prefix)) if !prefix.is_empty() => Err(Error::invalid(format!(
                "key_prefix {prefix:?} cannot be used in interop format: interop keys are \
                 {{namespace}}:{{operation}}:{{hash}} with no prefix, so no other SDK would read \
                 the entries; drop the prefix, or use Format::Plain (or Format::Auto)"
            ))),
            _ => Ok(()),
        }
    }

    /// L2 at a URL: `redis://[user:password@]host[:port][/db]`,
    /// `unix:///path.sock[?db=N]`, `file:///absolute/dir`, `memory://`, or
    /// `none` for L1 only.
    pub fn backend_url(mut self, url: impl Into<String>) -> Self {
        let url = url.into();
        self.backend = if url == "none" {
            Backend::None
        } else {
            Backend::Url(url)
        };
        self
    }

    /// No L2: the in-process L1 only.
    pub fn l1_only(mut self) -> Self {
        self.backend = Backend::None;
        self
    }

    /// L2 from the environment (CACHEKIT_REDIS_URL, REDIS_URL,
    /// CACHEKIT_FILE_CACHE_DIR), else the per-user file directory. The default.
    pub fn default_backend(mut self) -> Self {
        self.backend = Backend::Environment;
        self
    }

    /// Stored form; `Format::Interop` unless set.
    pub fn format(mut self, format: Format) -> Self {
        self.format = format;
        self
    }

    /// Auto mode's envelope integrity check (on by default).
    pub fn integrity(mut self, on: bool) -> Self {
        self.integrity = Some(on);
        self
    }

    /// Encrypt values (AES-256-GCM) under this master key (64 hex digits).
    pub fn encryption(mut self, master_key_hex: impl Into<String>) -> Self {
        self.encryption = Some(Some(master_key_hex.into()));
        self
    }

    /// Encrypt values under the master key in CACHEKIT_MASTER_KEY.
    pub fn encryption_from_env(mut self) -> Self {
        self.encryption = Some(None);
        self
    }

    /// Decrypt-only previous master keys (hex, at most 3), for key rotation.
    /// Unset: CACHEKIT_PREVIOUS_MASTER_KEYS.
    pub fn previous_keys<I, S>(mut self, keys: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.previous_keys = Some(keys.into_iter().map(Into::into).collect());
        self
    }

    /// The tenant whose derived keys encrypt (default "default").
    pub fn tenant(mut self, tenant: impl Into<String>) -> Self {
        self.tenant = Some(tenant.into());
        self
    }

    /// A prefix for every L2 key (e.g. "t:default:"), in `Format::Auto` only:
    /// interop keys carry no prefix (no other SDK would find a prefixed
    /// one), so `build()` refuses a non-empty prefix in interop format.
    pub fn key_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.key_prefix = Some(prefix.into());
        self
    }

    /// The TTL of calls that pass `None` (unset or zero: no expiry).
    pub fn default_ttl(mut self, ttl: Duration) -> Self {
        self.default_ttl = Some(ttl);
        self
    }

    /// Turn the in-process L1 on (default) or off.
    pub fn l1(mut self, on: bool) -> Self {
        self.l1 = Some(on);
        self
    }

    /// The L1 byte budget (default CACHEKIT_L1_MAX_SIZE_MB or 100 MiB).
    pub fn l1_max_bytes(mut self, bytes: u64) -> Self {
        self.l1_max_bytes = bytes;
        self
    }

    /// How often L1's sweeper frees expired entries.
    pub fn l1_sweep_interval(mut self, every: Duration) -> Self {
        self.l1_sweep_interval = Some(every);
        self
    }

    /// The L1's admission policy (unset: CACHEKIT_L1_ADMISSION=lru|tinylfu,
    /// else LRU). `Lru` sets the C field to its default, where the environment
    /// variable still applies.
    pub fn l1_admission(mut self, policy: L1Admission) -> Self {
        self.l1_admission = Some(policy);
        self
    }

    /// Stale-while-revalidate on L1 hits, with the staleness ratio of the TTL
    /// (0 = the default 0.5).
    pub fn swr(mut self, on: bool, threshold_ratio: f64) -> Self {
        self.swr = Some(on);
        self.swr_threshold_ratio = threshold_ratio;
        self
    }

    /// Fail closed: backend errors and refused entries are errors instead of
    /// misses (default: fail open).
    pub fn fail_closed(mut self, on: bool) -> Self {
        self.fail_closed = Some(on);
        self
    }

    /// The largest value stored (default CACHEKIT_MAX_VALUE_SIZE or 100 MiB).
    pub fn max_value_bytes(mut self, bytes: u64) -> Self {
        self.max_value_bytes = bytes;
        self
    }

    /// How long a caller waits on another caller's load of the same key
    /// (default 30 s; then `Error::Timeout`).
    pub fn load_timeout(mut self, timeout: Duration) -> Self {
        self.load_timeout = Some(timeout);
        self
    }

    /// One process computes a key, through the backend's lock.
    pub fn cross_process_lock(mut self, on: bool) -> Self {
        self.cross_process_lock = Some(on);
        self
    }

    /// Deadline of every backend call (default 250 ms).
    pub fn command_timeout(mut self, timeout: Duration) -> Self {
        self.command_timeout = Some(timeout);
        self
    }

    /// Redis connect deadline (default 500 ms).
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = Some(timeout);
        self
    }

    /// Redis connections (default 10).
    pub fn pool_size(mut self, connections: u32) -> Self {
        self.pool_size = connections;
        self
    }

    /// TLS to Redis even for a `redis://` URL (redis-py's `ssl=True`;
    /// `rediss://` always is). The other `ssl_*` settings need it or
    /// `rediss://`; on any other backend they are `Error::InvalidArgument` at
    /// `build`. A `rediss://` URL's own `ssl_*` parameters win over these,
    /// as in redis-py's `from_url` (docs/redis.md, "TLS as options").
    pub fn ssl(mut self, on: bool) -> Self {
        self.tls.ssl = on;
        self
    }

    /// Verify the server's certificate or not (default `Required`).
    pub fn ssl_cert_reqs(mut self, reqs: SslCertReqs) -> Self {
        self.tls.cert_reqs = Some(reqs);
        self
    }

    /// Check that the certificate names the URL's host (default: when the
    /// certificate is required).
    pub fn ssl_check_hostname(mut self, on: bool) -> Self {
        self.tls.check_hostname = Some(on);
        self
    }

    /// PEM file of the CAs to trust (default: the system's).
    pub fn ssl_ca_certs(mut self, path: impl Into<PathBuf>) -> Self {
        self.tls.ca_certs = Some(path.into());
        self
    }

    /// Hashed (`c_rehash`) directory of the CAs to trust.
    pub fn ssl_ca_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.tls.ca_path = Some(path.into());
        self
    }

    /// Client certificate chain (PEM), for mutual TLS.
    pub fn ssl_certfile(mut self, path: impl Into<PathBuf>) -> Self {
        self.tls.certfile = Some(path.into());
        self
    }

    /// The client certificate's key (PEM, unencrypted; default: in the
    /// certificate file).
    pub fn ssl_keyfile(mut self, path: impl Into<PathBuf>) -> Self {
        self.tls.keyfile = Some(path.into());
        self
    }

    /// Create the cache. A configuration the protocol does not allow is
    /// `Error::InvalidArgument`, before any C call.
    pub fn build(self) -> Result<Cache, Error> {
        self.check_interop()?;
        crate::logging::install();
        let opt = |what: &str, s: &Option<String>| s.as_deref().map(|s| cstring(what, s)).transpose();
        let url: Option<CString> = match &self.backend {
            Backend::Environment => None,
            Backend::None => Some(cstring("backend URL", "none")?),
            Backend::Url(u) => Some(cstring("backend URL", u)?),
        };
        let master = match &self.encryption {
            Some(Some(hex)) => Some(cstring("master key", hex)?),
            _ => None,
        };
        let previous = match &self.previous_keys {
            Some(keys) => Some(cstring("previous keys", &keys.join(","))?),
            None => None,
        };
        let tenant = opt("tenant", &self.tenant)?;
        let prefix = opt("key prefix", &self.key_prefix)?;

        let mut backend_options = sys::cachekit_backend_options::default();
        call(|err| unsafe {
            // SAFETY: a live struct of the header's size.
            sys::cachekit_backend_options_init_ex(
                &mut backend_options,
                core::mem::size_of::<sys::cachekit_backend_options>(),
                err,
            )
        })?;
        backend_options.command_timeout_ms = millis("command timeout", self.command_timeout)?;
        backend_options.connect_timeout_ms = millis("connect timeout", self.connect_timeout)?;
        backend_options.pool_size = self.pool_size;
        // The C strings live until cachekit_cache_new has copied them.
        let path = |what: &str, p: &Option<PathBuf>| -> Result<Option<CString>, Error> {
            p.as_ref()
                .map(|p| {
                    let text = p
                        .to_str()
                        .ok_or_else(|| Error::invalid(format!("{what} {} is not UTF-8", p.display())))?;
                    cstring(what, text)
                })
                .transpose()
        };
        let ca_certs = path("ssl_ca_certs", &self.tls.ca_certs)?;
        let ca_path = path("ssl_ca_path", &self.tls.ca_path)?;
        let certfile = path("ssl_certfile", &self.tls.certfile)?;
        let keyfile = path("ssl_keyfile", &self.tls.keyfile)?;
        let cptr = |c: &Option<CString>| c.as_ref().map_or(null(), |c| c.as_ptr());
        backend_options.tls = self.tls.ssl as core::ffi::c_int;
        backend_options.tls_cert_reqs = match self.tls.cert_reqs {
            None | Some(SslCertReqs::Required) => sys::CACHEKIT_TLS_CERT_REQUIRED,
            Some(SslCertReqs::Optional) => sys::CACHEKIT_TLS_CERT_OPTIONAL,
            Some(SslCertReqs::None) => sys::CACHEKIT_TLS_CERT_NONE,
        };
        backend_options.tls_check_hostname = match self.tls.check_hostname {
            None => 0,
            Some(true) => sys::CACHEKIT_TLS_CHECK_HOSTNAME_YES,
            Some(false) => sys::CACHEKIT_TLS_CHECK_HOSTNAME_NO,
        };
        backend_options.tls_ca_certs = cptr(&ca_certs);
        backend_options.tls_ca_path = cptr(&ca_path);
        backend_options.tls_certfile = cptr(&certfile);
        backend_options.tls_keyfile = cptr(&keyfile);

        // SAFETY: cachekit_cache_options_init_ex fills every field.
        let mut o: sys::cachekit_cache_options = unsafe { core::mem::zeroed() };
        call(|err| unsafe {
            sys::cachekit_cache_options_init_ex(&mut o, core::mem::size_of::<sys::cachekit_cache_options>(), err)
        })?;
        let ptr = |c: &Option<CString>| c.as_ref().map_or(null(), |c| c.as_ptr());
        o.backend_url = ptr(&url);
        o.backend = null_mut();
        o.format = match self.format {
            Format::Interop => sys::CACHEKIT_FORMAT_INTEROP,
            Format::Plain => sys::CACHEKIT_FORMAT_PLAIN,
            Format::Auto => sys::CACHEKIT_FORMAT_AUTO,
        };
        o.integrity = switch(self.integrity);
        o.encryption = switch(self.encryption.as_ref().map(|_| true));
        o.master_key_hex = ptr(&master);
        o.previous_keys_hex = ptr(&previous);
        o.tenant = ptr(&tenant);
        o.key_prefix = ptr(&prefix);
        o.default_ttl_seconds = self.default_ttl.map_or(0.0, |d| d.as_secs_f64());
        o.l1 = switch(self.l1);
        o.l1_max_bytes = self.l1_max_bytes;
        o.l1_sweep_interval_ms = millis("L1 sweep interval", self.l1_sweep_interval)?;
        o.l1_admission = match self.l1_admission {
            Some(L1Admission::TinyLfu) => sys::CACHEKIT_L1_ADMISSION_TINYLFU,
            Some(L1Admission::Lru) | None => sys::CACHEKIT_L1_ADMISSION_LRU,
        };
        o.swr = switch(self.swr);
        o.swr_threshold_ratio = self.swr_threshold_ratio;
        o.fail_closed = switch(self.fail_closed);
        o.max_value_bytes = self.max_value_bytes;
        o.load_timeout_ms = millis("load timeout", self.load_timeout)?;
        o.cross_process_lock = switch(self.cross_process_lock);
        o.backend_options = &backend_options;

        let mut out: *mut sys::cachekit_cache = null_mut();
        // SAFETY: every pointer in `o` outlives the call; the library copies them.
        call(|err| unsafe { sys::cachekit_cache_new_ex(&mut out, &o, err) })?;
        let ptr = NonNull::new(out)
            .ok_or_else(|| Error::from_code(sys::CACHEKIT_EINTERNAL, "cachekit_cache_new gave no handle"))?;
        Ok(Cache::from_raw(ptr, self.swr == Some(true)))
    }
}
