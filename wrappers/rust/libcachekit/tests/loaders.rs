//! get_or_load: single-flight across 64 threads, loader errors (never cached),
//! panics (caught at the C boundary, resumed here, key not wedged), Send/Sync.
use libcachekit::{interop_key, Cache, Error, LoadError};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Duration;

fn l1_cache() -> Cache {
    Cache::builder()
        .l1_only()
        .load_timeout(Duration::from_secs(20))
        .build()
        .unwrap()
}

const _: () = {
    const fn send_sync<T: Send + Sync>() {}
    send_sync::<Cache>();
    send_sync::<libcachekit::codec::Keyring>();
    send_sync::<Error>();
};

#[test]
fn sixty_four_threads_on_one_key_compute_once() {
    let cache = Arc::new(l1_cache());
    let key = interop_key("report", "build", &(1u64,)).unwrap();
    let calls = Arc::new(AtomicUsize::new(0));
    let start = Arc::new(Barrier::new(64));
    let threads: Vec<_> = (0..64)
        .map(|_| {
            let (cache, key, calls, start) = (cache.clone(), key.clone(), calls.clone(), start.clone());
            std::thread::spawn(move || {
                start.wait();
                cache
                    .get_or_load("report", &key, None, || {
                        calls.fetch_add(1, Ordering::SeqCst);
                        // Long enough that the others arrive while it runs.
                        std::thread::sleep(Duration::from_millis(200));
                        Ok::<_, String>(vec![1u32, 2, 3])
                    })
                    .unwrap()
            })
        })
        .collect();
    for t in threads {
        assert_eq!(t.join().unwrap(), vec![1, 2, 3]);
    }
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    let stats = cache.stats(None).unwrap();
    assert_eq!(stats.loads, 1);
}

#[test]
fn a_loader_error_is_returned_and_not_cached() {
    let cache = l1_cache();
    let key = interop_key("users", "get_user", &(5u64,)).unwrap();
    let r = cache.get_or_load_bytes("users", &key, None, || Err::<Vec<u8>, _>("db down"));
    assert!(matches!(r, Err(LoadError::Loader("db down"))));
    let v = cache
        .get_or_load_bytes("users", &key, None, || Ok::<_, ()>(vec![0x05]))
        .unwrap();
    assert_eq!(v, [0x05]);
}

#[test]
fn a_panicking_loader_is_resumed_in_the_caller_and_the_key_is_not_wedged() {
    let cache = l1_cache();
    let key = interop_key("users", "get_user", &(6u64,)).unwrap();
    let caught = catch_unwind(AssertUnwindSafe(|| {
        let _ = cache.get_or_load_bytes("users", &key, None, || -> Result<Vec<u8>, ()> {
            panic!("loader exploded")
        });
    }));
    let payload = caught.expect_err("the panic reaches the caller");
    assert_eq!(payload.downcast_ref::<&str>(), Some(&"loader exploded"));
    // The key loads again at once.
    let v = cache
        .get_or_load_bytes("users", &key, None, || Ok::<_, ()>(vec![0x06]))
        .unwrap();
    assert_eq!(v, [0x06]);
}

#[test]
fn waiters_on_a_panicking_loader_get_an_error_not_a_hang() {
    let cache = Arc::new(l1_cache());
    let key = interop_key("users", "get_user", &(7u64,)).unwrap();
    let started = Arc::new(Barrier::new(2));
    let loader = {
        let (cache, key, started) = (cache.clone(), key.clone(), started.clone());
        std::thread::spawn(move || {
            catch_unwind(AssertUnwindSafe(|| {
                let _ = cache.get_or_load_bytes("users", &key, None, || -> Result<Vec<u8>, ()> {
                    started.wait();
                    std::thread::sleep(Duration::from_millis(300));
                    panic!("boom")
                });
            }))
            .is_err()
        })
    };
    started.wait();
    // This caller joins the flight in progress and gets UserError.
    let r = cache.get_or_load_bytes("users", &key, None, || Ok::<_, ()>(vec![0x07]));
    assert!(loader.join().unwrap(), "the loader thread saw its panic");
    match r {
        Err(LoadError::Cache(Error::UserError { .. })) => {}
        // It may also have arrived after the failed flight ended and loaded itself.
        Ok(v) => assert_eq!(v, [0x07]),
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn a_loader_asking_for_its_own_key_gets_deadlock() {
    let cache = l1_cache();
    let key = interop_key("users", "get_user", &(8u64,)).unwrap();
    let r = cache.get_or_load_bytes("users", &key, None, || {
        match cache.get_or_load_bytes("users", &key, None, || Ok::<_, ()>(vec![0])) {
            Err(LoadError::Cache(e)) => Err(e),
            other => panic!("inner call gave {other:?}"),
        }
    });
    match r {
        Err(LoadError::Loader(Error::Deadlock { message })) => assert!(!message.is_empty()),
        other => panic!("expected Deadlock, got {other:?}"),
    }
}
