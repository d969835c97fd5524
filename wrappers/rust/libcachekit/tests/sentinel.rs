//! redis-sentinel:// and rediss-sentinel:// from Rust: one private primary and
//! one sentinel monitoring it as "m" (quorum 1); a cache opened through the
//! sentinel URL round-trips a value, and the primary itself holds it (a plain
//! redis:// handle reads it back, a raw client counts the key).
mod support;

use libcachekit::{interop_key, Cache};
use support::redis::{command, make_tls_certs, RedisServer, Sentinel};

fn sentinel_url(sentinel: &Sentinel, master: &str) -> String {
    format!("redis-sentinel://127.0.0.1:{}/{master}", sentinel.port)
}

#[test]
fn cache_through_a_sentinel_lands_on_the_primary() {
    let Some(primary) = RedisServer::start() else { return };
    let sentinel = Sentinel::start(primary.port, "");
    let key = interop_key("sentinel", "get_user", &(1u64,)).unwrap();
    let cache = Cache::builder()
        .backend_url(sentinel_url(&sentinel, "m"))
        .l1(false)
        .fail_closed(true)
        .build()
        .unwrap();
    assert_eq!(primary.command(&["DBSIZE"]), ":0");
    cache.set("sentinel", &key, &42u32, None).unwrap();
    assert_eq!(cache.get::<u32>("sentinel", &key).unwrap(), Some(42));

    assert_eq!(primary.command(&["DBSIZE"]), ":1");
    let plain = Cache::builder()
        .backend_url(primary.url())
        .l1(false)
        .fail_closed(true)
        .build()
        .unwrap();
    assert_eq!(plain.get::<u32>("sentinel", &key).unwrap(), Some(42));
    assert_eq!(plain.stats(None).unwrap().l2_hits, 1);

    cache.delete("sentinel", &key).unwrap();
    assert_eq!(primary.command(&["DBSIZE"]), ":0");
}

#[test]
fn an_unknown_master_is_an_error_naming_it() {
    let Some(primary) = RedisServer::start() else { return };
    let sentinel = Sentinel::start(primary.port, "");
    let cache = Cache::builder()
        .backend_url(sentinel_url(&sentinel, "no-such-master"))
        .l1(false)
        .fail_closed(true)
        .build()
        .unwrap();
    let key = interop_key("sentinel", "f", &(2u64,)).unwrap();
    let err = cache.get::<u32>("sentinel", &key).unwrap_err();
    assert!(err.to_string().contains("no-such-master"), "{err}");
}

/// rediss-sentinel://: TLS to the sentinel (its tls-port) naming the
/// primary's TLS port (tls-replication yes), one CA for both.
#[test]
fn tls_sentinel() {
    let certs = support::temp_dir("sentinel-certs");
    if !make_tls_certs(&certs) {
        eprintln!("SKIP: cannot make test certificates with the openssl CLI");
        return;
    }
    let f = |n: &str| certs.join(n).display().to_string();
    let free = || {
        std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port()
    };
    let (primary_tls, sentinel_tls) = (free(), free());
    let tls = [
        "--tls-cert-file".into(),
        f("server.crt"),
        "--tls-key-file".into(),
        f("server.key"),
        "--tls-ca-cert-file".into(),
        f("ca.crt"),
        "--tls-auth-clients".into(),
        "no".into(),
    ];
    let mut args = vec!["--tls-port".to_string(), primary_tls.to_string()];
    args.extend(tls.iter().cloned());
    let Some(primary) = RedisServer::start_with(&args) else {
        return;
    };
    let sentinel = Sentinel::start(
        primary_tls,
        &format!(
            "tls-port {sentinel_tls}\ntls-cert-file {}\ntls-key-file {}\ntls-ca-cert-file {}\n\
             tls-auth-clients no\ntls-replication yes\n",
            f("server.crt"),
            f("server.key"),
            f("ca.crt")
        ),
    );
    let url = |ca: &str| format!("rediss-sentinel://127.0.0.1:{sentinel_tls}/m?ssl_ca_certs={}", f(ca));
    let key = interop_key("sentinel", "tls", &(3u64,)).unwrap();
    let cache = Cache::builder()
        .backend_url(url("ca.crt"))
        .l1(false)
        .fail_closed(true)
        .build()
        .unwrap();
    cache.set("sentinel", &key, &7u32, None).unwrap();
    assert_eq!(cache.get::<u32>("sentinel", &key).unwrap(), Some(7));
    assert_eq!(command(primary.port, &["DBSIZE"]), ":1");

    let wrong = Cache::builder()
        .backend_url(url("other-ca.crt"))
        .l1(false)
        .fail_closed(true)
        .build()
        .unwrap();
    let err = wrong.get::<u32>("sentinel", &key).unwrap_err();
    assert!(err.to_string().contains("certificate verify failed"), "{err}");
    drop(sentinel);
    let _ = std::fs::remove_dir_all(&certs);
}
