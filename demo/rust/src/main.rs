//! The demo's Rust side: `get_user(id)` behind `#[cached]` (interop keys,
//! namespace "demo", operation "get_user"), so the C, Python and Go sides of
//! demo/ compute the same keys and read the same entries.
//!
//!   get_user ID...   calls get_user(ID) for every ID, then once more each;
//!                    one line per call: "rust ID SOURCE MILLISECONDS"
//!
//! The L2 comes from the environment (REDIS_URL, else CACHEKIT_FILE_CACHE_DIR).
use libcachekit::{cached, Cache, Stats};
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

static LOADS: AtomicUsize = AtomicUsize::new(0);
static CACHE: OnceLock<Cache> = OnceLock::new();

fn cache() -> &'static Cache {
    CACHE.get().expect("the cache is built before the first call")
}

#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct User {
    id: u64,
    name: String,
}

#[cached(namespace = "demo", ttl = 300, cache = cache())]
fn get_user(id: u64) -> User {
    LOADS.fetch_add(1, Ordering::SeqCst);
    std::thread::sleep(Duration::from_millis(50)); // the "database"
    expected(id)
}

/// What every side stores for `id`: {"id": id, "name": "user-<id>"}.
fn expected(id: u64) -> User {
    User {
        id,
        name: format!("user-{id}"),
    }
}

fn stats() -> Stats {
    cache()
        .stats(Some("demo"))
        .unwrap_or_else(|e| fail(&format!("stats: {e}")))
}

fn call(id: u64) {
    let (loads, before) = (LOADS.load(Ordering::SeqCst), stats());
    let start = Instant::now();
    let user = get_user(id);
    let took = start.elapsed().as_secs_f64() * 1e3;
    let after = stats();
    if user != expected(id) {
        fail(&format!("unexpected value {user:?}"));
    }
    let source = if LOADS.load(Ordering::SeqCst) > loads {
        "miss"
    } else if after.l2_hits > before.l2_hits {
        "l2"
    } else if after.l1_hits > before.l1_hits {
        "l1"
    } else {
        "none"
    };
    println!("rust {id} {source} {took:.4}");
}

fn fail(message: &str) -> ! {
    eprintln!("get_user(rust): {message}");
    std::process::exit(1)
}

fn main() {
    let ids: Vec<u64> = std::env::args()
        .skip(1)
        .map(|a| a.parse().unwrap_or_else(|_| fail(&format!("not an id: {a}"))))
        .collect();
    if ids.is_empty() {
        fail("usage: get_user ID...");
    }
    // Interop format and the environment's L2, fail-closed so a backend that
    // is down shows instead of looking like misses.
    let built = Cache::builder().fail_closed(true).build();
    if CACHE
        .set(built.unwrap_or_else(|e| fail(&format!("cache: {e}"))))
        .is_err()
    {
        unreachable!("the cache is set once");
    }
    for _ in 0..2 {
        for &id in &ids {
            call(id);
        }
    }
}
