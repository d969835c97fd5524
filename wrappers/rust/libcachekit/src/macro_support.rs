//! The runtime that `#[cached]` expands to (`libcachekit::__private`; not a
//! public API: its items change with the macro).
//!
//! Sync: an L1 peek on a thread-local buffer, decoded in place (the common
//! hit), else `cachekit_cache_get_or_load` (L2, then one load per key across
//! threads). Async: the same peek on the executor's thread, then a per-key
//! flight in Rust whose leader reads and writes L2 off the executor (see
//! `flight` and `blocking`): its read (`cachekit_cache_get_for_load`) takes
//! the core's load claim on a miss, and the value lands under that claim, so
//! a put or invalidation made on the cache while the future runs keeps it
//! out, as for a sync load.
mod blocking;
mod default_cache;
mod flight;
mod key;
mod modes;
mod peek;
mod site;

#[doc(hidden)]
pub mod __private {
    pub use super::default_cache::default_cache;
    pub use super::key::key;
    pub use super::modes::{Mode, OkOnly, Plain};
    pub use super::site::Site;
    pub use super::{assert_cacheable, cached_async, cached_sync, key_arg};
}

use crate::ffi::{with_local_buf, Buf};
use crate::load::get_or_load_with;
use crate::{decode_value, encode_value, Cache, Error, ForLoad, LoadError};
use modes::Mode;
use serde::de::DeserializeOwned;
use serde::Serialize;
use site::Site;
use std::cell::{Cell, RefCell};
use std::future::Future;
use std::time::Duration;

thread_local! {
    // The sync path's lookup buffer, reused (a loader's nested call on this
    // thread takes a fresh one).
    static LOAD_BUF: RefCell<Buf> = RefCell::new(Buf::new());
}

/// Compile-time check that the cached value type round-trips through serde.
pub fn assert_cacheable<T: Serialize + DeserializeOwned>() {}

/// Compile-time check of one key argument (its span points at the parameter).
#[inline(always)]
pub fn key_arg<T: Serialize + ?Sized>(v: &T) -> &T {
    v
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
    site: &Site,
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
    // An SWR cache's stale hit hands its refresh claim to get_or_load only.
    if !cache.swr() {
        if let Some(Ok(value)) = peek::peek_with(cache, site, &key, decode_value::<M::Value>) {
            return M::from_cached(value);
        }
    }
    let mut compute = Some(compute);
    let mut fresh: Option<R> = None;
    let ran = Cell::new(false);
    let loader = || {
        ran.set(true);
        let r = (compute.take().expect("the loader runs once"))();
        let bytes = encoded::<M, R>(&r);
        fresh = Some(r);
        bytes.ok_or(LoadError::Loader(NotCached))
    };
    // Decoded in place from a reused buffer, unless this caller computed it.
    let decode = |bytes: &[u8]| (!ran.get()).then(|| decode_value::<M::Value>(bytes));
    let got = with_local_buf(&LOAD_BUF, |buf| {
        let got = get_or_load_with(cache, site.ns, &key, ttl, loader, buf, decode);
        buf.shrink_if_large();
        got
    });
    if let Some(r) = fresh {
        return r; // this caller ran the function (cached or not)
    }
    if let Ok(Some(Ok(value))) = got {
        return M::from_cached(value);
    }
    // A stored value that does not decode as this type, another caller's
    // failed load, or the cache's own error: compute here, and replace a
    // bad value.
    let r = (compute.take().expect("the loader did not run"))();
    if let Some(bytes) = encoded::<M, R>(&r) {
        let _ = cache.set_bytes(site.ns, &key, &bytes, ttl);
    }
    r
}

/// A claim of this caller (a load claim of the async leader, or the SWR
/// refresh claim of a stale hit), owned so it can travel to a blocking
/// thread: abandoned when dropped still held (a dropped future, an `Err`, a
/// value that does not encode, a read whose future was dropped meanwhile).
struct Claim {
    cache: Cache,
    key: String,
    id: Option<u64>,
}

impl Claim {
    /// Store `bytes` under the claim, or by a plain write without one (a
    /// failed read, another type's value under this key: as the sync path).
    fn land(mut self, ns: &str, bytes: &[u8], ttl: Option<Duration>) {
        let _ = match self.id.take() {
            Some(id) => self.cache.put_refresh(ns, &self.key, bytes, ttl, id).map(|_| ()),
            None => self.cache.set_bytes(ns, &self.key, bytes, ttl),
        };
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            let _ = self.cache.abandon_refresh(&self.key, id); // in memory only: no I/O
        }
    }
}

/// The leader's L2 read (on a blocking thread): the stored bytes, or a miss
/// with the load claim the core took for it (none after a failed read).
fn read_for_load(cache: Cache, ns: &str, key: String) -> Result<Vec<u8>, Claim> {
    let id = match cache.get_bytes_for_load(ns, &key) {
        Ok(ForLoad::Hit(bytes)) => return Ok(bytes),
        Ok(ForLoad::Miss(id)) => Some(id),
        Err(_) => None,
    };
    Err(Claim { cache, key, id })
}

