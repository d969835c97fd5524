//! An async `#[cached]` call never blocks its executor on L2 (issue 15): on a
//! current-thread Tokio runtime, with the private Redis stopped (SIGSTOP), a
//! miss waits on a blocking thread while other tasks, and L1 hits, go on; a
//! miss whose future is dropped while its L2 read waits lets go at once, and
//! the read's load claim is released when that read returns.
mod support;

use libcachekit::{cached, Cache};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::redis::RedisServer;

struct Catalog {
    cache: Cache,
    runs: AtomicUsize,
}

impl Catalog {
    #[cached(namespace = "catalog", cache = &self.cache, skip = [self])]
    async fn item(&self, id: u32) -> String {
        self.runs.fetch_add(1, Ordering::SeqCst);
        format!("item-{id}")
    }
}

fn signal(pid: u32, sig: &str) {
    let status = Command::new("kill")
        .arg(sig)
        .arg(pid.to_string())
        .status()
        .expect("kill runs");
    assert!(status.success(), "kill {sig} {pid}");
}

/// Resumes the server on every path out of the test (a stopped server would
/// outlive a failed assertion).
struct Resume(u32);
impl Drop for Resume {
    fn drop(&mut self) {
        let _ = Command::new("kill").arg("-CONT").arg(self.0.to_string()).status();
    }
}

#[test]
fn a_current_thread_runtime_keeps_running_while_redis_is_stopped() {
    let Some(redis) = RedisServer::start() else { return };
    let cache = Cache::builder()
        .backend_url(redis.url())
        .command_timeout(Duration::from_secs(20))
        .connect_timeout(Duration::from_secs(20))
        .build()
        .expect("redis cache");
    let catalog = Arc::new(Catalog {
        cache,
        runs: AtomicUsize::new(0),
    });
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    rt.block_on(async {
        assert_eq!(catalog.item(0).await, "item-0"); // in L1 and Redis; the connection is up

        signal(redis.pid(), "-STOP");
        let resume = Resume(redis.pid());
        let ticks = Arc::new(AtomicUsize::new(0));
        let ticker = {
            let ticks = ticks.clone();
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    ticks.fetch_add(1, Ordering::SeqCst);
                }
            })
        };
        let miss = catalog.item(1); // L1 miss: its L2 read waits on the stopped server
        tokio::pin!(miss);
        let waited = tokio::time::timeout(Duration::from_millis(800), &mut miss).await;
        assert!(waited.is_err(), "the miss is still waiting on the stopped Redis");
        // Had the L2 read blocked the executor's only thread, neither the
        // ticker nor the timeout above would have run until it returned.
        assert!(
            ticks.load(Ordering::SeqCst) >= 10,
            "other tasks ran meanwhile: {} ticks",
            ticks.load(Ordering::SeqCst)
        );
        assert_eq!(catalog.item(0).await, "item-0"); // an L1 hit never waits on L2
        assert_eq!(catalog.runs.load(Ordering::SeqCst), 1);

        drop(resume); // SIGCONT: the waiting read completes
        assert_eq!(
            tokio::time::timeout(Duration::from_secs(30), miss)
                .await
                .expect("the miss completes"),
            "item-1"
        );
        assert_eq!(catalog.runs.load(Ordering::SeqCst), 2);
        ticker.abort();
    });
}

#[test]
fn a_dropped_miss_lets_go_at_once_and_its_claim_is_released() {
    let Some(redis) = RedisServer::start() else { return };
    const COMMAND_TIMEOUT: Duration = Duration::from_secs(60);
    let cache = Cache::builder()
        .backend_url(redis.url())
        .command_timeout(COMMAND_TIMEOUT)
        .connect_timeout(COMMAND_TIMEOUT)
        .build()
        .expect("redis cache");
    let catalog = Catalog {
        cache,
        runs: AtomicUsize::new(0),
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    rt.block_on(async {
        assert_eq!(catalog.item(0).await, "item-0"); // the connection is up
        let before = catalog.cache.stats(None).unwrap().load_errors;

        signal(redis.pid(), "-STOP");
        let resume = Resume(redis.pid());
        let mut miss = Box::pin(catalog.item(2)); // its L2 read waits on the stopped server
        assert!(tokio::time::timeout(Duration::from_millis(300), &mut miss)
            .await
            .is_err());
        let dropping = Instant::now();
        drop(miss);
        // The read cannot return while the server is stopped (its timeout is
        // 60 s): a drop that waited for it would take that long.
        assert!(
            dropping.elapsed() < COMMAND_TIMEOUT / 2,
            "the drop waited for the L2 read"
        );
        assert_eq!(catalog.runs.load(Ordering::SeqCst), 1, "the function never ran");

        drop(resume); // SIGCONT: the abandoned read completes on its blocking thread
        let deadline = Instant::now() + Duration::from_secs(30);
        while catalog.cache.stats(None).unwrap().load_errors == before {
            assert!(
                Instant::now() < deadline,
                "the dropped read's load claim was not released"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(catalog.item(2).await, "item-2"); // the key is not held up
        assert_eq!(catalog.runs.load(Ordering::SeqCst), 2);
    });
}
