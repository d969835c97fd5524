//! Values written by our `#[cached]` read by cachekit-rs 0.13.1's `#[cachekit]`, and
//! the reverse, through one private Redis, plain and encrypted (their `secure`).
//! Each side's function body counts its runs: a read of the other side's value
//! must not run it. Then namespaced entries: our `Cache::set` behind
//! `key_prefix("rsapp:")` read by cachekit-rs's `get` on a `.namespace("rsapp")`
//! client, and the reverse, plain and encrypted (since 0.10 the AAD binds the
//! namespaced key). Exit 0 when every check passed, 1 otherwise; 77 (skipped)
//! without redis-server.
#[path = "../../rust_python/src/ours_side.rs"]
mod ours_side;
mod py_side;
#[path = "../../rust_python/src/side_job.rs"]
mod side_job;
#[path = "../../../../wrappers/rust/libcachekit/tests/support/mod.rs"]
mod support;

use cachekit::{CacheKit, CachekitError};
use libcachekit::{cached, Cache};
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

/// "61" x 32, as the C tests' encryption key.
const MASTER_KEY_HEX: &str = "6161616161616161616161616161616161616161616161616161616161616161";

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct User {
    id: u64,
    name: String,
    tags: Vec<String>,
    score: f64,
}

fn user(id: u64, by: &str) -> User {
    User {
        id,
        name: format!("{by} {id}"),
        tags: vec!["a".into(), "b".into()],
        score: 1.5,
    }
}

static PLAIN: OnceLock<Cache> = OnceLock::new();
static SECURE: OnceLock<Cache> = OnceLock::new();
static OURS_RAN: AtomicUsize = AtomicUsize::new(0);
static THEIRS_RAN: AtomicUsize = AtomicUsize::new(0);

#[cached(namespace = "interop", operation = "get_user", cache = PLAIN.get().unwrap())]
fn ours_plain(id: u64) -> User {
    OURS_RAN.fetch_add(1, Ordering::SeqCst);
    user(id, "ours")
}

#[cached(namespace = "interop", operation = "get_secret", cache = SECURE.get().unwrap())]
fn ours_secure(id: u64) -> User {
    OURS_RAN.fetch_add(1, Ordering::SeqCst);
    user(id, "ours")
}

#[cachekit::cachekit(client = ck, ttl = 600, interop = "get_user", namespace = "interop")]
async fn theirs_plain(ck: &CacheKit, id: u64) -> Result<User, CachekitError> {
    THEIRS_RAN.fetch_add(1, Ordering::SeqCst);
    Ok(user(id, "theirs"))
}

#[cachekit::cachekit(client = ck, ttl = 600, interop = "get_secret", namespace = "interop", secure)]
async fn theirs_secure(ck: &CacheKit, id: u64) -> Result<User, CachekitError> {
    THEIRS_RAN.fetch_add(1, Ordering::SeqCst);
    Ok(user(id, "theirs"))
}

struct Checks {
    failed: usize,
}

impl Checks {
    fn check(&mut self, name: &str, ok: bool, detail: impl std::fmt::Debug) {
        println!(
            "{} {name}{}",
            if ok { "ok  " } else { "FAIL" },
            if ok { String::new() } else { format!(": {detail:?}") }
        );
        if !ok {
            self.failed += 1;
        }
    }

    /// `read` must return `expected` without running either function again.
    fn read_back(&mut self, name: &str, read: impl FnOnce() -> Result<User, String>, expected: &User) {
        let (ours, theirs) = (OURS_RAN.load(Ordering::SeqCst), THEIRS_RAN.load(Ordering::SeqCst));
        let got = read();
        let ran = (OURS_RAN.load(Ordering::SeqCst) - ours) + (THEIRS_RAN.load(Ordering::SeqCst) - theirs);
        self.check(
            name,
            got.as_ref() == Ok(expected) && ran == 0,
            (got, format!("{ran} function runs")),
        );
    }
}

