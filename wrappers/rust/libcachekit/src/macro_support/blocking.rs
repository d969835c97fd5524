//! Run a blocking cache call (an L2 read or write) off the async executor
//! and await it. With the `tokio` feature inside a Tokio runtime the call
//! goes to `spawn_blocking`; otherwise to a thread of its own (any executor).
//!
//! The call owns what it uses (a clone of the `Cache`, the key, the bytes),
//! so a future dropped while its call runs just lets go: the call finishes
//! on its blocking thread (bounded by the backend's command timeout) and its
//! result is dropped there, never waited for on the executor. A result that
//! holds a load claim abandons it when dropped (see `cached_async`).
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

struct Slot<R> {
    /// Set when the job has finished (`Some`) or was dropped unrun (`None`).
    done: Option<Option<R>>,
    waker: Option<Waker>,
}

type Shared<R> = Arc<Mutex<Slot<R>>>;

fn finish<R>(shared: &Shared<R>, result: Option<R>) {
    let waker = {
        let mut slot = shared.lock().unwrap_or_else(|e| e.into_inner());
        if slot.done.is_some() {
            return;
        }
        slot.done = Some(result);
        slot.waker.take()
    };
    if let Some(w) = waker {
        w.wake();
    }
}

/// The job as the other thread holds it: it reports even when dropped unrun
/// (a runtime shutting down), so the awaiting side never waits forever.
struct Job<R, F> {
    work: Option<F>,
    shared: Shared<R>,
}

impl<R, F: FnOnce() -> R> Job<R, F> {
    fn run(mut self) {
        let work = self.work.take().expect("a job runs once");
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)).ok();
        finish(&self.shared, result);
    }
}

impl<R, F> Drop for Job<R, F> {
    fn drop(&mut self) {
        finish(&self.shared, None); // no-op after run
    }
}

/// The awaited call. Resolves to `None` if the call panicked or never ran.
pub(crate) struct Blocking<R> {
    shared: Shared<R>,
}

/// Start `work` on a blocking thread and return the future of its result.
pub(crate) fn run<R, F>(work: F) -> Blocking<R>
where
    F: FnOnce() -> R + Send + 'static,
    R: Send + 'static,
{
    let shared: Shared<R> = Arc::new(Mutex::new(Slot {
        done: None,
        waker: None,
    }));
    spawn(Job {
        work: Some(work),
        shared: shared.clone(),
    });
    Blocking { shared }
}

fn spawn<R, F>(job: Job<R, F>)
where
    F: FnOnce() -> R + Send + 'static,
    R: Send + 'static,
{
    #[cfg(feature = "tokio")]
    if let Ok(handle) = tokio::runtime::Handle::try_current() {
        drop(handle.spawn_blocking(move || job.run()));
        return;
    }
    std::thread::Builder::new()
        .name("libcachekit-io".into())
        .spawn(move || job.run())
        .expect("libcachekit: cannot start a thread for a cache call");
}

impl<R> Future for Blocking<R> {
    type Output = Option<R>;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<R>> {
        let mut slot = self.shared.lock().unwrap_or_else(|e| e.into_inner());
        match slot.done.take() {
            Some(result) => {
                slot.done = Some(None); // keep "finished"
                Poll::Ready(result)
            }
            None => {
                slot.waker = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}
