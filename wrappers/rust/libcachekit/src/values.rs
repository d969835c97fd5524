//! Typed values and arguments through serde: rmp-serde with structs as maps,
//! then the core's canonicaliser, so the bytes are the interop profile.
use crate::decode::Refused;
use crate::ffi::{call, Buf};
use crate::Error;
use libcachekit_sys as sys;
use serde::de::DeserializeOwned;
use serde::Serialize;

/// MessagePack of `v` through rmp-serde, structs as maps (field names kept).
pub(crate) fn to_msgpack<T: Serialize + ?Sized>(v: &T) -> Result<Vec<u8>, Error> {
    rmp_serde::encode::to_vec_named(v).map_err(|e| Error::UnsupportedType {
        message: format!("cannot encode the value as MessagePack: {e}"),
    })
}

/// Re-encode one MessagePack document under a canonical profile.
pub(crate) fn canonical(data: &[u8], profile: core::ffi::c_int) -> Result<Vec<u8>, Error> {
    let mut out = Buf::new();
    // SAFETY: data is a live slice; out is ours.
    call(|err| unsafe {
        sys::cachekit_msgpack_canonical_ex(out.as_mut_ptr(), data.as_ptr().cast(), data.len(), profile, err)
    })?;
    Ok(out.to_vec())
}

/// The bytes the cache stores for `v` in interop format: MessagePack (structs
/// as maps) in the canonical value profile (map keys sorted, shortest widths,
/// floats as float64; NaN and infinities refused with `UnsupportedType`).
pub fn encode_value<T: Serialize + ?Sized>(v: &T) -> Result<Vec<u8>, Error> {
    canonical(&to_msgpack(v)?, sys::CACHEKIT_PROFILE_VALUE)
}

/// Decode stored MessagePack into `T` (structs from maps or arrays), read as
/// rmp-serde reads it (crate::decode). The bytes must be exactly one
/// document: more after it is `TrailingBytes`.
pub fn decode_value<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, Error> {
    crate::decode::from_slice(bytes).map_err(|e| match e {
        Refused::Decode(e) => Error::DeserializationFailed {
            message: format!("cannot decode the cached value: {e}"),
        },
        Refused::Trailing { consumed, len } => Error::TrailingBytes {
            message: format!(
                "{} bytes after the value's one document ({consumed} of {len} bytes read)",
                len - consumed
            ),
        },
    })
}