/// Namespaced entries both ways, plain and encrypted: cachekit-rs's client
/// `.namespace("rsapp")` stores `get`/`set` keys as "rsapp:{key}", as our cache does
/// under key_prefix "rsapp:".
fn namespaced(checks: &mut Checks, rt: &tokio::runtime::Runtime, url: &str) {
    let ttl = Duration::from_secs(600);
    for secure in [false, true] {
        let kind = if secure { "encrypted" } else { "plain" };
        let mut ours = Cache::builder()
            .backend_url(url)
            .l1(false)
            .fail_closed(true)
            .format(libcachekit::Format::Plain)
            .key_prefix("rsapp:");
        if secure {
            ours = ours.encryption(MASTER_KEY_HEX);
        }
        let ours = ours.build().expect("our namespaced cache");
        let theirs = rt.block_on(async {
            let builder = if secure {
                CacheKit::secure(url, MASTER_KEY_HEX).await
            } else {
                CacheKit::minimal(url).await
            };
            builder.unwrap().no_l1().namespace("rsapp").build().unwrap()
        });
        let key = format!("{kind}:ours");
        let written = user(5, "ours");
        ours.set("rsapp", &key, &written, Some(ttl)).expect("our set");
        let got = rt.block_on(theirs.get::<User>(&key)).map_err(|e| e.to_string());
        checks.check(
            &format!("namespaced {kind}: ours -> cachekit-rs .namespace()"),
            got == Ok(Some(written)),
            got,
        );
        let key = format!("{kind}:theirs");
        let written = user(6, "theirs");
        rt.block_on(theirs.set_with_ttl(&key, &written, ttl))
            .expect("cachekit-rs set");
        let got = ours.get::<User>("rsapp", &key).map_err(|e| e.to_string());
        checks.check(
            &format!("namespaced {kind}: cachekit-rs .namespace() -> ours"),
            got == Ok(Some(written)),
            got,
        );
    }
}

fn main() {
    // `side '<json job>'`: one side of a Python <-> cachekit-rs scenario (py_side.rs).
    let args: Vec<String> = std::env::args().collect();
    if args.len() == 3 && args[1] == "side" {
        if let Err(e) = py_side::run(&args[2]) {
            eprintln!("interop-rust side: {e}");
            std::process::exit(2);
        }
        return;
    }
    // `ours-side '<json job>'`: our #[cached] in a Go <-> Rust scenario
    // (../rust_python/src/ours_side.rs).
    if args.len() == 3 && args[1] == "ours-side" {
        if let Err(e) = ours_side::run(&args[2]) {
            eprintln!("interop-rust ours-side: {e}");
            std::process::exit(2);
        }
        return;
    }
    let Some(redis) = support::redis::RedisServer::start() else {
        std::process::exit(77)
    };
    let url = redis.url();
    PLAIN.get_or_init(|| {
        Cache::builder()
            .backend_url(url.clone())
            .l1(false)
            .build()
            .expect("our plain cache")
    });
    SECURE.get_or_init(|| {
        Cache::builder()
            .backend_url(url.clone())
            .l1(false)
            .encryption(MASTER_KEY_HEX)
            .build()
            .expect("our secure cache")
    });
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let ck = rt.block_on(async { CacheKit::minimal(&url).await.unwrap().no_l1().build().unwrap() });
    let ck_secure = rt.block_on(async {
        CacheKit::secure(&url, MASTER_KEY_HEX)
            .await
            .unwrap()
            .no_l1()
            .build()
            .unwrap()
    });
    let mut checks = Checks { failed: 0 };

    // Ours writes, theirs reads.
    let written = ours_plain(1);
    checks.read_back(
        "plain: ours -> cachekit-rs",
        || rt.block_on(theirs_plain(&ck, 1)).map_err(|e| e.to_string()),
        &written,
    );
    let written = ours_secure(2);
    checks.read_back(
        "encrypted: ours -> cachekit-rs secure",
        || rt.block_on(theirs_secure(&ck_secure, 2)).map_err(|e| e.to_string()),
        &written,
    );
    // Theirs writes, ours reads.
    let written = rt.block_on(theirs_plain(&ck, 3)).expect("cachekit-rs computes");
    checks.read_back("plain: cachekit-rs -> ours", || Ok(ours_plain(3)), &written);
    let written = rt
        .block_on(theirs_secure(&ck_secure, 4))
        .expect("cachekit-rs secure computes");
    checks.read_back("encrypted: cachekit-rs secure -> ours", || Ok(ours_secure(4)), &written);

    namespaced(&mut checks, &rt, &url);

    drop(redis);
    println!("interop-rust: {} failed", checks.failed);
    std::process::exit(if checks.failed == 0 { 0 } else { 1 });
}
