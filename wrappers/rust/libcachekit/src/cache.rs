//! `Cache`: the handle (L1 -> L2 -> load, single-flight), raw bytes and typed.
use crate::ffi::{call, call_found, with_cstr, with_local_buf, with_opt_cstr, Buf};
use crate::load::{get_or_load_raw, LoadError};
use crate::values::{decode_value, encode_value};
use crate::{CacheBuilder, Error};
use core::ffi::{c_char, c_int, c_void};
use core::ptr::{null_mut, NonNull};
use libcachekit_sys as sys;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::cell::RefCell;
use std::sync::Arc;
use std::time::Duration;

/// A cache handle. Every method may be called from many threads at once.
/// Clones share one C handle, freed when the last clone is dropped (an async
/// call's L2 work off the executor holds a clone, so it never outlives it).
#[derive(Clone)]
pub struct Cache {
    handle: Arc<Handle>,
    swr: bool,
}

/// The owned C handle.
struct Handle(NonNull<sys::cachekit_cache>);

// SAFETY: the C contract makes every call on a cachekit_cache thread-safe
// except cachekit_cache_free, which only Drop calls (with exclusive access:
// the last Arc is gone).
unsafe impl Send for Handle {}
unsafe impl Sync for Handle {}

impl Drop for Handle {
    fn drop(&mut self) {
        // SAFETY: we own the handle and nothing else uses it now.
        unsafe { sys::cachekit_cache_free(self.0.as_ptr()) }
    }
}

impl core::fmt::Debug for Cache {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Cache").field("ptr", &self.handle.0).finish()
    }
}

/// A TTL argument: `None` = the cache's default TTL, zero = no expiry.
pub(crate) fn ttl_seconds(ttl: Option<Duration>) -> f64 {
    ttl.map_or(sys::CACHEKIT_TTL_DEFAULT, |d| d.as_secs_f64())
}

/// The C lookups that fill a buffer and a `cachekit_lookup` (one signature).
type LookupFn = unsafe extern "C" fn(
    *mut sys::cachekit_cache,
    *mut sys::cachekit_buf,
    *mut sys::cachekit_lookup,
    *const c_char,
    *const c_void,
    usize,
    *mut sys::cachekit_error,
) -> c_int;

thread_local! {
    // One reusable output buffer per thread for lookups (no loader runs
    // during them, so no call on this thread can need it at the same time).
    static LOOKUP_BUF: RefCell<Buf> = RefCell::new(Buf::new());
}

impl Cache {
    /// A builder with the defaults: L2 from the environment or the per-user
    /// file directory, interop format.
    pub fn builder() -> CacheBuilder {
        CacheBuilder::default()
    }

    pub(crate) fn from_raw(ptr: NonNull<sys::cachekit_cache>, swr: bool) -> Cache {
        Cache {
            handle: Arc::new(Handle(ptr)),
            swr,
        }
    }

    /// Whether stale-while-revalidate was turned on by the builder.
    pub fn swr(&self) -> bool {
        self.swr
    }

    /// The C handle, for code that calls libcachekit-sys directly. It stays
    /// valid while this `Cache` (or a clone) lives; never free it.
    pub fn as_ptr(&self) -> *mut sys::cachekit_cache {
        self.handle.0.as_ptr()
    }

    /// The stored payload under `key` (a MessagePack document), or `None` on a miss.
    pub fn get_bytes(&self, ns: &str, key: &str) -> Result<Option<Vec<u8>>, Error> {
        self.get_with(ns, key, |bytes| bytes.to_vec())
    }

    /// Look up `key` and hand the payload to `f` without copying it first.
    pub(crate) fn get_with<R>(&self, ns: &str, key: &str, f: impl FnOnce(&[u8]) -> R) -> Result<Option<R>, Error> {
        with_local_buf(&LOOKUP_BUF, |buf| {
            let found = self.lookup_into(sys::cachekit_cache_get_ex, buf, null_mut(), ns, key)?;
            Ok(found.then(|| f(buf.bytes())))
        })
    }

    /// One call of a C lookup (`get`, `get_for_load`: one signature) into
    /// `buf` and `info` (NULL: not wanted); whether it found the key.
    fn lookup_into(
        &self,
        lookup: LookupFn,
        buf: &mut Buf,
        info: *mut sys::cachekit_lookup,
        ns: &str,
        key: &str,
    ) -> Result<bool, Error> {
        with_cstr("namespace", ns, |ns| {
            // SAFETY: a sys lookup; live handle, string, key slice, buffer,
            // and `info` NULL or a live lookup struct.
            call_found(|err| unsafe {
                lookup(
                    self.as_ptr(),
                    buf.as_mut_ptr(),
                    info,
                    ns,
                    key.as_ptr().cast(),
                    key.len(),
                    err,
                )
            })
        })
    }

