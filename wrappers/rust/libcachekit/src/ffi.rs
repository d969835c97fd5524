//! The small unsafe helpers every call goes through: the per-call error slot,
//! the output buffer and NUL-terminated strings.
use crate::Error;
use core::ffi::{c_char, c_int};
use core::mem::MaybeUninit;
use libcachekit_sys as sys;
use std::cell::RefCell;
use std::ffi::CString;
use std::thread::LocalKey;

/// Run one `_ex` call with a fresh `cachekit_error`; a non-zero status becomes
/// the `Error` built from that same call's error.
#[inline]
pub(crate) fn call(f: impl FnOnce(*mut sys::cachekit_error) -> c_int) -> Result<(), Error> {
    let mut err = MaybeUninit::<sys::cachekit_error>::uninit();
    let p = err.as_mut_ptr();
    // SAFETY: only the header fields and the first byte of each string are
    // written here; the library writes the rest before it returns, and we read
    // the strings up to their NUL only.
    unsafe {
        (*p).struct_size = core::mem::size_of::<sys::cachekit_error>();
        (*p).code = 0;
        (*p).name[0] = 0;
        (*p).message[0] = 0;
    }
    let rc = f(p);
    if rc == sys::CACHEKIT_OK {
        return Ok(());
    }
    // SAFETY: code and message[0] were initialised above; the call rewrote
    // them (a NUL-terminated message) when it filled the slot.
    let code = unsafe { core::ptr::addr_of!((*p).code).read() };
    if code != rc {
        // The call did not fill the slot (cannot happen with 0.2+): keep the status.
        return Err(Error::from_code(rc, ""));
    }
    Err(unsafe { Error::from_c(p) })
}

/// Like `call`, but a miss (CACHEKIT_ENOTFOUND) is `Ok(false)`.
#[inline]
pub(crate) fn call_found(f: impl FnOnce(*mut sys::cachekit_error) -> c_int) -> Result<bool, Error> {
    match call(f) {
        Ok(()) => Ok(true),
        Err(Error::NotFound { .. }) => Ok(false),
        Err(e) => Err(e),
    }
}

/// A caller-owned cachekit_buf, disposed on drop.
pub(crate) struct Buf(sys::cachekit_buf);

impl Buf {
    pub(crate) fn new() -> Buf {
        Buf(sys::cachekit_buf::INIT)
    }

    pub(crate) fn as_mut_ptr(&mut self) -> *mut sys::cachekit_buf {
        &mut self.0
    }

    pub(crate) fn bytes(&self) -> &[u8] {
        if self.0.ptr.is_null() || self.0.size == 0 {
            return &[];
        }
        // SAFETY: the library keeps `size` valid bytes at `ptr`.
        unsafe { core::slice::from_raw_parts(self.0.ptr as *const u8, self.0.size) }
    }

    /// Let go of a large allocation, so a reused buffer does not keep one
    /// big value's memory for the thread's life.
    pub(crate) fn shrink_if_large(&mut self) {
        if self.0.capacity > 1 << 20 {
            *self = Buf::new();
        }
    }

    pub(crate) fn to_vec(&self) -> Vec<u8> {
        self.bytes().to_vec()
    }

    pub(crate) fn to_text(&self) -> String {
        String::from_utf8_lossy(self.bytes()).into_owned()
    }
}

impl Drop for Buf {
    fn drop(&mut self) {
        // SAFETY: the buffer is ours and no call uses it any more.
        unsafe { sys::cachekit_buf_dispose(&mut self.0) }
    }
}

const STACK_STR: usize = 128;

/// `f` with the thread's reusable buffer in `slot`, or with a fresh one when
/// a call further up this thread (a loader's nested call) holds it.
#[inline]
pub(crate) fn with_local_buf<R>(slot: &'static LocalKey<RefCell<Buf>>, f: impl FnOnce(&mut Buf) -> R) -> R {
    slot.with(|cell| match cell.try_borrow_mut() {
        Ok(mut buf) => f(&mut buf),
        Err(_) => f(&mut Buf::new()),
    })
}

/// Call `f` with `s` as a NUL-terminated string. A string holding a NUL byte
/// is refused (a silent cut would name another namespace or key).
#[inline]
pub(crate) fn with_cstr<R>(what: &str, s: &str, f: impl FnOnce(*const c_char) -> Result<R, Error>) -> Result<R, Error> {
    let bytes = s.as_bytes();
    if bytes.contains(&0) {
        return Err(Error::invalid(format!("{what} contains a NUL byte")));
    }
    if bytes.len() < STACK_STR {
        let mut stack = [0u8; STACK_STR];
        stack[..bytes.len()].copy_from_slice(bytes);
        f(stack.as_ptr() as *const c_char)
    } else {
        let owned = CString::new(bytes).map_err(|_| Error::invalid(format!("{what} contains a NUL byte")))?;
        f(owned.as_ptr())
    }
}

/// An owned C string for options (NUL refused).
pub(crate) fn cstring(what: &str, s: &str) -> Result<CString, Error> {
    CString::new(s).map_err(|_| Error::invalid(format!("{what} contains a NUL byte")))
}

/// Call `f` with `s` as an optional C string (None = NULL).
pub(crate) fn with_opt_cstr<R>(
    what: &str,
    s: Option<&str>,
    f: impl FnOnce(*const c_char) -> Result<R, Error>,
) -> Result<R, Error> {
    match s {
        None => f(core::ptr::null()),
        Some(s) => with_cstr(what, s, f),
    }
}
