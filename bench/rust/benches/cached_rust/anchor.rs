//! R1's anchor: the same L1 hit through the C API called directly, as a C
//! program would: the argument array [id] written by hand, the key built by
//! cachekit_key_interop_ex, read by cachekit_cache_get_ex (reused buffers),
//! the payload decoded by the same decoder.
use crate::payload::User;
use libcachekit::Cache;
use libcachekit_sys as sys;
use std::ffi::CString;
use std::ptr::null_mut;

pub struct CApiHit {
    cache: *mut sys::cachekit_cache,
    ns: CString,
    op: CString,
    key: sys::cachekit_buf,
    out: sys::cachekit_buf,
    err: sys::cachekit_error,
}

impl CApiHit {
    pub fn new(cache: &Cache, ns: &str, op: &str) -> CApiHit {
        CApiHit {
            cache: cache.as_ptr(),
            ns: CString::new(ns).unwrap(),
            op: CString::new(op).unwrap(),
            key: sys::cachekit_buf::INIT,
            out: sys::cachekit_buf::INIT,
            err: sys::cachekit_error::INIT,
        }
    }

    pub fn get(&mut self, id: u64) -> User {
        let mut buf = [0u8; 10];
        let args = array_of_one_uint(&mut buf, id);
        // SAFETY: live cache handle (borrowed for the benchmark's duration), C strings, our buffers.
        unsafe {
            let rc = sys::cachekit_key_interop_ex(
                &mut self.key,
                null_mut(),
                self.ns.as_ptr(),
                self.op.as_ptr(),
                args.as_ptr().cast(),
                args.len(),
                &mut self.err,
            );
            assert_eq!(rc, sys::CACHEKIT_OK);
            let rc = sys::cachekit_cache_get_ex(
                self.cache,
                &mut self.out,
                null_mut(),
                self.ns.as_ptr(),
                self.key.ptr.cast(),
                self.key.size,
                &mut self.err,
            );
            assert_eq!(rc, sys::CACHEKIT_OK);
            libcachekit::decode_value(std::slice::from_raw_parts(self.out.ptr.cast(), self.out.size)).unwrap()
        }
    }
}

/// [id] as MessagePack, the integer in its shortest form (the canonical one).
fn array_of_one_uint(buf: &mut [u8; 10], id: u64) -> &[u8] {
    buf[0] = 0x91; // fixarray(1)
    let be = id.to_be_bytes();
    let (marker, width) = match id {
        0..=0x7f => (None, 1),
        0x80..=0xff => (Some(0xcc), 1),
        0x100..=0xffff => (Some(0xcd), 2),
        0x1_0000..=0xffff_ffff => (Some(0xce), 4),
        _ => (Some(0xcf), 8),
    };
    let mut len = 1;
    if let Some(m) = marker {
        buf[len] = m;
        len += 1;
    }
    buf[len..len + width].copy_from_slice(&be[8 - width..]);
    &buf[..len + width]
}

impl Drop for CApiHit {
    fn drop(&mut self) {
        // SAFETY: buffers the library filled.
        unsafe {
            sys::cachekit_buf_dispose(&mut self.key);
            sys::cachekit_buf_dispose(&mut self.out);
        }
    }
}
