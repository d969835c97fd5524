//! Issue 25: two async `#[cached]` functions named `get` in two modules, in
//! one namespace, share their keys (the default operation is the bare
//! function name) but not their return types. A waiter whose leader's
//! bytes do not decode as its own type must compute for itself, not rejoin
//! the same flight in a loop: on a current-thread runtime that loop never
//! yields, so the leader never finishes and the program spins at 100% CPU.
//! The runtime runs on a thread of its own and the test waits for it with a
//! bound, so a regression fails instead of hanging.
use libcachekit::Cache;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, OnceLock};
use std::time::Duration;
use tokio::sync::{oneshot, Notify};

fn cache() -> &'static Cache {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    CACHE.get_or_init(|| Cache::builder().l1_only().build().expect("an L1-only cache"))
}

/// Opened by the test once the other function's caller waits on the flight.
static GATE: Notify = Notify::const_new();
static STARTED: OnceLock<std::sync::Mutex<Option<oneshot::Sender<()>>>> = OnceLock::new();
static NAMES_RUNS: AtomicUsize = AtomicUsize::new(0);
static COUNTS_RUNS: AtomicUsize = AtomicUsize::new(0);

mod names {
    use super::*;
    use libcachekit::cached;

    #[cached(namespace = "shared", cache = cache())]
    pub async fn get(id: u64) -> String {
        NAMES_RUNS.fetch_add(1, Ordering::SeqCst);
        if let Some(started) = STARTED.get().and_then(|s| s.lock().unwrap().take()) {
            let _ = started.send(());
        }
        GATE.notified().await; // hold the flight open until the other caller waits on it
        format!("name {id}")
    }
}

mod counts {
    use super::*;
    use libcachekit::cached;

    #[cached(namespace = "shared", cache = cache())]
    pub async fn get(id: u64) -> u64 {
        COUNTS_RUNS.fetch_add(1, Ordering::SeqCst);
        id * 10
    }
}

#[test]
fn a_waiter_of_another_type_computes_for_itself_on_a_current_thread_runtime() {
    let (started_tx, started_rx) = oneshot::channel();
    STARTED.get_or_init(|| std::sync::Mutex::new(Some(started_tx)));
    let (done_tx, done_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a current-thread runtime");
        let results = rt.block_on(async {
            let leader = tokio::spawn(names::get(1));
            started_rx.await.expect("the leader runs its function");
            // The other type's caller joins the leader's flight as a waiter
            // (its first poll: L1 misses, the flight exists).
            let waiter = tokio::spawn(counts::get(1));
            tokio::task::yield_now().await;
            GATE.notify_one();
            (leader.await.unwrap(), waiter.await.unwrap())
        });
        let _ = done_tx.send(results);
    });
    let (name, count) = done_rx
        .recv_timeout(Duration::from_secs(60))
        .expect("issue 25: the current-thread runtime did not finish (a waiter spinning on its flight)");
    assert_eq!(name, "name 1");
    assert_eq!(count, 10);
    assert_eq!(NAMES_RUNS.load(Ordering::SeqCst), 1);
    assert_eq!(COUNTS_RUNS.load(Ordering::SeqCst), 1, "the waiter computed for itself");
    // One key for both: the last writer's value is what is stored.
    let key = libcachekit::interop_key("shared", "get", &(1u64,)).unwrap();
    assert!(cache().get_bytes("shared", &key).unwrap().is_some());
}
