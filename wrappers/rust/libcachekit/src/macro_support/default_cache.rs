//! The process-wide cache of `#[cached]` functions without `cache = ...`:
//! built on first use from the environment like the Python wrapper's
//! (CACHEKIT_REDIS_URL or REDIS_URL, else CACHEKIT_FILE_CACHE_DIR, else the
//! per-user file directory; interop format).
use crate::Cache;
use std::sync::OnceLock;

static DEFAULT: OnceLock<Option<Cache>> = OnceLock::new();

/// The default cache, or `None` when the environment does not make one (the
/// functions then run uncached; the reason is printed once to stderr).
pub fn default_cache() -> Option<&'static Cache> {
    DEFAULT
        .get_or_init(|| match Cache::builder().build() {
            Ok(cache) => Some(cache),
            Err(e) => {
                eprintln!("libcachekit: #[cached] runs uncached: the default cache could not be built: {e}");
                None
            }
        })
        .as_ref()
}