/// Land `bytes` under `claim` off the executor and await it, so a caller
/// after this one finds the value. Dropped while it runs, the write still
/// completes on its blocking thread.
async fn land(claim: Claim, ns: &'static str, bytes: std::sync::Arc<Vec<u8>>, ttl: Option<Duration>) {
    let _ = blocking::run(move || claim.land(ns, &bytes, ttl)).await;
}

/// An async `#[cached]` call: the executor's thread does the L1 peek only;
/// concurrent callers of one key await one flight, whose leader reads and
/// writes L2 on a blocking thread.
pub async fn cached_async<M, R, Fut>(
    cache: Option<&Cache>,
    site: &Site,
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
    if cache.swr() {
        match peek::peek_swr(cache, site, &key, decode_value::<M::Value>) {
            Some((Ok(value), None)) => return M::from_cached(value),
            Some((Ok(stale), Some(id))) => {
                return refresh::<M, R, Fut>(cache, site, key, ttl, id, stale, compute).await
            }
            Some((Err(_), Some(id))) => drop(Claim {
                cache: cache.clone(),
                key: key.clone(),
                id: Some(id),
            }),
            _ => {}
        }
    } else if let Some(Ok(value)) = peek::peek_with(cache, site, &key, decode_value::<M::Value>) {
        return M::from_cached(value);
    }
    loop {
        let leader = match flight::join(cache, &key) {
            flight::Role::Leader(leader) => leader,
            // An async wait: a dropped future just leaves the waker list.
            flight::Role::Waiter(wait) => match wait.await {
                Some(bytes) => match decode_value::<M::Value>(&bytes) {
                    Ok(value) => return M::from_cached(value),
                    // Another type under this key (two same-named functions in
                    // one namespace, say). Rejoining would meet the same
                    // settled flight at once, without yielding, until its
                    // leader ends (issue 25); so compute here, as the sync
                    // path does, and replace the value by a plain write.
                    Err(_) => return compute_and_replace::<M, R, Fut>(cache, site.ns, key, ttl, compute).await,
                },
                // The leader's flight ended without a value and left the map
                // first, so this joins a new flight (or leads one).
                None => continue,
            },
        };
        let (c, k, ns) = (cache.clone(), key.clone(), site.ns);
        let claim = match blocking::run(move || read_for_load(c, ns, k)).await {
            Some(Ok(bytes)) => match decode_value::<M::Value>(&bytes) {
                Ok(value) => {
                    leader.publish(bytes);
                    return M::from_cached(value);
                }
                Err(_) => Claim {
                    cache: cache.clone(),
                    key,
                    id: None,
                }, // replaced by a plain write
            },
            Some(Err(claim)) => claim,
            None => Claim {
                cache: cache.clone(),
                key,
                id: None,
            }, // the read panicked or never ran
        };
        let r = compute.await;
        if let Some(bytes) = encoded::<M, R>(&r) {
            land(claim, ns, leader.publish(bytes), ttl).await;
        }
        drop(leader);
        return r;
    }
}

/// A waiter whose leader's bytes are not its type: run the function and
/// store its value with a plain write off the executor (no load claim: the
/// leader holds the key's).
async fn compute_and_replace<M, R, Fut>(
    cache: &Cache,
    ns: &'static str,
    key: String,
    ttl: Option<Duration>,
    compute: Fut,
) -> R
where
    M: Mode<R>,
    Fut: Future<Output = R>,
{
    let r = compute.await;
    if let Some(bytes) = encoded::<M, R>(&r) {
        let claim = Claim {
            cache: cache.clone(),
            key,
            id: None,
        };
        land(claim, ns, std::sync::Arc::new(bytes), ttl).await;
    }
    r
}

/// This caller got a stale L1 hit and its refresh claim: it runs the
/// function now, on the executor as its own future (the other callers keep
/// getting the stale value meanwhile), lands the value under the claim off
/// the executor and returns it. A result that is not cached (an `Err`, or a
/// value that does not encode) releases the claim and returns the stale
/// value, as the sync path does; a dropped future releases it too.
async fn refresh<M, R, Fut>(
    cache: &Cache,
    site: &Site,
    key: String,
    ttl: Option<Duration>,
    id: u64,
    stale: M::Value,
    compute: Fut,
) -> R
where
    M: Mode<R>,
    Fut: Future<Output = R>,
{
    let claim = Claim {
        cache: cache.clone(),
        key,
        id: Some(id),
    };
    let ns = site.ns;
    let r = compute.await;
    match encoded::<M, R>(&r) {
        Some(bytes) => {
            land(claim, ns, std::sync::Arc::new(bytes), ttl).await;
            r
        }
        None => {
            drop(claim);
            M::from_cached(stale)
        }
    }
}
