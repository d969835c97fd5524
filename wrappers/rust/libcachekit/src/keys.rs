//! Interop/v1 keys `{namespace}:{operation}:{blake2b-256 of the canonical args}`.
use crate::ffi::{call, with_cstr, Buf};
use crate::values::to_msgpack;
use crate::Error;
use libcachekit_sys as sys;
use serde::Serialize;

/// The interop key of a call: `args` is the call's arguments as one sequence
/// (a tuple or slice: `&(user_id, "en")`, `&[1, 2]`, `&()` for none is not a
/// sequence: use `&[(); 0]`), encoded with rmp-serde and canonicalised by the
/// core. Byte strings need `serialize_bytes` (see `Bytes`), sets `Set`,
/// timestamps `Timestamp`. Bad segments give `InvalidSegment`, NaN and
/// infinities `UnsupportedType`.
pub fn interop_key<A: Serialize + ?Sized>(ns: &str, op: &str, args: &A) -> Result<String, Error> {
    interop_key_raw(ns, op, &to_msgpack(args)?, false).map(|(key, _)| key)
}

/// As `interop_key`, also returning the canonical argument bytes that were hashed.
pub fn interop_key_with_canonical<A: Serialize + ?Sized>(
    ns: &str,
    op: &str,
    args: &A,
) -> Result<(String, Vec<u8>), Error> {
    interop_key_raw(ns, op, &to_msgpack(args)?, true)
}

/// The interop key of already-encoded MessagePack arguments (any valid
/// encoding of the argument array), and, when asked, their canonical bytes.
pub fn interop_key_raw(
    ns: &str,
    op: &str,
    args_msgpack: &[u8],
    want_canonical: bool,
) -> Result<(String, Vec<u8>), Error> {
    let mut key = Buf::new();
    let mut canonical = Buf::new();
    let canonical_ptr = if want_canonical {
        canonical.as_mut_ptr()
    } else {
        core::ptr::null_mut()
    };
    with_cstr("namespace", ns, |ns| {
        with_cstr("operation", op, |op| {
            // SAFETY: live C strings and slice; buffers are ours.
            call(|err| unsafe {
                sys::cachekit_key_interop_ex(
                    key.as_mut_ptr(),
                    canonical_ptr,
                    ns,
                    op,
                    args_msgpack.as_ptr().cast(),
                    args_msgpack.len(),
                    err,
                )
            })
        })
    })?;
    Ok((key.to_text(), canonical.to_vec()))
}
