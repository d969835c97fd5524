//! `#[cached]` on async functions and methods (issue 15): hits, Result
//! caching only Ok, 1,000 Tokio tasks on one key computing once, a panicking
//! future, callers waiting on a leader that is cancelled, and the leader's
//! load claim: a put or invalidation while the future runs keeps its value
//! out, a failed or cancelled future abandons the claim.
use libcachekit::{cached, interop_key, Cache};
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

fn cache() -> &'static Cache {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    CACHE.get_or_init(|| Cache::builder().backend_url("memory://").build().expect("memory cache"))
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Profile {
    id: u64,
    tags: Vec<String>,
}

static PROFILE_RUNS: AtomicUsize = AtomicUsize::new(0);

#[cached(namespace = "profiles", ttl = 60, cache = cache())]
async fn profile(id: u64) -> Profile {
    PROFILE_RUNS.fetch_add(1, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(5)).await;
    Profile {
        id,
        tags: vec!["a".into()],
    }
}

#[tokio::test]
async fn async_function_computes_once_then_hits() {
    let first = profile(1).await;
    assert_eq!(profile(1).await, first);
    assert_eq!(PROFILE_RUNS.load(Ordering::SeqCst), 1);
    let stored: Profile = cache()
        .get("profiles", &interop_key("profiles", "profile", &(1u64,)).unwrap())
        .unwrap()
        .unwrap();
    assert_eq!(stored, first);
}

struct Service {
    cache: Cache,
    runs: AtomicUsize,
}

impl Service {
    #[cached(namespace = "svc", cache = &self.cache, skip = [self])]
    async fn lookup(&self, name: String) -> Result<usize, std::io::Error> {
        self.runs.fetch_add(1, Ordering::SeqCst);
        if name.is_empty() {
            return Err(std::io::Error::other("empty name"));
        }
        let n = name.len();
        tokio::task::yield_now().await;
        Ok(n)
    }
}

#[tokio::test]
async fn async_method_with_its_own_cache_caches_only_ok() {
    let svc = Service {
        cache: Cache::builder().backend_url("memory://").build().unwrap(),
        runs: AtomicUsize::new(0),
    };
    assert_eq!(svc.lookup("abc".into()).await.unwrap(), 3);
    assert_eq!(svc.lookup("abc".into()).await.unwrap(), 3);
    assert_eq!(svc.runs.load(Ordering::SeqCst), 1);
    assert!(svc.lookup(String::new()).await.is_err());
    assert!(svc.lookup(String::new()).await.is_err());
    assert_eq!(svc.runs.load(Ordering::SeqCst), 3);
    let stored: usize = svc
        .cache
        .get("svc", &interop_key("svc", "lookup", &("abc",)).unwrap())
        .unwrap()
        .unwrap();
    assert_eq!(stored, 3);
}

static FLIGHT_RUNS: AtomicUsize = AtomicUsize::new(0);

