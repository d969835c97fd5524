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

pub use builder::{CacheBuilder, Format, L1Admission};
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