    /// Store a payload (one MessagePack document) in both tiers. `ttl`: `None`
    /// = the cache's default, zero = no expiry.
    pub fn set_bytes(&self, ns: &str, key: &str, value: &[u8], ttl: Option<Duration>) -> Result<(), Error> {
        with_cstr("namespace", ns, |ns| {
            // SAFETY: live handle, string and slices.
            call(|err| unsafe {
                sys::cachekit_cache_put_ex(
                    self.as_ptr(),
                    ns,
                    key.as_ptr().cast(),
                    key.len(),
                    value.as_ptr().cast(),
                    value.len(),
                    ttl_seconds(ttl),
                    err,
                )
            })
        })
    }

    /// The payload under `key`, or the one `load` computes: once per key across
    /// concurrent callers in this process (the others wait and share it). A
    /// loader's `Err` is returned as `LoadError::Loader` and nothing is cached
    /// (waiting callers get `Error::UserError`); a panic in it is resumed here
    /// after the C call returned.
    pub fn get_or_load_bytes<F, E>(
        &self,
        ns: &str,
        key: &str,
        ttl: Option<Duration>,
        load: F,
    ) -> Result<Vec<u8>, LoadError<E>>
    where
        F: FnOnce() -> Result<Vec<u8>, E>,
    {
        get_or_load_raw(self, ns, key, ttl, || load().map_err(LoadError::Loader))
    }

    /// The typed value under `key` (decoded with rmp-serde), or `None`.
    pub fn get<T: DeserializeOwned>(&self, ns: &str, key: &str) -> Result<Option<T>, Error> {
        self.get_with(ns, key, decode_value)?.transpose()
    }

    /// Store a typed value (interop value profile, see `encode_value`).
    pub fn set<T: Serialize + ?Sized>(
        &self,
        ns: &str,
        key: &str,
        value: &T,
        ttl: Option<Duration>,
    ) -> Result<(), Error> {
        self.set_bytes(ns, key, &encode_value(value)?, ttl)
    }

    /// The typed value under `key`, or the one `load` computes (single-flight,
    /// as `get_or_load_bytes`). A stored value that does not decode as `T`
    /// (another program's type, an older `T`) is a miss: `load` runs and its
    /// value replaces the stored one, so the next call is a hit again.
    pub fn get_or_load<T, F, E>(&self, ns: &str, key: &str, ttl: Option<Duration>, load: F) -> Result<T, LoadError<E>>
    where
        T: Serialize + DeserializeOwned,
        F: FnOnce() -> Result<T, E>,
    {
        let mut load = Some(load);
        let mut fresh: Option<T> = None;
        let bytes = get_or_load_raw(self, ns, key, ttl, || {
            let value = (load.take().expect("the loader runs once"))().map_err(LoadError::Loader)?;
            let bytes = encode_value(&value).map_err(LoadError::Cache)?;
            fresh = Some(value);
            Ok(bytes)
        })?;
        if let Some(value) = fresh {
            return Ok(value); // this caller computed it
        }
        match (decode_value(&bytes), load.take()) {
            (Ok(value), _) => Ok(value),
            (Err(_), Some(load)) => {
                let value = load().map_err(LoadError::Loader)?;
                // Best effort: the caller has its value whether or not it lands.
                let _ = self.set(ns, key, &value, ttl);
                Ok(value)
            }
            // An SWR refresh whose loader failed handed back the stale value.
            (Err(e), None) => Err(LoadError::Cache(e)),
        }
    }

    /// Remove `key` from both tiers (cachekit_cache_invalidate).
    pub fn delete(&self, ns: &str, key: &str) -> Result<(), Error> {
        with_cstr("namespace", ns, |ns| {
            // SAFETY: live handle, string and key slice.
            call(|err| unsafe {
                sys::cachekit_cache_invalidate_ex(self.as_ptr(), ns, key.as_ptr().cast(), key.len(), err)
            })
        })
    }

    /// Remove every key of namespace `ns` (L1, and L2 where the backend can
    /// list keys: Redis and memory; the file backend answers InvalidArgument).
    pub fn invalidate_namespace(&self, ns: &str) -> Result<(), Error> {
        with_cstr("namespace", ns, |ns| {
            // SAFETY: live handle and string.
            call(|err| unsafe { sys::cachekit_cache_invalidate_namespace_ex(self.as_ptr(), ns, err) })
        })
    }

