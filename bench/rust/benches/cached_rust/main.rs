//! R1-R4 of issue 15 (see docs/performance.md, "Rust"): the `#[cached]`
//! attribute beside the C API called directly, cachekit-rs 0.9.0 and the
//! `cached` crate, each pair timed alternately in this one process. Prints one
//! JSON object per case, as bench/run does:
//!   cargo bench --bench cached_rust -- [R1] [R2] [R3] [R4]
//! (PKG_CONFIG_PATH / LD_LIBRARY_PATH name the libcachekit build: bench/run sets them.)
mod anchor;
mod payload;
#[path = "../../../../wrappers/rust/libcachekit/tests/support/mod.rs"]
mod support;
mod timing;

use cachekit::{CacheKit, CachekitError};
use libcachekit::Cache;
use payload::{python_payload, small_user, Payload, User};
use std::hint::black_box;
use std::sync::OnceLock;
use timing::Clock;

static L1_CACHE: OnceLock<Cache> = OnceLock::new();
static REDIS_L1: OnceLock<Cache> = OnceLock::new();
static REDIS_NO_L1: OnceLock<Cache> = OnceLock::new();
static PAYLOAD: OnceLock<Payload> = OnceLock::new();

fn l1_cache() -> &'static Cache {
    L1_CACHE.get_or_init(|| Cache::builder().l1_only().build().expect("L1-only cache"))
}

// R1, R4: a sync L1 hit, one u64 argument, a small struct.
#[libcachekit::cached(namespace = "bench", ttl = 600, cache = l1_cache())]
fn r1_user(id: u64) -> User {
    small_user(id)
}

// R2: the same function over Redis with L1 on (the hit is L1's), sync and async.
#[libcachekit::cached(namespace = "bench", ttl = 600, cache = REDIS_L1.get().expect("R2 cache"))]
fn r2_user(id: u64) -> User {
    small_user(id)
}

#[libcachekit::cached(namespace = "bench", ttl = 600, cache = REDIS_L1.get().expect("R2 cache"))]
async fn r2_user_async(id: u64) -> User {
    small_user(id)
}

#[cachekit::cachekit(client = ck, ttl = 600, interop = "r2_user_ckrs", namespace = "bench")]
async fn ckrs_user(ck: &CacheKit, id: u64) -> Result<User, CachekitError> {
    Ok(small_user(id))
}

// R3: a Redis hit with L1 off, the 23.5 KB payload.
#[libcachekit::cached(namespace = "bench", ttl = 600, cache = REDIS_NO_L1.get().expect("R3 cache"))]
fn r3_payload(id: u64) -> Payload {
    let _ = id;
    PAYLOAD.get().expect("payload").clone()
}

#[libcachekit::cached(namespace = "bench", ttl = 600, cache = REDIS_NO_L1.get().expect("R3 cache"))]
async fn r3_payload_async(id: u64) -> Payload {
    let _ = id;
    PAYLOAD.get().expect("payload").clone()
}

#[cachekit::cachekit(client = ck, ttl = 600, interop = "r3_payload_ckrs", namespace = "bench")]
async fn ckrs_payload(ck: &CacheKit, id: u64) -> Result<Payload, CachekitError> {
    let _ = id;
    Ok(PAYLOAD.get().expect("payload").clone())
}

// R4: the `cached` crate's in-process memo (a clone per hit, no serialization).
#[cached::proc_macro::cached]
fn cached_crate_user(id: u64) -> User {
    small_user(id)
}

