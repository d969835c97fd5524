//! `libcachekit-interop-rust side '<json job>'`: cachekit-rs 0.9.0's side of the
//! Python <-> Rust interop scenarios (tests/interop/python_rust_interop.py). The job is
//! the one tests/interop/python/side.py takes; this side reads `backend.redis`,
//! `function` (one | three | var), `namespace`, `interop`, `options.encryption`,
//! `options.master_key`, `cases`. Prints one JSON line: per case, whether this process
//! ran the function body and the value it got (as JSON).
//!
//! The namespace and operation are literals in cachekit-rs's attribute, so the job's
//! must be the ones below; the argument cases mirror side.py's `CASES` / `RS_CASES`.
// The functions' arguments only key the entry: their bodies ignore them.
#![allow(unused_variables)]

use cachekit::interop::InteropValue;
use cachekit::{CacheKit, CachekitError};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};

pub const PLAIN_NAMESPACE: &str = "rsplain";
pub const SECURE_NAMESPACE: &str = "rsvault";

static RAN: AtomicUsize = AtomicUsize::new(0);

/// The value every function returns; side.py's `rs_answer` builds the same map.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Answer {
    writer: String,
    op: String,
    tags: Vec<String>,
    score: f64,
    big: u64,
    neg: i64,
    none: Option<i64>,
    nested: BTreeMap<String, Vec<i64>>,
}

fn answer(op: &str) -> Result<Answer, CachekitError> {
    Ok(answer_value(op))
}

/// How many times a function body ran in this process (ours_side.rs's too).
pub fn runs() -> usize {
    RAN.load(Ordering::SeqCst)
}

/// Every function's value, counted as a run.
pub fn answer_value(op: &str) -> Answer {
    RAN.fetch_add(1, Ordering::SeqCst);
    Answer {
        writer: "rs".into(),
        op: op.into(),
        tags: vec!["a".into(), "b".into()],
        score: 1.5,
        big: u64::MAX,
        neg: i64::MIN,
        none: None,
        nested: BTreeMap::from([("k".to_string(), vec![1, 2])]),
    }
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
            ("x", V::Array(vec![int(1), map(vec![("y", V::Array(vec![int(2), V::Float(3.5)]))])])),
            ("a", map(vec![("c", V::bytes(b"z".to_vec()))])),
        ]),
        // 2026-03-04T05:06:07.000890Z
        "datetime" => V::datetime_from_unix_micros(1_772_600_767_000_890),
        "set" => V::Set(vec![int(1), int(2), int(3)]),
        "uuid" => V::Uuid("12345678-1234-5678-1234-567812345678".parse().ok()?),
        _ => return None,
    })
}

fn str_at<'a>(job: &'a Value, path: &[&str]) -> Option<&'a str> {
    path.iter().try_fold(job, |v, k| v.get(k))?.as_str()
}

async fn call(ck: &CacheKit, secure: bool, function: &str, case: &str) -> Result<Answer, String> {
    let e = |e: CachekitError| e.to_string();
    match (function, secure) {
        ("one", _) => {
            let a = one_arg(case).ok_or_else(|| format!("unknown case {case}"))?;
            if secure { secure_one(ck, a).await } else { plain_one(ck, a).await }.map_err(e)
        }
        ("three", _) => {
            // "defaults": Python binds c=2.5 from the signature; "all": passed explicitly.
            let c = match case {
                "defaults" => 2.5,
                "all" => 0.25,
                _ => return Err(format!("unknown case {case}")),
            };
            let b = "x".to_string();
            if secure { secure_three(ck, 1, b, c).await } else { plain_three(ck, 1, b, c).await }.map_err(e)
        }
        ("var", _) => {
            let (args, kwargs) = match case {
                "varargs" => (vec![int(1), s("two")], BTreeMap::from([("k".to_string(), s("v"))])),
                "empty" => (vec![], BTreeMap::new()),
                _ => return Err(format!("unknown case {case}")),
            };
            if secure { secure_var(ck, args, kwargs).await } else { plain_var(ck, args, kwargs).await }.map_err(e)
        }
        _ => Err(format!("unknown function {function}")),
    }
}

/// Runs the job; Err for a job this side cannot run (bad JSON, namespace, client).
pub fn run(job: &str) -> Result<(), String> {
    let job: Value = serde_json::from_str(job).map_err(|e| format!("job: {e}"))?;
    let url = str_at(&job, &["backend", "redis"]).ok_or("job: backend.redis missing")?;
    let function = str_at(&job, &["function"]).ok_or("job: function missing")?;
    let secure = job.pointer("/options/encryption").and_then(Value::as_bool).unwrap_or(false);
    let namespace = if secure { SECURE_NAMESPACE } else { PLAIN_NAMESPACE };
    if str_at(&job, &["namespace"]) != Some(namespace) || str_at(&job, &["interop"]) != Some(function) {
        return Err(format!("job: cachekit-rs's functions here are namespace {namespace}, interop = function"));
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let ck = rt.block_on(async {
        let builder = if secure {
            let key = str_at(&job, &["options", "master_key"]).ok_or("job: options.master_key missing")?;
            CacheKit::secure(url, key).await
        } else {
            CacheKit::minimal(url).await
        };
        builder.map_err(|e| e.to_string())?.no_l1().build().map_err(|e| e.to_string())
    })?;
    let cases = job.get("cases").and_then(Value::as_array).ok_or("job: cases missing")?;
    let mut results = Vec::new();
    for case in cases {
        let case = case.as_str().ok_or("job: a case is not a string")?;
        let before = RAN.load(Ordering::SeqCst);
        let got = rt.block_on(call(&ck, secure, function, case));
        let ran = RAN.load(Ordering::SeqCst) > before;
        results.push(match got {
            Ok(v) => json!({"case": case, "ran": ran, "value": v}),
            Err(e) => json!({"case": case, "error": e}),
        });
    }
    println!("{}", json!({"side": "rs", "results": results}));
    Ok(())
}
