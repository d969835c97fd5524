//! get_or_load: the loader trampoline. The closure runs inside the C call; a
//! panic is caught there (nothing unwinds through C), the C call returns, and
//! the panic is resumed in the caller.
use crate::cache::ttl_seconds;
use crate::ffi::{call, with_cstr, Buf};
use crate::{Cache, Error};
use core::ffi::{c_int, c_void};
use core::ptr::null_mut;
use libcachekit_sys as sys;
use std::any::Any;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::time::Duration;

/// The failure of a `get_or_load`: the cache's, or the loader's own error
/// (returned to this caller only, never cached).
#[derive(Debug)]
pub enum LoadError<E> {
    Cache(Error),
    Loader(E),
}

impl<E> From<Error> for LoadError<E> {
    fn from(e: Error) -> Self {
        LoadError::Cache(e)
    }
}

impl<E: core::fmt::Display> core::fmt::Display for LoadError<E> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            LoadError::Cache(e) => write!(f, "{e}"),
            LoadError::Loader(e) => write!(f, "loader failed: {e}"),
        }
    }
}

impl<E: std::error::Error + 'static> std::error::Error for LoadError<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            LoadError::Cache(e) => Some(e),
            LoadError::Loader(e) => Some(e),
        }
    }
}

/// What the trampoline shares with its caller.
struct Payload<F, E> {
    load: Option<F>,
    failed: Option<LoadError<E>>,
    panic: Option<Box<dyn Any + Send + 'static>>,
}

/// The C loader. Never unwinds: the closure runs under catch_unwind.
unsafe extern "C" fn trampoline<F, E>(load: *mut sys::cachekit_load, payload: *mut c_void) -> c_int
where
    F: FnOnce() -> Result<Vec<u8>, LoadError<E>>,
{
    // SAFETY: payload is the &mut Payload that get_or_load_raw passed, alive
    // for the whole C call; the C library calls the loader at most once.
    let payload = &mut *(payload as *mut Payload<F, E>);
    let Some(f) = payload.load.take() else { return 1 };
    let message: &[u8] = match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(bytes)) => {
            let set = call(|err| sys::cachekit_load_set_value_ex(load, bytes.as_ptr().cast(), bytes.len(), err));
            match set {
                Ok(()) => return 0,
                Err(e) => {
                    payload.failed = Some(LoadError::Cache(e));
                    b"the loader's value was refused\0"
                }
            }
        }
        Ok(Err(e)) => {
            payload.failed = Some(e);
            b"the loader returned an error\0"
        }
        Err(panic) => {
            payload.panic = Some(panic);
            b"the loader panicked\0"
        }
    };
    sys::cachekit_load_set_error(load, message.as_ptr().cast());
    1
}

pub(crate) fn get_or_load_raw<F, E>(
    cache: &Cache,
    ns: &str,
    key: &str,
    ttl: Option<Duration>,
    load: F,
) -> Result<Vec<u8>, LoadError<E>>
where
    F: FnOnce() -> Result<Vec<u8>, LoadError<E>>,
{
    let mut payload = Payload::<F, E> {
        load: Some(load),
        failed: None,
        panic: None,
    };
    // A fresh buffer: the loader may make lookups on this thread meanwhile.
    let mut out = Buf::new();
    // Only an SWR cache can hand out a refresh claim, and only to a lookup
    // that passes `info`; others skip it (the cheaper L1 hit).
    let mut info = sys::cachekit_lookup::INIT;
    let info_ptr: *mut sys::cachekit_lookup = if cache.swr() { &mut info } else { null_mut() };
    let result = with_cstr("namespace", ns, |ns| {
        // SAFETY: live handle, string, key, buffer; the payload outlives the
        // call and the trampoline matches its type.
        call(|err| unsafe {
            sys::cachekit_cache_get_or_load_ex(
                cache.as_ptr(),
                out.as_mut_ptr(),
                info_ptr,
                ns,
                key.as_ptr().cast(),
                key.len(),
                ttl_seconds(ttl),
                Some(trampoline::<F, E>),
                &mut payload as *mut Payload<F, E> as *mut c_void,
                err,
            )
        })
    });
    if let Some(panic) = payload.panic.take() {
        resume_unwind(panic);
    }
    if let Some(failed) = payload.failed.take() {
        return Err(failed);
    }
    result?;
    if info.refresh != 0 {
        if let Some(load) = payload.load.take() {
            return refresh_inline(cache, ns, key, ttl, info.refresh_claim, load, out.to_vec());
        }
    }
    Ok(out.to_vec())
}

/// This caller holds the SWR claim of a stale hit: a synchronous API has no
/// runtime of its own to refresh on, so the claimant loads now (the other
/// callers keep getting the stale value meanwhile) and lands the refresh; on
/// a loader error the claim is released and the stale value returned.
fn refresh_inline<F, E>(
    cache: &Cache,
    ns: &str,
    key: &str,
    ttl: Option<Duration>,
    claim: u64,
    load: F,
    stale: Vec<u8>,
) -> Result<Vec<u8>, LoadError<E>>
where
    F: FnOnce() -> Result<Vec<u8>, LoadError<E>>,
{
    match catch_unwind(AssertUnwindSafe(load)) {
        Ok(Ok(fresh)) => {
            cache.put_refresh(ns, key, &fresh, ttl, claim)?;
            Ok(fresh)
        }
        Ok(Err(_)) => {
            cache.abandon_refresh(key, claim)?;
            Ok(stale)
        }
        Err(panic) => {
            let _ = cache.abandon_refresh(key, claim);
            resume_unwind(panic)
        }
    }
}
