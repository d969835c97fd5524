#![allow(dead_code)]
pub mod redis;
pub mod vectors;

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A fresh private (0700) directory under the system temp dir.
pub fn temp_dir(what: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "libcachekit-rs-{what}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    dir
}