    /// Remove every key of this cache (its own key space only).
    pub fn clear(&self) -> Result<(), Error> {
        // SAFETY: live handle.
        call(|err| unsafe { sys::cachekit_cache_clear_ex(self.as_ptr(), err) })
    }

    /// Counters of all namespaces (`None`) or of one.
    pub fn stats(&self, ns: Option<&str>) -> Result<Stats, Error> {
        let mut s = sys::cachekit_cache_stats {
            struct_size: core::mem::size_of::<sys::cachekit_cache_stats>(),
            ..Default::default()
        };
        with_opt_cstr("namespace", ns, |ns| {
            // SAFETY: live handle, struct of the header's size, string or NULL.
            call(|err| unsafe { sys::cachekit_cache_stats_get_ex(self.as_ptr(), &mut s, ns, err) })
        })?;
        Ok(Stats::from(s))
    }

    /// The L2's health as the core saw it, without a round trip (kept out of
    /// `Stats`, which is `Copy`, because it holds the error text).
    pub fn health(&self) -> Result<Health, Error> {
        let mut h = sys::cachekit_health::INIT;
        // SAFETY: live handle, struct of the header's size.
        call(|err| unsafe { sys::cachekit_cache_health_get_ex(self.as_ptr(), &mut h, err) })?;
        Ok(Health::from(&h))
    }

    /// A lookup that also reports where the value came from and, on an SWR
    /// stale hit, the refresh claim this caller was handed (exactly one caller
    /// per stale period): compute a new value and `put_refresh` it, or
    /// `abandon_refresh`.
    pub fn get_bytes_with_info(&self, ns: &str, key: &str) -> Result<Option<(Vec<u8>, Lookup)>, Error> {
        let mut out = Buf::new();
        let mut info = sys::cachekit_lookup::INIT;
        let found = self.lookup_into(sys::cachekit_cache_get_ex, &mut out, &mut info, ns, key)?;
        Ok(found.then(|| (out.to_vec(), Lookup::from(info))))
    }

    /// A lookup for a caller that computes a missing value on its own
    /// runtime (an async task), where `get_or_load_bytes` cannot run it
    /// (`cachekit_cache_get_for_load`). A miss carries a load claim: compute
    /// the value, then land it with `put_refresh(claim)` (stored only if the
    /// key, its namespace or the cache was not put or invalidated on this
    /// handle meanwhile), or release it with `abandon_refresh` when the
    /// computation failed or was cancelled. A newer claim of the key replaces
    /// an older one (the newest load lands): dedupe concurrent loads yourself.
    pub fn get_bytes_for_load(&self, ns: &str, key: &str) -> Result<ForLoad, Error> {
        let mut out = Buf::new();
        let mut info = sys::cachekit_lookup::INIT;
        let found = self.lookup_into(sys::cachekit_cache_get_for_load_ex, &mut out, &mut info, ns, key)?;
        Ok(if found {
            ForLoad::Hit(out.to_vec())
        } else {
            ForLoad::Miss(info.refresh_claim)
        })
    }

    /// Land an SWR refresh, or a load claimed by `get_bytes_for_load`, under
    /// `claim`. `Ok(false)` when the claim lost to an invalidation or a newer
    /// write (nothing stored).
    pub fn put_refresh(
        &self,
        ns: &str,
        key: &str,
        value: &[u8],
        ttl: Option<Duration>,
        claim: u64,
    ) -> Result<bool, Error> {
        with_cstr("namespace", ns, |ns| {
            // SAFETY: live handle, string and slices.
            call_found(|err| unsafe {
                sys::cachekit_cache_put_refresh_ex(
                    self.as_ptr(),
                    ns,
                    key.as_ptr().cast(),
                    key.len(),
                    value.as_ptr().cast(),
                    value.len(),
                    ttl_seconds(ttl),
                    claim,
                    err,
                )
            })
        })
    }

    /// Give up an SWR refresh claim, so a later stale hit may claim again, or
    /// a load claim of `get_bytes_for_load` (counted in `load_errors`).
    pub fn abandon_refresh(&self, key: &str, claim: u64) -> Result<(), Error> {
        // SAFETY: live handle and key slice.
        call_found(|err| unsafe {
            sys::cachekit_cache_abandon_refresh_ex(self.as_ptr(), key.as_ptr().cast(), key.len(), claim, err)
        })
        .map(|_| ())
    }

