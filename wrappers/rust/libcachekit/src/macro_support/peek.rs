//! The L1-only lookup (cachekit_cache_peek): never touches L2, so it may run
//! on an async executor's thread.
use crate::ffi::{call_found, with_cstr, Buf};
use crate::Cache;
use core::ptr::null_mut;
use libcachekit_sys as sys;
use std::cell::RefCell;

thread_local! {
    // Reused across calls; `f` (a decode) makes no cache call meanwhile.
    static PEEK_BUF: RefCell<Buf> = RefCell::new(Buf::new());
}

/// `f` applied to the L1 hit's payload, or `None` on an L1 miss or error.
#[inline]
pub(crate) fn peek_with<R>(cache: &Cache, ns: &str, key: &str, f: impl FnOnce(&[u8]) -> R) -> Option<R> {
    let lookup = |buf: &mut Buf| -> Option<R> {
        let found = with_cstr("namespace", ns, |ns| {
            // SAFETY: live handle, C string, key slice and buffer.
            call_found(|err| unsafe {
                sys::cachekit_cache_peek_ex(
                    cache.as_ptr(),
                    buf.as_mut_ptr(),
                    null_mut(),
                    ns,
                    key.as_ptr().cast(),
                    key.len(),
                    err,
                )
            })
        });
        match found {
            Ok(true) => Some(f(buf.bytes())),
            _ => None,
        }
    };
    PEEK_BUF.with(|cell| match cell.try_borrow_mut() {
        Ok(mut buf) => lookup(&mut buf),
        Err(_) => lookup(&mut Buf::new()),
    })
}
