//! What of a function's return value is cached: all of it (`Plain`), or the
//! `Ok` of a `Result` (`OkOnly`: an `Err` goes back to its caller only).
use serde::de::DeserializeOwned;
use serde::Serialize;

pub trait Mode<R> {
    type Value: Serialize + DeserializeOwned;
    /// The part to store, if any.
    fn cacheable(r: &R) -> Option<&Self::Value>;
    /// The return value rebuilt from a stored one.
    fn from_cached(v: Self::Value) -> R;
}

pub struct Plain;
pub struct OkOnly;

impl<T: Serialize + DeserializeOwned> Mode<T> for Plain {
    type Value = T;
    #[inline]
    fn cacheable(r: &T) -> Option<&T> {
        Some(r)
    }
    #[inline]
    fn from_cached(v: T) -> T {
        v
    }
}

impl<T: Serialize + DeserializeOwned, E> Mode<Result<T, E>> for OkOnly {
    type Value = T;
    #[inline]
    fn cacheable(r: &Result<T, E>) -> Option<&T> {
        r.as_ref().ok()
    }
    #[inline]
    fn from_cached(v: T) -> Result<T, E> {
        Ok(v)
    }
}
