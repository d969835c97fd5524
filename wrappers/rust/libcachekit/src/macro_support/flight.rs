//! One load per key across concurrent async callers in this process, merged
//! in Rust before any C call: the first caller leads, the others await its
//! bytes without holding a thread. A leader that finishes without bytes
//! (an `Err`, a panic, a cancelled future) lets its waiters try again.
use crate::Cache;
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Poll, Waker};

type FlightKey = (usize, String); // (the cache's handle, the key)

#[derive(Default)]
struct State {
    /// Set once: `Some(bytes)` published, `None` ended without a value.
    outcome: Option<Option<Arc<Vec<u8>>>>,
    wakers: Vec<Waker>,
}

#[derive(Default)]
struct Flight {
    state: Mutex<State>,
}

fn flights() -> &'static Mutex<HashMap<FlightKey, Arc<Flight>>> {
    static FLIGHTS: OnceLock<Mutex<HashMap<FlightKey, Arc<Flight>>>> = OnceLock::new();
    FLIGHTS.get_or_init(Default::default)
}

pub(crate) enum Role {
    Leader(Leader),
    Waiter(Wait),
}

/// Lead the key's flight, or wait for the one in progress.
pub(crate) fn join(cache: &Cache, key: &str) -> Role {
    let id = (cache.as_ptr() as usize, key.to_owned());
    let mut map = flights().lock().unwrap_or_else(|e| e.into_inner());
    if let Some(flight) = map.get(&id) {
        return Role::Waiter(Wait { flight: flight.clone() });
    }
    let flight = Arc::new(Flight::default());
    map.insert(id.clone(), flight.clone());
    Role::Leader(Leader { id: Some(id), flight })
}

/// The leader's side. Dropping it ends the flight (with no value unless
/// `publish` was called) and wakes the waiters.
pub(crate) struct Leader {
    id: Option<FlightKey>,
    flight: Arc<Flight>,
}

impl Leader {
    /// Hand `bytes` to every waiter, present and arriving until the flight ends.
    pub(crate) fn publish(&self, bytes: Vec<u8>) -> Arc<Vec<u8>> {
        let bytes = Arc::new(bytes);
        self.flight.settle(Some(bytes.clone()));
        bytes
    }
}

impl Flight {
    fn settle(&self, outcome: Option<Arc<Vec<u8>>>) {
        let wakers = {
            let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
            if s.outcome.is_some() {
                return;
            }
            s.outcome = Some(outcome);
            std::mem::take(&mut s.wakers)
        };
        wakers.into_iter().for_each(Waker::wake);
    }
}

impl Drop for Leader {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            let mut map = flights().lock().unwrap_or_else(|e| e.into_inner());
            if map.get(&id).is_some_and(|f| Arc::ptr_eq(f, &self.flight)) {
                map.remove(&id);
            }
        }
        self.flight.settle(None);
    }
}

/// A waiter: resolves to the leader's bytes, or `None` when it had none.
pub(crate) struct Wait {
    flight: Arc<Flight>,
}

impl Future for Wait {
    type Output = Option<Arc<Vec<u8>>>;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut s = self.flight.state.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(outcome) = &s.outcome {
            return Poll::Ready(outcome.clone());
        }
        if !s.wakers.iter().any(|w| w.will_wake(cx.waker())) {
            s.wakers.push(cx.waker().clone());
        }
        Poll::Pending
    }
}
