//! A user's program of the packaged crates (tests/packaging/rust_crates.sh builds
//! it outside the repository): #[cached] on an L1-only cache and on the default
//! cache, which CACHEKIT_REDIS_URL points at the test's redis-server.
//!   rust-app first|second   prints one line of key=value facts
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use libcachekit::{cached, Cache};

static LOCAL_CALLS: AtomicUsize = AtomicUsize::new(0);
static REMOTE_CALLS: AtomicUsize = AtomicUsize::new(0);

fn l1_cache() -> &'static Cache {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    CACHE.get_or_init(|| Cache::builder().l1_only().build().expect("an L1-only cache"))
}

#[cached(namespace = "pkgtest", cache = l1_cache())]
fn square(x: u64) -> u64 {
    LOCAL_CALLS.fetch_add(1, Ordering::SeqCst);
    x * x
}

// The process-wide cache: L1 in front of the Redis that CACHEKIT_REDIS_URL names.
#[cached(namespace = "pkgtest", ttl = 600)]
fn greeting(id: u64) -> String {
    REMOTE_CALLS.fetch_add(1, Ordering::SeqCst);
    format!("hello {id}")
}

fn main() {
    let run = std::env::args().nth(1).unwrap_or_default();
    let local = [square(7), square(7)];
    let remote = [greeting(42), greeting(42)];
    println!(
        "run={run} version={} local={},{} local_calls={} remote={},{} remote_calls={}",
        libcachekit::library_version(),
        local[0],
        local[1],
        LOCAL_CALLS.load(Ordering::SeqCst),
        remote[0].replace(' ', "_"),
        remote[1].replace(' ', "_"),
        REMOTE_CALLS.load(Ordering::SeqCst)
    );
}
