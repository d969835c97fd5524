//! `#[cached]` on sync functions and methods (issue 15): keys, skip/key,
//! Result caching only Ok, one computation across 64 threads, a panicking
//! function, and a stored value of another type recomputed and replaced.
use libcachekit::{cached, interop_key, Cache};
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Barrier, OnceLock};

fn cache() -> &'static Cache {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    CACHE.get_or_init(|| Cache::builder().backend_url("memory://").build().expect("memory cache"))
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct User {
    id: u64,
    name: String,
}

static GET_USER_RUNS: AtomicUsize = AtomicUsize::new(0);

#[cached(namespace = "users", ttl = 60, cache = cache())]
fn get_user(id: u64) -> User {
    GET_USER_RUNS.fetch_add(1, Ordering::SeqCst);
    User {
        id,
        name: format!("user{id}"),
    }
}

#[test]
fn free_function_computes_once_then_hits_under_the_interop_key() {
    let first = get_user(7);
    let second = get_user(7);
    assert_eq!(
        first,
        User {
            id: 7,
            name: "user7".into()
        }
    );
    assert_eq!(second, first);
    assert_eq!(GET_USER_RUNS.load(Ordering::SeqCst), 1);
    // operation = the function's name; args = the parameters as one array
    let key = interop_key("users", "get_user", &(7u64,)).unwrap();
    let stored: User = cache()
        .get("users", &key)
        .unwrap()
        .expect("stored under the interop key");
    assert_eq!(stored, first);
}

struct Repo {
    calls: AtomicUsize,
    conn_uses: AtomicUsize,
}

struct Conn;

impl Repo {
    #[cached(namespace = "repo", operation = "find", cache = cache(), skip = [self, conn])]
    fn find(&self, conn: &Conn, id: u32, lang: &str) -> String {
        let _ = conn;
        self.calls.fetch_add(1, Ordering::SeqCst);
        format!("{id}-{lang}")
    }

    #[cached(namespace = "repo", cache = cache(), skip = [self])]
    fn count(&self, #[skip] conn: &Conn, id: u32) -> u64 {
        let _ = conn;
        self.conn_uses.fetch_add(1, Ordering::SeqCst);
        u64::from(id) * 2
    }

    #[cached(namespace = "repo", cache = cache(), key = [id % 10])]
    fn by_last_digit(&self, id: u32) -> u32 {
        self.calls.fetch_add(1, Ordering::SeqCst);
        id % 10
    }
}

#[test]
fn methods_leave_skipped_arguments_out_of_the_key() {
    let repo = Repo {
        calls: AtomicUsize::new(0),
        conn_uses: AtomicUsize::new(0),
    };
    assert_eq!(repo.find(&Conn, 1, "en"), "1-en");
    assert_eq!(repo.find(&Conn, 1, "en"), "1-en");
    assert_eq!(repo.find(&Conn, 1, "fr"), "1-fr");
    assert_eq!(repo.calls.load(Ordering::SeqCst), 2);
    let key = interop_key("repo", "find", &(1u32, "en")).unwrap();
    assert!(cache().get_bytes("repo", &key).unwrap().is_some());

    assert_eq!(repo.count(&Conn, 4), 8);
    assert_eq!(repo.count(&Conn, 4), 8);
    assert_eq!(repo.conn_uses.load(Ordering::SeqCst), 1);
    assert!(cache()
        .get_bytes("repo", &interop_key("repo", "count", &(4u32,)).unwrap())
        .unwrap()
        .is_some());
}

#[test]
fn key_expression_replaces_the_parameters() {
    let repo = Repo {
        calls: AtomicUsize::new(0),
        conn_uses: AtomicUsize::new(0),
    };
    assert_eq!(repo.by_last_digit(13), 3);
    assert_eq!(repo.by_last_digit(23), 3); // same key [3]
    assert_eq!(repo.calls.load(Ordering::SeqCst), 1);
    assert!(cache()
        .get_bytes("repo", &interop_key("repo", "by_last_digit", &[3u32]).unwrap())
        .unwrap()
        .is_some());
}

static PARSE_RUNS: AtomicUsize = AtomicUsize::new(0);

#[cached(namespace = "parse", cache = cache())]
fn parse(text: &str) -> Result<i64, String> {
    PARSE_RUNS.fetch_add(1, Ordering::SeqCst);
    text.parse::<i64>().map_err(|e| format!("{text:?}: {e}"))
}

#[test]
fn result_caches_only_ok() {
    assert_eq!(parse("12"), Ok(12));
    assert_eq!(parse("12"), Ok(12));
    assert_eq!(PARSE_RUNS.load(Ordering::SeqCst), 1);
    assert!(parse("x").is_err());
    assert!(parse("x").is_err());
    assert_eq!(PARSE_RUNS.load(Ordering::SeqCst), 3); // each Err recomputed
    assert!(cache()
        .get_bytes("parse", &interop_key("parse", "parse", &("x",)).unwrap())
        .unwrap()
        .is_none());
    // the stored Ok value is the plain integer, not a Result
    let stored: i64 = cache()
        .get("parse", &interop_key("parse", "parse", &("12",)).unwrap())
        .unwrap()
        .unwrap();
    assert_eq!(stored, 12);
}

static SLOW_RUNS: AtomicUsize = AtomicUsize::new(0);

#[cached(namespace = "flight", cache = cache())]
fn slow_square(n: u64) -> u64 {
    SLOW_RUNS.fetch_add(1, Ordering::SeqCst);
    std::thread::sleep(std::time::Duration::from_millis(200));
    n * n
}

