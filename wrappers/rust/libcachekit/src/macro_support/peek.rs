//! The L1-only lookup (cachekit_cache_peek): never touches L2, so it may run
//! on an async executor's thread.
use super::site::Site;
use crate::ffi::{with_local_buf, Buf};
use crate::Cache;
use core::ptr::null_mut;
use libcachekit_sys as sys;
use std::cell::RefCell;

thread_local! {
    // Reused across calls; `f` (a decode) makes no cache call meanwhile.
    static PEEK_BUF: RefCell<Buf> = RefCell::new(Buf::new());
}

/// `f` applied to the L1 hit's payload, or `None` on an L1 miss (or any
/// error: the caller's next step, a full lookup, reports it).
#[inline]
pub(crate) fn peek_with<R>(cache: &Cache, site: &Site, key: &str, f: impl FnOnce(&[u8]) -> R) -> Option<R> {
    peek_into(cache, site, key, null_mut(), f)
}

/// `peek_with` on an SWR cache: also the refresh claim of a stale hit (this
/// caller's to land with `put_refresh` or release with `abandon_refresh`).
pub(crate) fn peek_swr<R>(
    cache: &Cache,
    site: &Site,
    key: &str,
    f: impl FnOnce(&[u8]) -> R,
) -> Option<(R, Option<u64>)> {
    let mut info = sys::cachekit_lookup::INIT;
    let found = peek_into(cache, site, key, &mut info, f)?;
    Some((found, (info.refresh != 0).then_some(info.refresh_claim)))
}

#[inline]
fn peek_into<R>(
    cache: &Cache,
    site: &Site,
    key: &str,
    info: *mut sys::cachekit_lookup,
    f: impl FnOnce(&[u8]) -> R,
) -> Option<R> {
    let lookup = |buf: &mut Buf| -> Option<R> {
        // SAFETY: live handle, 'static C string, key slice, our buffer, and
        // `info` NULL or a live lookup struct; a NULL error slot is allowed.
        let rc = unsafe {
            sys::cachekit_cache_peek_ex(
                cache.as_ptr(),
                buf.as_mut_ptr(),
                info,
                site.ns_c.as_ptr(),
                key.as_ptr().cast(),
                key.len(),
                null_mut(),
            )
        };
        let found = (rc == sys::CACHEKIT_OK).then(|| f(buf.bytes()));
        buf.shrink_if_large();
        found
    };
    with_local_buf(&PEEK_BUF, lookup)
}
