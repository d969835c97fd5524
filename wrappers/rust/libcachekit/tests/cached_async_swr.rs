//! Stale-while-revalidate for `async fn` under `#[cached]` (issue 15): a stale
//! L1 hit hands its refresh claim to exactly one caller, which runs the
//! function on the executor and lands the value; every other caller keeps
//! getting the stale value meanwhile. A refresh that fails or is cancelled
//! releases the claim (the next stale hit refreshes).
use libcachekit::{cached, Cache};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

struct Feed {
    cache: Cache,
    runs: AtomicUsize,
    /// While set, a run after the first waits (a refresh in progress).
    hold: AtomicBool,
    /// A run after the first fails while set.
    fail: AtomicBool,
}

impl Feed {
    fn new() -> Feed {
        Feed {
            // Stale after ttl x 0.05 (x 0.9..1.1 jitter): 0.9 to 1.1 s, so a
            // refreshed value stays fresh for 0.9 s even on a busy machine.
            cache: Cache::builder()
                .l1_only()
                .swr(true, 0.05)
                .default_ttl(Duration::from_secs(20))
                .build()
                .unwrap(),
            runs: AtomicUsize::new(0),
            hold: AtomicBool::new(false),
            fail: AtomicBool::new(false),
        }
    }

    #[cached(namespace = "feed", cache = &self.cache, skip = [self])]
    async fn latest(&self, id: u32) -> Result<u32, String> {
        let run = self.runs.fetch_add(1, Ordering::SeqCst) as u32 + 1;
        while run > 1 && self.hold.load(Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        if run > 1 && self.fail.load(Ordering::SeqCst) {
            return Err("refresh failed".into());
        }
        Ok(id * 100 + run)
    }

    async fn until_runs(&self, n: usize) {
        while self.runs.load(Ordering::SeqCst) < n {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    }
}

const STALE: Duration = Duration::from_millis(1200);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stale_hit_runs_one_refresh_and_others_get_the_stale_value() {
    let feed = Arc::new(Feed::new());
    assert_eq!(feed.latest(1).await, Ok(101));
    tokio::time::sleep(STALE).await;

    feed.hold.store(true, Ordering::SeqCst);
    let claimant = tokio::spawn({
        let feed = feed.clone();
        async move { feed.latest(1).await }
    });
    feed.until_runs(2).await; // the refresh is running
    for _ in 0..20 {
        assert_eq!(
            feed.latest(1).await,
            Ok(101),
            "served stale meanwhile, no second refresh"
        );
    }
    assert_eq!(feed.runs.load(Ordering::SeqCst), 2);
    feed.hold.store(false, Ordering::SeqCst);
    assert_eq!(claimant.await.unwrap(), Ok(102), "the claimant gets its fresh value");
    assert_eq!(feed.latest(1).await, Ok(102), "the refresh landed");
    let s = feed.cache.stats(None).unwrap();
    assert_eq!(s.refreshes, 1);
    assert!(s.stale_served >= 21, "stale hits: {}", s.stale_served);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_refresh_returns_the_stale_value_and_releases_the_claim() {
    let feed = Feed::new();
    assert_eq!(feed.latest(2).await, Ok(201));
    tokio::time::sleep(STALE).await;
    feed.fail.store(true, Ordering::SeqCst);
    assert_eq!(
        feed.latest(2).await,
        Ok(201),
        "the failed refresh gives the stale value"
    );
    assert_eq!(feed.runs.load(Ordering::SeqCst), 2);
    feed.fail.store(false, Ordering::SeqCst);
    assert_eq!(
        feed.latest(2).await,
        Ok(203),
        "the claim was released: the next stale hit refreshes"
    );
    assert_eq!(feed.latest(2).await, Ok(203));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_refresh_releases_the_claim() {
    let feed = Arc::new(Feed::new());
    assert_eq!(feed.latest(3).await, Ok(301));
    tokio::time::sleep(STALE).await;
    feed.hold.store(true, Ordering::SeqCst);
    let claimant = tokio::spawn({
        let feed = feed.clone();
        async move { feed.latest(3).await }
    });
    feed.until_runs(2).await;
    claimant.abort();
    assert!(claimant.await.unwrap_err().is_cancelled());
    feed.hold.store(false, Ordering::SeqCst);
    assert_eq!(feed.latest(3).await, Ok(303), "a new claimant refreshed");
    assert_eq!(feed.latest(3).await, Ok(303));
}
