//! The codec calls: ByteStorage envelope, CK v3 frame, keyring encryption and
//! inspection (free-standing, reentrant C calls).
use crate::ffi::{call, with_cstr, with_opt_cstr, Buf};
use crate::Error;
use core::ptr::{null, null_mut, NonNull};
use libcachekit_sys as sys;

/// Wrap `data` in the canonical ByteStorage envelope (lz4 + xxh3-64).
pub fn envelope_wrap(data: &[u8], format: &str) -> Result<Vec<u8>, Error> {
    let mut out = Buf::new();
    with_cstr("format", format, |format| {
        // SAFETY: live slice, string and buffer.
        call(|err| unsafe {
            sys::cachekit_envelope_wrap_ex(out.as_mut_ptr(), data.as_ptr().cast(), data.len(), format, err)
        })
    })?;
    Ok(out.to_vec())
}

/// Unwrap a ByteStorage envelope: (data, format).
pub fn envelope_unwrap(envelope: &[u8]) -> Result<(Vec<u8>, String), Error> {
    let (mut out, mut format) = (Buf::new(), Buf::new());
    // SAFETY: live slice and buffers.
    call(|err| unsafe {
        sys::cachekit_envelope_unwrap_ex(
            out.as_mut_ptr(),
            format.as_mut_ptr(),
            envelope.as_ptr().cast(),
            envelope.len(),
            err,
        )
    })?;
    Ok((out.to_vec(), format.to_text()))
}

/// A decoded CK v3 frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    pub serializer: String,
    /// The metadata object as JSON text.
    pub metadata_json: String,
    pub payload: Vec<u8>,
}

/// Encode a CK v3 frame; `metadata_json` is a JSON object.
pub fn frame_encode(serializer: &str, metadata_json: &str, payload: &[u8]) -> Result<Vec<u8>, Error> {
    let mut out = Buf::new();
    with_cstr("serializer", serializer, |s| {
        with_cstr("metadata", metadata_json, |m| {
            // SAFETY: live strings, slice and buffer.
            call(|err| unsafe {
                sys::cachekit_frame_encode_ex(out.as_mut_ptr(), s, m, payload.as_ptr().cast(), payload.len(), err)
            })
        })
    })?;
    Ok(out.to_vec())
}

/// Decode a CK v3 frame.
pub fn frame_decode(frame: &[u8]) -> Result<Frame, Error> {
    let (mut serializer, mut metadata) = (Buf::new(), Buf::new());
    let mut offset = 0usize;
    // SAFETY: live slice, buffers and out-parameter.
    call(|err| unsafe {
        sys::cachekit_frame_decode_ex(
            serializer.as_mut_ptr(),
            metadata.as_mut_ptr(),
            &mut offset,
            frame.as_ptr().cast(),
            frame.len(),
            err,
        )
    })?;
    let payload = frame
        .get(offset..)
        .ok_or_else(|| Error::from_code(sys::CACHEKIT_EINTERNAL, "payload offset past the frame"))?;
    Ok(Frame {
        serializer: serializer.to_text(),
        metadata_json: metadata.to_text(),
        payload: payload.to_vec(),
    })
}

/// Describe a stored value as JSON (kind, checks, decoded value, ...). With a
/// keyring and the cache key, ciphertext is opened first.
pub fn inspect(
    data: &[u8],
    keyring: Option<&Keyring>,
    tenant: Option<&str>,
    cache_key: Option<&str>,
) -> Result<String, Error> {
    let mut out = Buf::new();
    let ring = keyring.map_or(null(), |k| k.ptr.as_ptr() as *const _);
    with_opt_cstr("tenant", tenant, |tenant| {
        with_opt_cstr("cache key", cache_key, |key| {
            // SAFETY: live slice, keyring (or NULL), strings and buffer.
            call(|err| unsafe {
                sys::cachekit_inspect_ex(
                    out.as_mut_ptr(),
                    data.as_ptr().cast(),
                    data.len(),
                    ring,
                    tenant,
                    key,
                    err,
                )
            })
        })
    })?;
    Ok(out.to_text())
}

/// A keyring: the current master key and up to three decrypt-only previous
/// keys (AES-256-GCM, per-tenant HKDF keys, counter nonces).
pub struct Keyring {
    ptr: NonNull<sys::cachekit_keyring>,
}

// SAFETY: keyring calls are thread-safe; only free (Drop) needs exclusivity.
unsafe impl Send for Keyring {}
unsafe impl Sync for Keyring {}