#[test]
fn sixty_four_threads_on_one_key_compute_once() {
    let barrier = Barrier::new(64);
    let results: Vec<u64> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..64)
            .map(|_| {
                s.spawn(|| {
                    barrier.wait();
                    slow_square(9)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(results.iter().all(|&r| r == 81));
    assert_eq!(SLOW_RUNS.load(Ordering::SeqCst), 1);
}

static PANICS: AtomicUsize = AtomicUsize::new(0);

#[cached(namespace = "panics", cache = cache())]
fn sometimes_panics(n: u32) -> u32 {
    if PANICS.fetch_add(1, Ordering::SeqCst) == 0 {
        panic!("first call panics");
    }
    n + 1
}

#[test]
fn a_panicking_function_panics_in_its_caller_and_caches_nothing() {
    let caught = std::panic::catch_unwind(|| sometimes_panics(1));
    let message = caught.expect_err("the panic reaches the caller");
    assert_eq!(message.downcast_ref::<&str>(), Some(&"first call panics"));
    assert_eq!(sometimes_panics(1), 2); // nothing was cached: runs again
    assert_eq!(sometimes_panics(1), 2);
    assert_eq!(PANICS.load(Ordering::SeqCst), 2);
}

static TYPED_RUNS: AtomicUsize = AtomicUsize::new(0);

#[cached(namespace = "typed", cache = cache())]
fn typed(n: u32) -> User {
    TYPED_RUNS.fetch_add(1, Ordering::SeqCst);
    User {
        id: n.into(),
        name: "fresh".into(),
    }
}

#[test]
fn a_value_that_does_not_decode_is_recomputed_and_replaced() {
    let key = interop_key("typed", "typed", &(5u32,)).unwrap();
    cache().set("typed", &key, &"not a user", None).unwrap();
    assert_eq!(typed(5).name, "fresh");
    assert_eq!(TYPED_RUNS.load(Ordering::SeqCst), 1);
    let stored: User = cache().get("typed", &key).unwrap().unwrap();
    assert_eq!(stored.name, "fresh"); // replaced
    assert_eq!(typed(5).name, "fresh");
    assert_eq!(TYPED_RUNS.load(Ordering::SeqCst), 1);
}

static NO_ARGS_RUNS: AtomicUsize = AtomicUsize::new(0);

#[cached(namespace = "config", operation = "load.v2", cache = cache())]
fn load_config() -> Vec<String> {
    NO_ARGS_RUNS.fetch_add(1, Ordering::SeqCst);
    vec!["a".into(), "b".into()]
}

#[test]
fn no_arguments_hash_the_empty_array() {
    assert_eq!(load_config(), vec!["a".to_string(), "b".to_string()]);
    assert_eq!(load_config().len(), 2);
    assert_eq!(NO_ARGS_RUNS.load(Ordering::SeqCst), 1);
    let key = interop_key("config", "load.v2", &[(); 0]).unwrap();
    assert!(cache().get_bytes("config", &key).unwrap().is_some());
}

static HALF_RUNS: AtomicUsize = AtomicUsize::new(0);

#[cached(namespace = "floats", cache = cache())]
fn half(x: f64) -> f64 {
    HALF_RUNS.fetch_add(1, Ordering::SeqCst);
    x / 2.0
}

#[test]
fn an_argument_without_an_interop_key_runs_uncached() {
    assert!(interop_key("floats", "half", &(f64::NAN,)).is_err()); // NaN has no canonical form
    assert!(half(f64::NAN).is_nan());
    assert!(half(f64::NAN).is_nan());
    assert_eq!(HALF_RUNS.load(Ordering::SeqCst), 2);
    assert_eq!(half(3.0), 1.5);
    assert_eq!(half(3.0), 1.5);
    assert_eq!(HALF_RUNS.load(Ordering::SeqCst), 3);
}

static STALE_RUNS: AtomicUsize = AtomicUsize::new(0);

fn swr_cache() -> &'static Cache {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    CACHE.get_or_init(|| {
        Cache::builder()
            .backend_url("memory://")
            .swr(true, 0.05)
            .build()
            .expect("SWR cache")
    })
}

#[cached(namespace = "stale", ttl = 20, cache = swr_cache())]
fn versioned(id: u32) -> usize {
    let _ = id;
    STALE_RUNS.fetch_add(1, Ordering::SeqCst)
}

#[test]
fn on_an_swr_cache_a_stale_hit_is_refreshed() {
    assert_eq!(versioned(1), 0);
    // Stale after 5 % of the TTL (1 s, +-10 %): the next hit claims the refresh,
    // and the refreshed value stays fresh for 0.9 s at least, even on a busy machine.
    std::thread::sleep(std::time::Duration::from_millis(1200));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3);
    while STALE_RUNS.load(Ordering::SeqCst) < 2 && std::time::Instant::now() < deadline {
        let _ = versioned(1);
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(STALE_RUNS.load(Ordering::SeqCst), 2, "one refresh ran");
    assert_eq!(versioned(1), 1); // the refreshed value
}

#[cached(namespace = "nested", cache = cache())]
fn inner(n: u32) -> Vec<u32> {
    (0..n).collect()
}

#[cached(namespace = "nested", cache = cache())]
fn outer(n: u32) -> usize {
    inner(n).len() + inner(n + 1).len() // cached calls made while this one loads
}

#[test]
fn a_function_calls_cached_functions_while_it_loads() {
    assert_eq!(outer(3), 7);
    assert_eq!(outer(3), 7);
    assert_eq!(inner(4), vec![0, 1, 2, 3]);
}