#[cached(namespace = "flight", cache = cache())]
async fn slow_double(n: u64) -> u64 {
    FLIGHT_RUNS.fetch_add(1, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(200)).await;
    n * 2
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_thousand_tasks_on_one_key_compute_once() {
    let gate = Arc::new(tokio::sync::Barrier::new(1000));
    let tasks: Vec<_> = (0..1000)
        .map(|_| {
            let gate = gate.clone();
            tokio::spawn(async move {
                gate.wait().await;
                slow_double(21).await
            })
        })
        .collect();
    for t in tasks {
        assert_eq!(t.await.unwrap(), 42);
    }
    assert_eq!(FLIGHT_RUNS.load(Ordering::SeqCst), 1);
}

static PANIC_RUNS: AtomicUsize = AtomicUsize::new(0);

#[cached(namespace = "panics", cache = cache())]
async fn panics_first(n: u32) -> u32 {
    let run = PANIC_RUNS.fetch_add(1, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(100)).await;
    if run == 0 {
        panic!("first run panics");
    }
    n + 1
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_leader_fails_its_task_and_a_waiter_computes() {
    let leader = tokio::spawn(panics_first(3));
    tokio::time::sleep(Duration::from_millis(20)).await; // the leader holds the flight
    let waiter = tokio::spawn(panics_first(3));
    let err = leader.await.expect_err("the leader's task panicked");
    assert!(err.is_panic());
    assert_eq!(waiter.await.unwrap(), 4); // retried as the next leader
    assert_eq!(panics_first(3).await, 4);
    assert_eq!(PANIC_RUNS.load(Ordering::SeqCst), 2);
}

static CANCEL_RUNS: AtomicUsize = AtomicUsize::new(0);

#[cached(namespace = "cancel", cache = cache())]
async fn cancellable(n: u32) -> u32 {
    CANCEL_RUNS.fetch_add(1, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(300)).await;
    n
}

#[tokio::test]
async fn a_cancelled_leader_hands_the_flight_on() {
    let leader = tokio::spawn(cancellable(8));
    while CANCEL_RUNS.load(Ordering::SeqCst) == 0 {
        tokio::time::sleep(Duration::from_millis(5)).await; // until the leader runs the function
    }
    let waiter = tokio::spawn(cancellable(8));
    tokio::time::sleep(Duration::from_millis(50)).await;
    leader.abort();
    assert!(leader.await.unwrap_err().is_cancelled());
    assert_eq!(waiter.await.unwrap(), 8);
    assert_eq!(CANCEL_RUNS.load(Ordering::SeqCst), 2);
}

/// A function that waits for `gate` before returning, with its own cache
/// (so its counters are its own).
struct Gated {
    cache: Cache,
    gate: tokio::sync::Notify,
    runs: AtomicUsize,
}

impl Gated {
    fn new() -> Gated {
        Gated {
            cache: Cache::builder().backend_url("memory://").build().unwrap(),
            gate: tokio::sync::Notify::new(),
            runs: AtomicUsize::new(0),
        }
    }

    #[cached(namespace = "gated", cache = &self.cache, skip = [self])]
    async fn load(&self, n: u32) -> Result<u32, String> {
        let run = self.runs.fetch_add(1, Ordering::SeqCst) + 1;
        if run == 1 {
            self.gate.notified().await;
        }
        if n == 0 {
            return Err("no".into());
        }
        Ok(n * 10 + run as u32)
    }

    fn key(n: u32) -> String {
        interop_key("gated", "load", &(n,)).unwrap()
    }

    async fn until_running(&self) {
        while self.runs.load(Ordering::SeqCst) == 0 {
            tokio::task::yield_now().await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_invalidation_while_the_future_runs_keeps_its_value_out() {
    let g = Arc::new(Gated::new());
    let first = tokio::spawn({
        let g = g.clone();
        async move { g.load(1).await }
    });
    g.until_running().await;
    // Through the cache handle, not the function: the leader's claim orders it.
    g.cache.delete("gated", &Gated::key(1)).unwrap();
    g.gate.notify_one();
    assert_eq!(first.await.unwrap(), Ok(11));
    assert_eq!(g.cache.get_bytes("gated", &Gated::key(1)).unwrap(), None); // neither in L1 nor L2
    assert_eq!(g.load(1).await, Ok(12)); // computed again, and stored
    assert_eq!(g.load(1).await, Ok(12));
    let s = g.cache.stats(Some("gated")).unwrap();
    assert_eq!((s.loads, s.dropped_fills, s.stores), (2, 1, 1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_newer_put_while_the_future_runs_stays() {
    let g = Arc::new(Gated::new());
    let first = tokio::spawn({
        let g = g.clone();
        async move { g.load(2).await }
    });
    g.until_running().await;
    g.cache.set("gated", &Gated::key(2), &99u32, None).unwrap();
    g.gate.notify_one();
    assert_eq!(first.await.unwrap(), Ok(21));
    assert_eq!(g.cache.get::<u32>("gated", &Gated::key(2)).unwrap(), Some(99));
    assert_eq!(g.load(2).await, Ok(99));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_or_cancelled_future_abandons_its_claim() {
    let g = Arc::new(Gated::new());
    let first = tokio::spawn({
        let g = g.clone();
        async move { g.load(3).await }
    });
    g.until_running().await;
    first.abort();
    assert!(first.await.unwrap_err().is_cancelled());
    assert_eq!(g.load(0).await, Err("no".to_string()));
    let s = g.cache.stats(Some("gated")).unwrap();
    assert_eq!((s.loads, s.load_errors, s.stores), (0, 2, 0));
    assert_eq!(g.load(3).await, Ok(33)); // the key was not held up by the abandoned claim
    assert_eq!(g.cache.get::<u32>("gated", &Gated::key(3)).unwrap(), Some(33));
}
