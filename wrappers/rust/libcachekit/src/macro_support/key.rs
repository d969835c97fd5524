//! The interop key of a call, built on reused thread-local buffers (the
//! arguments' MessagePack and the C key buffer): the hit path allocates only
//! the key string. Any failure takes `interop_key`, which says why.
use super::site::Site;
use crate::ffi::Buf;
use crate::{interop_key, Error};
use core::ptr::null_mut;
use libcachekit_sys as sys;
use serde::Serialize;
use std::cell::RefCell;

struct Scratch {
    args: Vec<u8>,
    key: Buf,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch { args: Vec::with_capacity(64), key: Buf::new() });
}

pub fn key<A: Serialize + ?Sized>(site: &Site, args: &A) -> Result<String, Error> {
    let quick = SCRATCH.with(|cell| {
        let mut scratch = cell.try_borrow_mut().ok()?; // re-entered from a Serialize impl: the slow way
        let Scratch { args: buf, key } = &mut *scratch;
        buf.clear();
        rmp_serde::encode::write_named(buf, args).ok()?;
        // SAFETY: C strings of 'static life, a live slice, our buffer; a NULL
        // error slot is allowed (the slow path below reports the error).
        let rc = unsafe {
            sys::cachekit_key_interop_ex(
                key.as_mut_ptr(),
                null_mut(),
                site.ns_c.as_ptr(),
                site.op_c.as_ptr(),
                buf.as_ptr().cast(),
                buf.len(),
                null_mut(),
            )
        };
        if rc != sys::CACHEKIT_OK {
            return None;
        }
        String::from_utf8(key.bytes().to_vec()).ok()
    });
    match quick {
        Some(key) => Ok(key),
        None => interop_key(site.ns, site.op, args),
    }
}