fn report(case: &str, c: timing::Comparison, target: Option<f64>, anchor_desc: &str) {
    println!(
        "{{\"case\": \"{case}\", \"figure\": {:.3}, \"anchor\": {:.3}, \"unit\": \"ns\", \"ratio\": {:.3}, \
         \"target\": {}, \"better\": \"lower\", \"anchor_desc\": \"{anchor_desc}\"}}",
        c.figure,
        c.anchor,
        c.ratio,
        target.map_or("null".to_string(), |t| t.to_string())
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    let wanted = |case: &str| args.is_empty() || args.iter().any(|a| a == case);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    const ID: u64 = 42;

    if wanted("R1") {
        assert_eq!(r1_user(ID), small_user(ID)); // stored: the next calls are L1 hits
        let mut c_api = anchor::CApiHit::new(l1_cache(), "bench", "r1_user");
        assert_eq!(c_api.get(ID), small_user(ID));
        let figure = &mut |n: u64| (0..n).for_each(|_| drop(black_box(r1_user(black_box(ID)))));
        let anchor = &mut |n: u64| (0..n).for_each(|_| drop(black_box(c_api.get(black_box(ID)))));
        report(
            "R1",
            timing::compare(Clock::ThreadCpu, figure, anchor),
            Some(1.15),
            "the same L1 hit through the C API: cachekit_key_interop_ex + cachekit_cache_get_ex + decode",
        );
    }
    if wanted("R4") {
        assert_eq!(r1_user(ID), cached_crate_user(ID));
        let figure = &mut |n: u64| (0..n).for_each(|_| drop(black_box(r1_user(black_box(ID)))));
        let anchor = &mut |n: u64| (0..n).for_each(|_| drop(black_box(cached_crate_user(black_box(ID)))));
        report(
            "R4",
            timing::compare(Clock::ThreadCpu, figure, anchor),
            None,
            "the cached crate's #[cached] hit (in-process, a clone)",
        );
    }
    if !(wanted("R2") || wanted("R3")) {
        return;
    }
    let Some(redis) = support::redis::RedisServer::start() else {
        eprintln!("R2, R3: skipped (redis-server is not installed)");
        return;
    };
    let url = redis.url();
    if wanted("R2") {
        REDIS_L1.get_or_init(|| Cache::builder().backend_url(url.clone()).build().expect("Redis cache"));
        let ck = rt.block_on(async { CacheKit::minimal(&url).await.unwrap().build().unwrap() });
        assert_eq!(r2_user(ID), small_user(ID));
        assert_eq!(rt.block_on(r2_user_async(ID)), small_user(ID));
        assert_eq!(rt.block_on(ckrs_user(&ck, ID)).unwrap(), small_user(ID));
        let theirs = &mut |n: u64| {
            rt.block_on(async {
                for _ in 0..n {
                    drop(black_box(ckrs_user(&ck, black_box(ID)).await))
                }
            })
        };
        let ours = &mut |n: u64| (0..n).for_each(|_| drop(black_box(r2_user(black_box(ID)))));
        report(
            "R2",
            timing::compare(Clock::ThreadCpu, ours, theirs),
            Some(0.8),
            "cachekit-rs 0.9.0 #[cachekit] L1 (moka) hit, current-thread Tokio",
        );
        let ours_async = &mut |n: u64| {
            rt.block_on(async {
                for _ in 0..n {
                    drop(black_box(r2_user_async(black_box(ID)).await))
                }
            })
        };
        report(
            "R2async",
            timing::compare(Clock::ThreadCpu, ours_async, theirs),
            Some(0.8),
            "the same, our async fn (current-thread Tokio) beside theirs",
        );
    }
    if wanted("R3") {
        PAYLOAD.get_or_init(python_payload);
        let size = libcachekit::encode_value(PAYLOAD.get().unwrap()).unwrap().len();
        eprintln!("R3: payload {size} bytes as MessagePack");
        REDIS_NO_L1.get_or_init(|| {
            Cache::builder()
                .backend_url(url.clone())
                .l1(false)
                .build()
                .expect("Redis cache")
        });
        let ck = rt.block_on(async { CacheKit::minimal(&url).await.unwrap().no_l1().build().unwrap() });
        let expected = PAYLOAD.get().unwrap().clone();
        assert_eq!(r3_payload(ID), expected);
        assert_eq!(rt.block_on(r3_payload_async(ID)), expected);
        assert_eq!(rt.block_on(ckrs_payload(&ck, ID)).unwrap(), expected);
        let theirs = &mut |n: u64| {
            rt.block_on(async {
                for _ in 0..n {
                    drop(black_box(ckrs_payload(&ck, black_box(ID)).await))
                }
            })
        };
        let ours = &mut |n: u64| (0..n).for_each(|_| drop(black_box(r3_payload(black_box(ID)))));
        report(
            "R3",
            timing::compare(Clock::ProcessCpu, ours, theirs),
            Some(0.8),
            "cachekit-rs 0.9.0 #[cachekit] Redis hit, L1 off, 23.5 KB",
        );
        let ours_async = &mut |n: u64| {
            rt.block_on(async {
                for _ in 0..n {
                    drop(black_box(r3_payload_async(black_box(ID)).await))
                }
            })
        };
        report(
            "R3async",
            timing::compare(Clock::ProcessCpu, ours_async, theirs),
            Some(0.8),
            "the same, our async fn (current-thread Tokio) beside theirs",
        );
    }
    drop(redis);
}
