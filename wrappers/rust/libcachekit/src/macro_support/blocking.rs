//! Run a blocking cache call (an L2 read or write) off the async executor
//! and await it. With the `tokio` feature inside a Tokio runtime the call
//! goes to `spawn_blocking`; otherwise to a thread of its own (any executor).
//!
//! The call may borrow (the cache, the key): a future dropped while its call
//! runs waits for the call to finish before the borrows end. That wait, on a
//! cancelled call only, is the one place the caller's thread blocks.
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Condvar, Mutex};
use std::task::{Context, Poll, Waker};

struct Slot<R> {
    /// Set when the job has finished (`Some`) or was dropped unrun (`None`).
    done: Option<Option<R>>,
    waker: Option<Waker>,
}

struct Shared<R> {
    slot: Mutex<Slot<R>>,
    finished: Condvar,
}

impl<R> Shared<R> {
    fn finish(&self, result: Option<R>) {
        let waker = {
            let mut slot = self.slot.lock().unwrap_or_else(|e| e.into_inner());
            if slot.done.is_some() {
                return;
            }
            slot.done = Some(result);
            slot.waker.take()
        };
        self.finished.notify_all();
        if let Some(w) = waker {
            w.wake();
        }
    }
}

/// The job as the other thread holds it: it reports even when dropped unrun
/// (a runtime shutting down), so the waiting side never waits forever.
struct Job<R> {
    work: Option<Box<dyn FnOnce() -> R + Send + 'static>>,
    shared: Arc<Shared<R>>,
}

impl<R> Job<R> {
    fn run(mut self) {
        let work = self.work.take().expect("a job runs once");
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)).ok();
        self.shared.finish(result);
    }
}

impl<R> Drop for Job<R> {
    fn drop(&mut self) {
        // Unrun: drop the closure (and its borrows) before reporting.
        self.work.take();
        self.shared.finish(None);
    }
}

/// The awaited call. Resolves to `None` if the call panicked or never ran.
pub(crate) struct Blocking<'a, R> {
    shared: Arc<Shared<R>>,
    _borrows: std::marker::PhantomData<&'a ()>,
}

/// Start `work` on a blocking thread and return the future of its result.
pub(crate) fn run<'a, R, F>(work: F) -> Blocking<'a, R>
where
    F: FnOnce() -> R + Send + 'a,
    R: Send + 'static,
{
    let shared = Arc::new(Shared {
        slot: Mutex::new(Slot {
            done: None,
            waker: None,
        }),
        finished: Condvar::new(),
    });
    let work: Box<dyn FnOnce() -> R + Send + 'a> = Box::new(work);
    // SAFETY: the closure may borrow data that lives for 'a. Blocking<'a, R>
    // does not let 'a end before the closure has run or been dropped: its
    // Drop waits for `finish`, which Job calls only after the closure is gone.
    let work: Box<dyn FnOnce() -> R + Send + 'static> = unsafe { std::mem::transmute(work) };
    let job = Job {
        work: Some(work),
        shared: shared.clone(),
    };
    spawn(job);
    Blocking {
        shared,
        _borrows: std::marker::PhantomData,
    }
}

fn spawn<R: Send + 'static>(job: Job<R>) {
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

impl<R> Future for Blocking<'_, R> {
    type Output = Option<R>;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<R>> {
        let mut slot = self.shared.slot.lock().unwrap_or_else(|e| e.into_inner());
        match slot.done.take() {
            Some(result) => {
                slot.done = Some(None); // keep "finished" for Drop
                Poll::Ready(result)
            }
            None => {
                slot.waker = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}

impl<R> Drop for Blocking<'_, R> {
    fn drop(&mut self) {
        let mut slot = self.shared.slot.lock().unwrap_or_else(|e| e.into_inner());
        while slot.done.is_none() {
            slot = self.shared.finished.wait(slot).unwrap_or_else(|e| e.into_inner());
        }
    }
}
