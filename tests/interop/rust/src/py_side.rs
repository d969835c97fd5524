//! `libcachekit-interop-rust side '<json job>'`: cachekit-rs 0.13.1's side of the
//! Python <-> Rust interop scenarios (tests/interop/python_rust_interop.py). The job is
//! the one tests/interop/python/side.py takes; this side reads `backend.redis`,
//! `function` (one | three | var), `namespace`, `interop`, `options.encryption`,
//! `options.master_key`, `cases`. Prints one JSON line: per case, whether this process
//! ran the function body and the value it got (as JSON).
//!
//! The namespace and operation are literals in cachekit-rs's attribute, so the job's
//! must be the ones below (rsplain, rsvault: side_job.rs checks); the argument cases
//! mirror side.py's `CASES` / `RS_CASES`. Function `kv`: each case is a key of a
//! client built with `.namespace(job.namespace)`, read with `get` and, on a miss,
//! computed and stored with `set_with_ttl` (encrypted when the job has a key: since
//! 0.10 a client with a key encrypts every value, the AAD binding the namespaced key).
// The functions' arguments only key the entry: their bodies ignore them.
#![allow(unused_variables)]

use crate::side_job::{self, three_c, Answer, Job, KV, KV_NAMESPACE};
use cachekit::interop::InteropValue;
use cachekit::{CacheKit, CachekitError};
use std::collections::BTreeMap;
use std::time::Duration;

fn answer(op: &str) -> Result<Answer, CachekitError> {
    Ok(side_job::answer(op))
}

// Plain (`rsplain`) and encrypted (`rsvault`, `secure`): one argument of any kind of the
// interop model; three typed arguments (Python binds its default for the third); a
// `*args` array and a `**kwargs` map.
#[cachekit::cachekit(client = ck, ttl = 600, interop = "one", namespace = "rsplain")]
async fn plain_one(ck: &CacheKit, a: InteropValue) -> Result<Answer, CachekitError> {
    answer("one")
}
#[cachekit::cachekit(client = ck, ttl = 600, interop = "three", namespace = "rsplain")]
async fn plain_three(ck: &CacheKit, a: i64, b: String, c: f64) -> Result<Answer, CachekitError> {
    answer("three")
}
#[cachekit::cachekit(client = ck, ttl = 600, interop = "var", namespace = "rsplain")]
async fn plain_var(
    ck: &CacheKit,
    args: Vec<InteropValue>,
    kwargs: BTreeMap<String, InteropValue>,
) -> Result<Answer, CachekitError> {
    answer("var")
}
#[cachekit::cachekit(client = ck, ttl = 600, interop = "one", namespace = "rsvault", secure)]
async fn secure_one(ck: &CacheKit, a: InteropValue) -> Result<Answer, CachekitError> {
    answer("one")
}
#[cachekit::cachekit(client = ck, ttl = 600, interop = "three", namespace = "rsvault", secure)]
async fn secure_three(ck: &CacheKit, a: i64, b: String, c: f64) -> Result<Answer, CachekitError> {
    answer("three")
}
#[cachekit::cachekit(client = ck, ttl = 600, interop = "var", namespace = "rsvault", secure)]
async fn secure_var(
    ck: &CacheKit,
    args: Vec<InteropValue>,
    kwargs: BTreeMap<String, InteropValue>,
) -> Result<Answer, CachekitError> {
    answer("var")
}

use InteropValue as V;

