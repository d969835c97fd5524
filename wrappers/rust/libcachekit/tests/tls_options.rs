//! The builder's ssl_* settings (cachekit_backend_options' tls_* fields)
//! against a private redis-server whose TLS port wants client certificates;
//! certificates made per run with the openssl CLI.
mod support;

use libcachekit::{interop_key, Cache, CacheBuilder, Error, SslCertReqs};
use std::path::PathBuf;
use support::redis::{make_tls_certs, RedisServer};

struct TlsRedis {
    _server: RedisServer,
    certs: PathBuf,
    tls_port: u16,
}

impl TlsRedis {
    fn start() -> Option<TlsRedis> {
        let certs = support::temp_dir("tls-certs");
        if !make_tls_certs(&certs) {
            eprintln!("SKIP: cannot make test certificates with the openssl CLI");
            return None;
        }
        let tls_port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let f = |n: &str| certs.join(n).display().to_string();
        let server = RedisServer::start_with(&[
            "--tls-port".into(),
            tls_port.to_string(),
            "--tls-cert-file".into(),
            f("server.crt"),
            "--tls-key-file".into(),
            f("server.key"),
            "--tls-ca-cert-file".into(),
            f("ca.crt"),
            "--tls-auth-clients".into(),
            "yes".into(),
        ])?;
        Some(TlsRedis {
            _server: server,
            certs,
            tls_port,
        })
    }

    fn file(&self, name: &str) -> PathBuf {
        self.certs.join(name)
    }

    /// redis:// to the TLS port, made TLS by the builder, with the client certificate.
    fn builder(&self) -> CacheBuilder {
        Cache::builder()
            .backend_url(format!("redis://127.0.0.1:{}", self.tls_port))
            .ssl(true)
            .ssl_certfile(self.file("client.crt"))
            .ssl_keyfile(self.file("client.key"))
            .l1(false)
            .fail_closed(true)
    }
}

impl Drop for TlsRedis {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.certs);
    }
}

fn round_trip(cache: &Cache) -> Result<Option<u32>, Error> {
    let key = interop_key("tls", "f", &(1u64,)).unwrap();
    cache.set("tls", &key, &7u32, None)?;
    cache.get::<u32>("tls", &key)
}

#[test]
fn settings_reach_a_tls_server() {
    let Some(srv) = TlsRedis::start() else { return };
    let cache = srv.builder().ssl_ca_certs(srv.file("ca.crt")).build().unwrap();
    assert_eq!(round_trip(&cache).unwrap(), Some(7));
    assert_eq!(cache.stats(None).unwrap().l2_hits, 1);

    let none = srv.builder().ssl_cert_reqs(SslCertReqs::None).build().unwrap();
    assert_eq!(round_trip(&none).unwrap(), Some(7));
    let named = srv
        .builder()
        .ssl_ca_certs(srv.file("ca.crt"))
        .ssl_cert_reqs(SslCertReqs::Optional)
        .ssl_check_hostname(true)
        .build()
        .unwrap();
    assert_eq!(round_trip(&named).unwrap(), Some(7));
}

#[test]
fn wrong_ca_and_missing_client_cert_are_refused() {
    let Some(srv) = TlsRedis::start() else { return };
    let wrong = srv.builder().ssl_ca_certs(srv.file("other-ca.crt")).build().unwrap();
    let err = round_trip(&wrong).unwrap_err();
    assert!(err.to_string().contains("certificate verify failed"), "{err}");

    let anonymous = Cache::builder()
        .backend_url(format!("redis://127.0.0.1:{}", srv.tls_port))
        .ssl(true)
        .ssl_ca_certs(srv.file("ca.crt"))
        .l1(false)
        .fail_closed(true)
        .build()
        .unwrap();
    assert!(round_trip(&anonymous).is_err());
}

#[test]
fn url_parameter_wins_over_the_builder() {
    let Some(srv) = TlsRedis::start() else { return };
    let url = format!(
        "rediss://127.0.0.1:{}?ssl_ca_certs={}",
        srv.tls_port,
        srv.file("ca.crt").display()
    );
    let cache = srv
        .builder()
        .backend_url(url)
        .ssl_ca_certs(srv.file("other-ca.crt"))
        .build()
        .unwrap();
    assert_eq!(round_trip(&cache).unwrap(), Some(7));
}

#[test]
fn refusals() {
    let invalid = |b: CacheBuilder, part: &str| match b.build() {
        Err(e @ Error::InvalidArgument { .. }) => assert!(e.to_string().contains(part), "{e}"),
        Err(e) => panic!("expected InvalidArgument, got {e}"),
        Ok(_) => panic!("expected InvalidArgument, got a cache"),
    };
    invalid(
        Cache::builder().backend_url("memory://").ssl(true),
        "apply to Redis URLs only",
    );
    let dir = support::temp_dir("tls-file");
    invalid(
        Cache::builder()
            .backend_url(format!("file://{}", dir.display()))
            .ssl_ca_certs("/x.pem"),
        "apply to Redis URLs only",
    );
    let _ = std::fs::remove_dir_all(dir);
    // Never a plain connection when TLS settings were given.
    invalid(
        Cache::builder()
            .backend_url("redis://127.0.0.1:1")
            .ssl_ca_certs("/x.pem"),
        "set tls = 1 or use rediss://",
    );
    invalid(
        Cache::builder()
            .backend_url("redis-cluster://127.0.0.1:7000")
            .ssl_ca_certs("/x.pem"),
        "set tls = 1 or use rediss-cluster://",
    );
    invalid(
        Cache::builder()
            .backend_url("redis://127.0.0.1:1")
            .ssl(true)
            .ssl_ca_certs("/no/such/ca.pem"),
        "/no/such/ca.pem",
    );
    invalid(
        Cache::builder()
            .backend_url("redis://127.0.0.1:1")
            .ssl(true)
            .ssl_keyfile("/k.pem"),
        "ssl_keyfile needs ssl_certfile",
    );
    invalid(
        Cache::builder()
            .backend_url("redis://127.0.0.1:1")
            .ssl(true)
            .ssl_ca_certs("/a\0b"),
        "NUL",
    );
}