impl Drop for Keyring {
    fn drop(&mut self) {
        // SAFETY: we own the handle.
        unsafe { sys::cachekit_keyring_free(self.ptr.as_ptr()) }
    }
}

impl core::fmt::Debug for Keyring {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Keyring { .. }")
    }
}

/// The outcome of `Keyring::decrypt`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decrypted {
    pub plaintext: Vec<u8>,
    /// 0 = the current key, 1.. = a previous key.
    pub key_index: usize,
}

impl Keyring {
    /// From hex master keys (64 hex digits each).
    pub fn new(current_hex: &str, previous_hex: &[&str]) -> Result<Keyring, Error> {
        let previous = previous_hex.join(",");
        let mut out = null_mut();
        with_cstr("master key", current_hex, |cur| {
            with_cstr("previous keys", &previous, |prev| {
                // SAFETY: live strings and out-parameter.
                call(|err| unsafe { sys::cachekit_keyring_new_ex(&mut out, cur, prev, err) })
            })
        })?;
        let ptr = NonNull::new(out).ok_or_else(|| Error::from_code(sys::CACHEKIT_EINTERNAL, "no keyring handle"))?;
        Ok(Keyring { ptr })
    }

    /// The 16-byte fingerprint of the current key for `tenant` (None = "default").
    pub fn fingerprint(&self, tenant: Option<&str>) -> Result<[u8; sys::CACHEKIT_FINGERPRINT_SIZE], Error> {
        let mut out = [0u8; sys::CACHEKIT_FINGERPRINT_SIZE];
        with_opt_cstr("tenant", tenant, |tenant| {
            // SAFETY: live handle, 16-byte array, string or NULL.
            call(|err| unsafe {
                sys::cachekit_keyring_fingerprint_ex(self.ptr.as_ptr(), out.as_mut_ptr(), tenant, err)
            })
        })?;
        Ok(out)
    }

    /// Seal `plaintext` with the current key: nonce || ciphertext || tag.
    pub fn encrypt(&self, tenant: Option<&str>, aad: &[u8], plaintext: &[u8]) -> Result<Vec<u8>, Error> {
        let mut out = Buf::new();
        with_opt_cstr("tenant", tenant, |tenant| {
            // SAFETY: live handle, slices, string and buffer.
            call(|err| unsafe {
                sys::cachekit_keyring_encrypt_ex(
                    self.ptr.as_ptr(),
                    out.as_mut_ptr(),
                    tenant,
                    aad.as_ptr().cast(),
                    aad.len(),
                    plaintext.as_ptr().cast(),
                    plaintext.len(),
                    err,
                )
            })
        })?;
        Ok(out.to_vec())
    }

    /// Open a sealed value: with a fingerprint only the matching key is tried,
    /// else the current key then each previous one.
    pub fn decrypt(
        &self,
        tenant: Option<&str>,
        fingerprint: Option<&[u8; sys::CACHEKIT_FINGERPRINT_SIZE]>,
        aad: &[u8],
        ciphertext: &[u8],
    ) -> Result<Decrypted, Error> {
        let mut out = Buf::new();
        let mut index: core::ffi::c_int = 0;
        let fp = fingerprint.map_or(null(), |f| f.as_ptr());
        with_opt_cstr("tenant", tenant, |tenant| {
            // SAFETY: live handle, slices, string, fingerprint (16 bytes) or NULL.
            call(|err| unsafe {
                sys::cachekit_keyring_decrypt_ex(
                    self.ptr.as_ptr(),
                    out.as_mut_ptr(),
                    &mut index,
                    tenant,
                    fp,
                    aad.as_ptr().cast(),
                    aad.len(),
                    ciphertext.as_ptr().cast(),
                    ciphertext.len(),
                    err,
                )
            })
        })?;
        Ok(Decrypted {
            plaintext: out.to_vec(),
            key_index: index.max(0) as usize,
        })
    }
}

/// AAD v0x03 for a cache key (interop mode: format "msgpack", not compressed).
pub fn aad(tenant: Option<&str>, cache_key: &str, format: &str, compressed: bool) -> Result<Vec<u8>, Error> {
    let mut out = Buf::new();
    with_opt_cstr("tenant", tenant, |tenant| {
        with_cstr("cache key", cache_key, |key| {
            with_cstr("format", format, |format| {
                // SAFETY: live strings and buffer.
                call(|err| unsafe {
                    sys::cachekit_crypto_aad_ex(out.as_mut_ptr(), tenant, key, format, compressed as _, null(), err)
                })
            })
        })
    })?;
    Ok(out.to_vec())
}
