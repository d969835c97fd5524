//! Round trips over L1 only (backend "none").
use libcachekit::{interop_key, Cache, Error, L1Admission};
use serde::{Deserialize, Serialize};
use std::time::Duration;

#[derive(Debug, Serialize, Deserialize, PartialEq)]
struct User {
    name: String,
    age: u32,
}

fn l1_cache() -> Cache {
    Cache::builder().l1_only().build().expect("an L1-only cache")
}

#[test]
fn bytes_round_trip_and_miss() {
    let cache = l1_cache();
    let key = interop_key("users", "get_user", &(1u64,)).unwrap();
    assert_eq!(cache.get_bytes("users", &key).unwrap(), None);
    cache.set_bytes("users", &key, &[0x2a], None).unwrap();
    assert_eq!(cache.get_bytes("users", &key).unwrap(), Some(vec![0x2a]));
    cache.delete("users", &key).unwrap();
    assert_eq!(cache.get_bytes("users", &key).unwrap(), None);
}

#[test]
fn typed_round_trip_stores_the_interop_value_profile() {
    let cache = l1_cache();
    let key = interop_key("users", "get_user", &(42u64,)).unwrap();
    let alice = User {
        name: "alice".into(),
        age: 30,
    };
    cache.set("users", &key, &alice, Some(Duration::from_secs(60))).unwrap();
    // Structs are maps with sorted keys: the value vector issue_example_object.
    let stored = cache.get_bytes("users", &key).unwrap().unwrap();
    assert_eq!(
        stored,
        [0x82, 0xa3, b'a', b'g', b'e', 0x1e, 0xa4, b'n', b'a', b'm', b'e', 0xa5, b'a', b'l', b'i', b'c', b'e']
    );
    assert_eq!(cache.get::<User>("users", &key).unwrap(), Some(alice));
}

#[test]
fn get_or_load_computes_once_then_hits() {
    let cache = l1_cache();
    let key = interop_key("users", "load", &(7u64,)).unwrap();
    let mut calls = 0;
    let v: u64 = cache
        .get_or_load("users", &key, None, || {
            calls += 1;
            Ok::<_, String>(7)
        })
        .unwrap();
    assert_eq!(v, 7);
    let v: u64 = cache
        .get_or_load("users", &key, None, || {
            calls += 1;
            Ok::<_, String>(8)
        })
        .unwrap();
    assert_eq!((v, calls), (7, 1));
}

#[test]
fn embedded_nul_in_namespace_is_refused() {
    let cache = l1_cache();
    let err = cache.get_bytes("us\0ers", "k").unwrap_err();
    assert!(matches!(err, Error::InvalidArgument { .. }), "{err:?}");
    assert!(err.message().contains("NUL"));
}

#[test]
fn long_namespaces_work_and_too_long_ones_are_refused() {
    let cache = l1_cache();
    let ns = "n".repeat(300); // past the on-stack copy of short strings
    cache.set_bytes(&ns, "k1", &[0x01], None).unwrap();
    assert_eq!(cache.get_bytes(&ns, "k1").unwrap(), Some(vec![0x01]));
    let err = cache.set_bytes(&"n".repeat(1025), "k2", &[0x01], None).unwrap_err();
    assert!(matches!(err, Error::InvalidArgument { .. }), "{err:?}");
    assert!(!err.message().is_empty());
}

#[test]
fn l1_admission_reaches_the_core() {
    // TinyLFU's counters show in the metrics text only when the core's L1 runs it.
    let tinylfu = Cache::builder()
        .l1_only()
        .l1_admission(L1Admission::TinyLfu)
        .build()
        .unwrap();
    assert!(tinylfu.metrics_text().unwrap().contains("cachekit_l1_admitted_total"));
    let lru = Cache::builder()
        .l1_only()
        .l1_admission(L1Admission::Lru)
        .build()
        .unwrap();
    if std::env::var_os("CACHEKIT_L1_ADMISSION").is_none() {
        assert!(!lru.metrics_text().unwrap().contains("cachekit_l1_admitted_total"));
    }
}