fn int(i: i128) -> V {
    V::Int(i)
}
fn s(x: &str) -> V {
    V::Str(x.into())
}
fn map(pairs: Vec<(&str, V)>) -> V {
    V::Map(pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

/// side.py's `CASES[case]` single argument, as cachekit-rs's model spells it.
fn one_arg(case: &str) -> Option<V> {
    Some(match case {
        "int" => int(42),
        "bigint" => int((1i128 << 64) - 2),
        "negint" => int(-(1i128 << 63)),
        "float" => V::Float(3.25),
        "negzero" => V::Float(-0.0),
        "str" => s("h\u{e9}llo w\u{f6}rld"),
        "bytes" => V::bytes(vec![0u8, 1, 0xfe]),
        "none" => V::Null,
        "bool" => V::Bool(true),
        "list" => V::Array(vec![int(1), s("a"), V::Null]),
        "tuple" => V::Array(vec![int(1), int(2), s("b")]),
        "dict" => map(vec![("b", int(1)), ("a", V::Array(vec![int(2), int(3)]))]),
        "nested" => map(vec![
            (
                "x",
                V::Array(vec![int(1), map(vec![("y", V::Array(vec![int(2), V::Float(3.5)]))])]),
            ),
            ("a", map(vec![("c", V::bytes(b"z".to_vec()))])),
        ]),
        // 2026-03-04T05:06:07.000890Z
        "datetime" => V::datetime_from_unix_micros(1_772_600_767_000_890),
        "set" => V::Set(vec![int(1), int(2), int(3)]),
        "uuid" => V::Uuid("12345678-1234-5678-1234-567812345678".parse().ok()?),
        _ => return None,
    })
}

async fn call(ck: &CacheKit, secure: bool, function: &str, case: &str) -> Result<Answer, String> {
    let e = |e: CachekitError| e.to_string();
    match (function, secure) {
        ("one", _) => {
            let a = one_arg(case).ok_or_else(|| format!("unknown case {case}"))?;
            if secure {
                secure_one(ck, a).await
            } else {
                plain_one(ck, a).await
            }
            .map_err(e)
        }
        ("three", _) => {
            let c = three_c(case).ok_or_else(|| format!("unknown case {case}"))?;
            let b = "x".to_string();
            if secure {
                secure_three(ck, 1, b, c).await
            } else {
                plain_three(ck, 1, b, c).await
            }
            .map_err(e)
        }
        ("var", _) => {
            let (args, kwargs) = match case {
                "varargs" => (vec![int(1), s("two")], BTreeMap::from([("k".to_string(), s("v"))])),
                "empty" => (vec![], BTreeMap::new()),
                _ => return Err(format!("unknown case {case}")),
            };
            if secure {
                secure_var(ck, args, kwargs).await
            } else {
                plain_var(ck, args, kwargs).await
            }
            .map_err(e)
        }
        _ => Err(format!("unknown function {function}")),
    }
}

/// The namespaced entry under `key`, or (a miss) the computed one, stored.
async fn get_or_set(ck: &CacheKit, key: &str) -> Result<Answer, String> {
    if let Some(found) = ck.get::<Answer>(key).await.map_err(|e| e.to_string())? {
        return Ok(found);
    }
    let value = side_job::answer(KV);
    ck.set_with_ttl(key, &value, Duration::from_secs(600))
        .await
        .map_err(|e| e.to_string())?;
    Ok(value)
}

/// Runs the job; Err for a job this side cannot run (bad JSON, namespace, client).
pub fn run(job: &str) -> Result<(), String> {
    let job = Job::parse(job)?;
    let url = job.str("/backend/redis").ok_or("job: backend.redis missing")?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let ck = rt.block_on(async {
        let builder = if job.secure {
            let key = job
                .str("/options/master_key")
                .ok_or("job: options.master_key missing")?;
            CacheKit::secure(url, key).await
        } else {
            CacheKit::minimal(url).await
        };
        let builder = builder.map_err(|e| e.to_string())?.no_l1();
        let builder = if job.function == KV {
            builder.namespace(KV_NAMESPACE)
        } else {
            builder
        };
        builder.build().map_err(|e| e.to_string())
    })?;
    if job.function == KV {
        return job.run_cases("rs", |key| rt.block_on(get_or_set(&ck, key)));
    }
    job.run_cases("rs", |case| rt.block_on(call(&ck, job.secure, &job.function, case)))
}
