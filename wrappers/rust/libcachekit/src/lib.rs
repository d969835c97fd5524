//! libcachekit for Rust: a safe API over the libcachekit C library.
//!
//! ```no_run
//! use libcachekit::{interop_key, Cache};
//! use std::time::Duration;
//!
//! #[derive(serde::Serialize, serde::Deserialize)]
//! struct User { id: u64, name: String }
//!
//! let cache = Cache::builder().backend_url("redis://127.0.0.1:6379").default_ttl(Duration::from_secs(60)).build()?;
//! let key = interop_key("users", "get_user", &(42u64,))?;
//! let user: User = cache
//!     .get_or_load("users", &key, None, || Ok::<_, std::io::Error>(User { id: 42, name: "alice".into() }))
//!     .map_err(|e| std::io::Error::other(e.to_string()))?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! See docs/rust.md.
mod builder;
mod cache;
pub mod codec;
mod decode;
mod error;
mod ffi;
mod keys;
mod load;
mod logging;
mod macro_support;
mod temporal;
mod types;
mod value;
mod values;

pub use builder::{CacheBuilder, Format, L1Admission, SslCertReqs};
pub use cache::{Cache, CoherenceState, ForLoad, Health, HealthState, Lookup, Stats};
pub use error::Error;
pub use keys::{interop_key, interop_key_raw, interop_key_with_canonical};
pub use load::LoadError;
pub use temporal::{Date, DateTime, Time};
pub use types::{Bytes, Set, Timestamp};
pub use value::Value;
pub use values::{decode_value, encode_value};

/// docs/rust.md: its Rust examples are compiled as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../../../docs/rust.md")]
pub struct DocsRustMd;

/// The raw bindings, for code that needs a call this crate does not wrap.
pub use libcachekit_sys as sys;