    /// The metrics in the Prometheus text format.
    pub fn metrics_text(&self) -> Result<String, Error> {
        let mut out = Buf::new();
        // SAFETY: live handle and buffer.
        call(|err| unsafe { sys::cachekit_cache_metrics_text_ex(self.as_ptr(), out.as_mut_ptr(), err) })?;
        Ok(out.to_text())
    }
}

/// What `Cache::get_bytes_for_load` found: the stored payload, or a miss
/// with the load claim to land (`put_refresh`) or release (`abandon_refresh`).
#[derive(Debug, Clone, PartialEq)]
pub enum ForLoad {
    /// The stored payload (a MessagePack document).
    Hit(Vec<u8>),
    /// A miss, with this caller's load claim.
    Miss(u64),
}

/// Where a value came from (cachekit_lookup).
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct Lookup {
    /// CACHEKIT_SOURCE_*: 1 L1, 2 L2, 3 loaded by this caller, 4 another caller's load.
    pub source: i32,
    /// The SWR refresh claim handed to this caller, if any.
    pub refresh_claim: Option<u64>,
    /// Age of an L1 hit in seconds (None otherwise).
    pub age: Option<f64>,
}

impl From<sys::cachekit_lookup> for Lookup {
    fn from(l: sys::cachekit_lookup) -> Lookup {
        Lookup {
            source: l.source,
            refresh_claim: (l.refresh != 0).then_some(l.refresh_claim),
            age: (l.age_seconds >= 0.0).then_some(l.age_seconds),
        }
    }
}

/// What the L2's calls have seen (cachekit_health.state).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum HealthState {
    Ok,
    Down,
    BreakerOpen,
}

/// The L1 coherence feed's state (cachekit_health.coherence).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CoherenceState {
    Off,
    Live,
    Suspended,
}

/// A cache's L2 health (cachekit_health); times are Unix seconds.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Health {
    pub state: HealthState,
    pub coherence: CoherenceState,
    /// The URL without password or query; "" without L2.
    pub backend: String,
    pub last_error: Option<String>,
    pub last_error_at: Option<f64>,
    /// When it went down or came back.
    pub since: Option<f64>,
    pub consecutive_failures: u64,
}

fn c_text(chars: &[core::ffi::c_char]) -> String {
    let bytes: Vec<u8> = chars.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

impl From<&sys::cachekit_health> for Health {
    fn from(h: &sys::cachekit_health) -> Health {
        let last_error = c_text(&h.last_error);
        Health {
            state: match h.state {
                sys::CACHEKIT_HEALTH_DOWN => HealthState::Down,
                sys::CACHEKIT_HEALTH_BREAKER_OPEN => HealthState::BreakerOpen,
                _ => HealthState::Ok,
            },
            coherence: match h.coherence {
                sys::CACHEKIT_COHERENCE_LIVE => CoherenceState::Live,
                sys::CACHEKIT_COHERENCE_SUSPENDED => CoherenceState::Suspended,
                _ => CoherenceState::Off,
            },
            backend: c_text(&h.backend),
            last_error: (!last_error.is_empty()).then_some(last_error),
            last_error_at: (h.last_error_at != 0.0).then_some(h.last_error_at),
            since: (h.since != 0.0).then_some(h.since),
            consecutive_failures: h.consecutive_failures,
        }
    }
}

/// Counters of a cache (cachekit_cache_stats).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
#[non_exhaustive]
pub struct Stats {
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
    /// 0 closed, 1 open, 2 half-open.
    pub breaker_state: i32,
}

impl From<sys::cachekit_cache_stats> for Stats {
    fn from(s: sys::cachekit_cache_stats) -> Stats {
        Stats {
            l1_hits: s.l1_hits,
            l2_hits: s.l2_hits,
            misses: s.misses,
            stores: s.stores,
            loads: s.loads,
            load_errors: s.load_errors,
            waits: s.waits,
            stale_served: s.stale_served,
            refreshes: s.refreshes,
            dropped_fills: s.dropped_fills,
            too_large: s.too_large,
            invalidations: s.invalidations,
            backend_errors: s.backend_errors,
            timeouts: s.timeouts,
            corrupt: s.corrupt,
            tampered: s.tampered,
            wrong_key: s.wrong_key,
            downgrade: s.downgrade,
            serializer_mismatch: s.serializer_mismatch,
            l2_latency_count: s.l2_latency_count,
            l2_latency_sum_ms: s.l2_latency_sum_ms,
            l1_entries: s.l1_entries,
            l1_bytes: s.l1_bytes,
            l1_evictions: s.l1_evictions,
            l1_expirations: s.l1_expirations,
            breaker_state: s.breaker_state,
        }
    }
}
