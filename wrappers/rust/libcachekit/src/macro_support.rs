//! The runtime that `#[cached]` expands to (`libcachekit::__private`; not a
//! public API: its items change with the macro).
//!
//! Sync: an L1 peek on a thread-local buffer, decoded in place (the common
//! hit), else `cachekit_cache_get_or_load` (L2, then one load per key across
//! threads). Async: the same peek on the executor's thread, then a per-key
//! flight in Rust whose leader reads and writes L2 off the executor (see
//! `flight` and `blocking`).
mod blocking;
mod default_cache;
mod flight;
mod modes;
mod peek;

#[doc(hidden)]
pub mod __private {
    pub use super::default_cache::default_cache;
    pub use super::modes::{Mode, OkOnly, Plain};
    pub use super::{assert_cacheable, cached_async, cached_sync, key, key_arg};
}

use crate::{decode_value, encode_value, interop_key, Cache, Error};
use modes::Mode;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::future::Future;
use std::time::Duration;

/// Compile-time check that the cached value type round-trips through serde.
pub fn assert_cacheable<T: Serialize + DeserializeOwned>() {}

/// Compile-time check of one key argument (its span points at the parameter).
#[inline(always)]
pub fn key_arg<T: Serialize + ?Sized>(v: &T) -> &T {
    v
}

/// The interop key of the call.
#[inline]
pub fn key<A: Serialize + ?Sized>(ns: &str, op: &str, args: &A) -> Result<String, Error> {
    interop_key(ns, op, args)
}

/// The bytes to store for a return value: `None` when nothing of it is
/// cached (an `Err`) or it does not encode.
fn encoded<M: Mode<R>, R>(r: &R) -> Option<Vec<u8>> {
    M::cacheable(r).and_then(|v| encode_value(v).ok())
}

/// Why the loader handed no bytes to the C call: its value is not cached
/// (an `Err`, or a value that would not encode).
struct NotCached;

/// A sync `#[cached]` call. Cache trouble never fails the call: without a
/// cache or a key the function just runs (fail-open).
pub fn cached_sync<M, R, F>(
    cache: Option<&Cache>,
    ns: &str,
    key: Result<String, Error>,
    ttl: Option<Duration>,
    compute: F,
) -> R
where
    M: Mode<R>,
    F: FnOnce() -> R,
{
    let (Some(cache), Ok(key)) = (cache, key) else {
        return compute();
    };
    if let Some(Ok(value)) = peek::peek_with(cache, ns, &key, decode_value::<M::Value>) {
        return M::from_cached(value);
    }
    let mut compute = Some(compute);
    let mut fresh: Option<R> = None;
    let got = cache.get_or_load_bytes(ns, &key, ttl, || {
        let r = (compute.take().expect("the loader runs once"))();
        let bytes = encoded::<M, R>(&r);
        fresh = Some(r);
        bytes.ok_or(NotCached)
    });
    if let Some(r) = fresh {
        return r; // this caller ran the function (cached or not)
    }
    if let Ok(bytes) = got {
        if let Ok(value) = decode_value::<M::Value>(&bytes) {
            return M::from_cached(value);
        }
    }
    // A stored value that does not decode as this type, another caller's
    // failed load, or the cache's own error: compute here, and replace a
    // bad value.
    let r = (compute.take().expect("the loader did not run"))();
    if let Some(bytes) = encoded::<M, R>(&r) {
        let _ = cache.set_bytes(ns, &key, &bytes, ttl);
    }
    r
}

/// An async `#[cached]` call: the executor's thread does the L1 peek only;
/// concurrent callers of one key await one flight, whose leader reads and
/// writes L2 on a blocking thread.
pub async fn cached_async<M, R, Fut>(
    cache: Option<&Cache>,
    ns: &str,
    key: Result<String, Error>,
    ttl: Option<Duration>,
    compute: Fut,
) -> R
where
    M: Mode<R>,
    Fut: Future<Output = R>,
{
    let (Some(cache), Ok(key)) = (cache, key) else {
        return compute.await;
    };
    if let Some(Ok(value)) = peek::peek_with(cache, ns, &key, decode_value::<M::Value>) {
        return M::from_cached(value);
    }
    loop {
        let leader = match flight::join(cache, &key) {
            flight::Role::Leader(leader) => leader,
            flight::Role::Waiter(wait) => match wait.await {
                Some(bytes) => match decode_value::<M::Value>(&bytes) {
                    Ok(value) => return M::from_cached(value),
                    Err(_) => continue, // another type under this key: lead a flight of our own
                },
                None => continue, // the leader's value was not cached: try again
            },
        };
        let read = blocking::run(|| cache.get_bytes(ns, &key)).await;
        if let Some(Ok(Some(bytes))) = read {
            if let Ok(value) = decode_value::<M::Value>(&bytes) {
                leader.publish(bytes);
                return M::from_cached(value);
            }
        }
        let r = compute.await;
        if let Some(bytes) = encoded::<M, R>(&r) {
            let bytes = leader.publish(bytes);
            // Stored before the flight ends, so a caller after it finds the value.
            let _ = blocking::run(|| cache.set_bytes(ns, &key, &bytes, ttl)).await;
        }
        drop(leader);
        return r;
    }
}
