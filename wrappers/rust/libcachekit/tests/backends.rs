//! Round trips through the file backend (a temp dir) and Redis (a private
//! server), a second handle reading what the first wrote, plus encryption
//! with a previous key and namespace invalidation.
mod support;

use libcachekit::{interop_key, Cache, Error};
use serde::{Deserialize, Serialize};
use std::time::Duration;
use support::redis::RedisServer;

const KEY_A: &str = "6161616161616161616161616161616161616161616161616161616161616161";
const KEY_B: &str = "6262626262626262626262626262626262626262626262626262626262626262";

#[derive(Debug, Serialize, Deserialize, PartialEq)]
struct Order {
    id: u64,
    items: Vec<String>,
    total: f64,
}

fn order() -> Order {
    Order {
        id: 9,
        items: vec!["tea".into(), "cake".into()],
        total: 7.5,
    }
}

/// Write through one handle, read through a fresh one with L1 off (so L2 answered).
fn round_trip(url: &str) {
    let key = interop_key("orders", "get_order", &(9u64,)).unwrap();
    let writer = Cache::builder().backend_url(url).build().unwrap();
    writer
        .set("orders", &key, &order(), Some(Duration::from_secs(60)))
        .unwrap();
    let reader = Cache::builder().backend_url(url).l1(false).build().unwrap();
    assert_eq!(reader.get::<Order>("orders", &key).unwrap(), Some(order()));
    assert_eq!(reader.stats(None).unwrap().l2_hits, 1);
    reader.delete("orders", &key).unwrap();
    assert_eq!(reader.get::<Order>("orders", &key).unwrap(), None);
}

#[test]
fn file_backend_round_trip() {
    let dir = support::temp_dir("file");
    round_trip(&format!("file://{}", dir.display()));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn redis_round_trip_and_namespace_invalidation() {
    let Some(server) = RedisServer::start() else { return };
    round_trip(&server.url());
    let cache = Cache::builder().backend_url(server.url()).l1(false).build().unwrap();
    let k1 = interop_key("users", "get_user", &(1u64,)).unwrap();
    let k2 = interop_key("teams", "get_team", &(1u64,)).unwrap();
    cache.set("users", &k1, &1u8, None).unwrap();
    cache.set("teams", &k2, &2u8, None).unwrap();
    cache.invalidate_namespace("users").unwrap();
    assert_eq!(cache.get::<u8>("users", &k1).unwrap(), None);
    assert_eq!(cache.get::<u8>("teams", &k2).unwrap(), Some(2));
    cache.clear().unwrap();
    assert_eq!(cache.get::<u8>("teams", &k2).unwrap(), None);
    assert!(cache.metrics_text().unwrap().contains("cache_operations_total"));
}

#[test]
fn encryption_reads_values_sealed_under_a_previous_key() {
    let Some(server) = RedisServer::start() else { return };
    if unsafe { libcachekit::sys::cachekit_crypto_available() } == 0 {
        eprintln!("SKIP: no AES-NI on this CPU");
        return;
    }
    let key = interop_key("secrets", "get", &("alice",)).unwrap();
    let old = Cache::builder()
        .backend_url(server.url())
        .encryption(KEY_A)
        .tenant("acme")
        .build()
        .unwrap();
    old.set("secrets", &key, &order(), None).unwrap();
    let rotated = Cache::builder()
        .backend_url(server.url())
        .l1(false)
        .encryption(KEY_B)
        .previous_keys([KEY_A])
        .tenant("acme")
        .fail_closed(true)
        .build()
        .unwrap();
    assert_eq!(rotated.get::<Order>("secrets", &key).unwrap(), Some(order()));

    // Another tenant's keys cannot open it (the AAD binds the tenant): a
    // fail-closed cache says so with a message.
    let other = Cache::builder()
        .backend_url(server.url())
        .l1(false)
        .encryption(KEY_A)
        .tenant("other")
        .fail_closed(true)
        .build()
        .unwrap();
    let err = other.get::<Order>("secrets", &key).unwrap_err();
    assert!(!err.message().is_empty(), "{err:?}");
}

#[test]
fn fail_closed_reports_a_dead_backend_with_its_name() {
    // A port nobody listens on (bound then released).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("redis://127.0.0.1:{port}");
    let closed = Cache::builder()
        .backend_url(&url)
        .fail_closed(true)
        .l1(false)
        .build()
        .unwrap();
    let err = closed.get_bytes("users", "users:get_user:0").unwrap_err();
    assert!(
        matches!(err, Error::BackendError { .. } | Error::Timeout { .. }),
        "{err:?}"
    );
    assert!(!err.message().is_empty());
    // Fail-open (the default): a miss.
    let open = Cache::builder().backend_url(&url).l1(false).build().unwrap();
    assert_eq!(open.get_bytes("users", "users:get_user:0").unwrap(), None);
}