/// `#[cached(namespace = "...", ttl = SECONDS)]` on a `fn` or `async fn`:
/// see docs/rust.md, "The #[cached] attribute and async".
///
/// The examples below use an L1-only cache (`cache = ...`), so they run
/// without a server; the last one needs Redis and is only compiled.
///
/// # A sync function
///
/// The body runs on a miss only; the value is stored under
/// `users:get_user:{hash of [id]}` for 60 seconds.
///
/// ```
/// use libcachekit::{cached, Cache};
/// use std::sync::atomic::{AtomicU32, Ordering};
/// use std::sync::OnceLock;
///
/// fn app_cache() -> &'static Cache {
///     static CACHE: OnceLock<Cache> = OnceLock::new();
///     CACHE.get_or_init(|| Cache::builder().l1_only().build().expect("an L1-only cache"))
/// }
///
/// static CALLS: AtomicU32 = AtomicU32::new(0);
///
/// #[cached(namespace = "users", ttl = 60, cache = app_cache())]
/// fn user_name(id: u64) -> String {
///     CALLS.fetch_add(1, Ordering::SeqCst);
///     format!("user {id}")
/// }
///
/// assert_eq!(user_name(7), "user 7");
/// assert_eq!(user_name(7), "user 7"); // a hit: the body did not run again
/// assert_eq!(CALLS.load(Ordering::SeqCst), 1);
/// ```
///
/// A function returning `Result` caches only its `Ok` values; an `Err` is
/// returned to the caller and the next call runs the body again.
///
/// # An async fn
///
/// On a miss one caller per key runs the body; the others await its value.
/// With the `tokio` feature (on by default) the L2 calls go to Tokio's
/// blocking pool.
///
/// ```
/// use libcachekit::{cached, Cache};
/// use std::sync::OnceLock;
///
/// fn app_cache() -> &'static Cache {
///     static CACHE: OnceLock<Cache> = OnceLock::new();
///     CACHE.get_or_init(|| Cache::builder().l1_only().build().expect("an L1-only cache"))
/// }
///
/// #[cached(namespace = "users", ttl = 60, cache = app_cache())]
/// async fn fetch_user(id: u64) -> Result<String, std::io::Error> {
///     if id == 0 {
///         return Err(std::io::Error::other("no user 0")); // returned, never cached
///     }
///     Ok(format!("remote user {id}"))
/// }
///
/// let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
/// rt.block_on(async {
///     assert_eq!(fetch_user(3).await.unwrap(), "remote user 3");
///     assert!(fetch_user(0).await.is_err());
/// });
/// ```
///
/// # A method
///
/// `cache = &self.cache` uses the value's own cache. Parameters that are not
/// part of the key (`self`, a connection that is not `Serialize`) are left
/// out with `skip = [...]` or `#[skip]`; `key = (...)` gives the key's
/// arguments explicitly.
///
/// ```
/// use libcachekit::{cached, Cache};
///
/// struct Db; // not Serialize: it cannot be part of a key
///
/// struct Repo {
///     cache: Cache,
/// }
///
/// impl Repo {
///     // The key's arguments: [id, lang].
///     #[cached(namespace = "repo", cache = &self.cache, skip = [self, db])]
///     fn title(&self, db: &Db, id: u32, lang: &str) -> String {
///         let _ = db;
///         format!("{lang}:{id}")
///     }
///
///     // The key's arguments: [id / 100].
///     #[cached(namespace = "repo", cache = &self.cache, key = (id / 100,))]
///     fn bucket(&self, #[skip] db: &Db, id: u32) -> u32 {
///         let _ = db;
///         id / 100
///     }
/// }
///
/// let repo = Repo { cache: Cache::builder().l1_only().build().unwrap() };
/// assert_eq!(repo.title(&Db, 1, "en"), "en:1");
/// assert_eq!(repo.bucket(&Db, 250), 2);
/// ```
///
/// # Options
///
/// - `namespace = "..."` (required): the key's first segment, matching
///   `^[a-z0-9][a-z0-9._-]{0,63}$` without `..`.
/// - `operation = "..."`: the key's second segment (default: the function's
///   name), e.g. to version a key whose value type changed.
/// - `ttl = SECONDS`: the value's lifetime (default: the cache's).
/// - `cache = EXPR`: an expression yielding `&libcachekit::Cache`. Without
///   it, a process-wide cache built from the environment
///   (`CACHEKIT_REDIS_URL`, ...; docs/configuration.md).
/// - `skip = [self, name, ...]` or `#[skip]` on a parameter, and
///   `key = EXPR`: what the key hashes (see "A method").
///
/// Shared with other languages through Redis (this one needs a server, so
/// it is compiled, not run):
///
/// ```no_run
/// use libcachekit::{cached, Cache};
/// use std::sync::OnceLock;
/// use std::time::Duration;
///
/// fn shared() -> &'static Cache {
///     static CACHE: OnceLock<Cache> = OnceLock::new();
///     CACHE.get_or_init(|| {
///         Cache::builder()
///             .backend_url("redis://127.0.0.1:6379")
///             .default_ttl(Duration::from_secs(300))
///             .build()
///             .expect("a Redis-backed cache")
///     })
/// }
///
/// #[derive(serde::Serialize, serde::Deserialize)]
/// struct Price {
///     cents: u64,
/// }
///
/// // Another process, or a wrapper in another language, calling `get_price`
/// // in namespace "prices" with the same argument reads the same key.
/// #[cached(namespace = "prices", operation = "get_price", ttl = 30, cache = shared())]
/// fn price(sku: &str) -> Price {
///     Price { cents: sku.len() as u64 * 100 }
/// }
///
/// let _ = price("abc").cents;
/// ```
pub use libcachekit_macros::cached;
#[doc(hidden)]
pub use macro_support::__private;

/// The version of the libcachekit library loaded at run time.
pub fn library_version() -> &'static str {
    // SAFETY: a static NUL-terminated string.
    unsafe { core::ffi::CStr::from_ptr(sys::cachekit_version_string()) }
        .to_str()
        .unwrap_or("?")
}
