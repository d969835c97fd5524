//! `libcachekit-interop-rust-python side '<json job>'`: our Rust `#[cached]` side of
//! tests/interop/rust_python/run.py, the Rust half of the scenarios
//! tests/interop/python_rust_interop.py runs against cachekit-rs: the same job (the one
//! tests/interop/python/side.py takes; read here: `backend.redis`, `function`
//! (one | three | var), `namespace`, `interop`, `options.encryption`,
//! `options.master_key`, `cases`) and the same answer (one JSON line: per case, whether
//! this process ran the function body and the value it got).
//!
//! Plain (`rsplain`): sync functions; encrypted (`rsvault`, the same master key, tenant
//! `default`): async functions on a current-thread Tokio runtime. L1 is off, so every
//! hit is the other side's Redis entry.
// The functions' arguments only key the entry: their bodies ignore them.
#![allow(unused_variables)]

use libcachekit::{cached, Cache, Timestamp, Value};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value as Json};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

const PLAIN_NAMESPACE: &str = "rsplain";
const SECURE_NAMESPACE: &str = "rsvault";

static RAN: AtomicUsize = AtomicUsize::new(0);
static CACHE: OnceLock<Cache> = OnceLock::new();

fn cache() -> &'static Cache {
    CACHE.get().expect("the cache is built before the first call")
}

/// The value every function returns; side.py's `rs_answer` builds the same map.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Answer {
    writer: String,
    op: String,
    tags: Vec<String>,
    score: f64,
    big: u64,
    neg: i64,
    none: Option<i64>,
    nested: BTreeMap<String, Vec<i64>>,
}

fn answer(op: &str) -> Answer {
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

// side.py's one(a), three(a, b, c=2.5) and var(*args, **kwargs).
#[cached(namespace = "rsplain", operation = "one", ttl = 600, cache = cache())]
fn plain_one(a: Value) -> Answer {
    answer("one")
}
#[cached(namespace = "rsplain", operation = "three", ttl = 600, cache = cache())]
fn plain_three(a: i64, b: String, c: f64) -> Answer {
    answer("three")
}
#[cached(namespace = "rsplain", operation = "var", ttl = 600, cache = cache())]
fn plain_var(args: Vec<Value>, kwargs: BTreeMap<String, Value>) -> Answer {
    answer("var")
}
#[cached(namespace = "rsvault", operation = "one", ttl = 600, cache = cache())]
async fn secure_one(a: Value) -> Answer {
    answer("one")
}
#[cached(namespace = "rsvault", operation = "three", ttl = 600, cache = cache())]
async fn secure_three(a: i64, b: String, c: f64) -> Answer {
    answer("three")
}
#[cached(namespace = "rsvault", operation = "var", ttl = 600, cache = cache())]
async fn secure_var(args: Vec<Value>, kwargs: BTreeMap<String, Value>) -> Answer {
    answer("var")
}

fn s(x: &str) -> Value {
    Value::Str(x.into())
}
fn map(pairs: Vec<(&str, Value)>) -> Value {
    Value::Map(pairs.into_iter().map(|(k, v)| (s(k), v)).collect())
}

/// side.py's `CASES[case]` single argument.
fn one_arg(case: &str) -> Option<Value> {
    use Value::{Array, Bool, Bytes, Float, Int, Nil, UInt};
    Some(match case {
        "int" => Int(42),
        "bigint" => UInt(u64::MAX - 1),
        "negint" => Int(i64::MIN),
        "float" => Float(3.25),
        "negzero" => Float(-0.0),
        "str" => s("h\u{e9}llo w\u{f6}rld"),
        "bytes" => Bytes(vec![0, 1, 0xfe]),
        "none" => Nil,
        "bool" => Bool(true),
        "list" => Array(vec![Int(1), s("a"), Nil]),
        "tuple" => Array(vec![Int(1), Int(2), s("b")]),
        "dict" => map(vec![("b", Int(1)), ("a", Array(vec![Int(2), Int(3)]))]),
        "nested" => map(vec![
            ("x", Array(vec![Int(1), map(vec![("y", Array(vec![Int(2), Float(3.5)]))])])),
            ("a", map(vec![("c", Bytes(b"z".to_vec()))])),
        ]),
        // 2026-03-04T05:06:07.000890Z
        "datetime" => Value::Timestamp(Timestamp {
            seconds: 1_772_600_767,
            nanoseconds: 890_000,
        }),
        "set" => Value::Set(vec![Int(1), Int(2), Int(3)]),
        "uuid" => s("12345678-1234-5678-1234-567812345678"), // UUIDs key as their lowercase text
        _ => return None,
    })
}

/// side.py's `RS_CASES`: the arguments of three() and var().
fn three_args(case: &str) -> Option<f64> {
    // "defaults": Python binds c=2.5 from the signature; "all": passed explicitly.
    match case {
        "defaults" => Some(2.5),
        "all" => Some(0.25),
        _ => None,
    }
}

fn var_args(case: &str) -> Option<(Vec<Value>, BTreeMap<String, Value>)> {
    match case {
        "varargs" => Some((vec![Value::Int(1), s("two")], BTreeMap::from([("k".to_string(), s("v"))]))),
        "empty" => Some((vec![], BTreeMap::new())),
        _ => None,
    }
}

fn call(rt: &tokio::runtime::Runtime, secure: bool, function: &str, case: &str) -> Result<Answer, String> {
    let unknown = || format!("unknown case {case} of {function}");
    Ok(match function {
        "one" => {
            let a = one_arg(case).ok_or_else(unknown)?;
            if secure { rt.block_on(secure_one(a)) } else { plain_one(a) }
        }
        "three" => {
            let c = three_args(case).ok_or_else(unknown)?;
            let b = "x".to_string();
            if secure { rt.block_on(secure_three(1, b, c)) } else { plain_three(1, b, c) }
        }
        "var" => {
            let (args, kwargs) = var_args(case).ok_or_else(unknown)?;
            if secure { rt.block_on(secure_var(args, kwargs)) } else { plain_var(args, kwargs) }
        }
        _ => return Err(format!("unknown function {function}")),
    })
}

fn str_at<'a>(job: &'a Json, path: &[&str]) -> Option<&'a str> {
    path.iter().try_fold(job, |v, k| v.get(k))?.as_str()
}

/// Runs the job; Err for a job this side cannot run (bad JSON, namespace, cache).
fn run(job: &str) -> Result<(), String> {
    let job: Json = serde_json::from_str(job).map_err(|e| format!("job: {e}"))?;
    let url = str_at(&job, &["backend", "redis"]).ok_or("job: backend.redis missing")?;
    let function = str_at(&job, &["function"]).ok_or("job: function missing")?;
    let secure = job.pointer("/options/encryption").and_then(Json::as_bool).unwrap_or(false);
    let namespace = if secure { SECURE_NAMESPACE } else { PLAIN_NAMESPACE };
    if str_at(&job, &["namespace"]) != Some(namespace) || str_at(&job, &["interop"]) != Some(function) {
        return Err(format!("job: the functions here are namespace {namespace}, operation = function"));
    }
    let mut builder = Cache::builder().backend_url(url).l1(false).fail_closed(true);
    if secure {
        let key = str_at(&job, &["options", "master_key"]).ok_or("job: options.master_key missing")?;
        builder = builder.encryption(key);
    }
    let cache = builder.build().map_err(|e| e.to_string())?;
    CACHE.set(cache).map_err(|_| "the cache was already built")?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .map_err(|e| e.to_string())?;
    let cases = job.get("cases").and_then(Json::as_array).ok_or("job: cases missing")?;
    let mut results = Vec::new();
    for case in cases {
        let case = case.as_str().ok_or("job: a case is not a string")?;
        let before = RAN.load(Ordering::SeqCst);
        let got = call(&rt, secure, function, case);
        let ran = RAN.load(Ordering::SeqCst) > before;
        results.push(match got {
            Ok(v) => json!({"case": case, "ran": ran, "value": v}),
            Err(e) => json!({"case": case, "error": e}),
        });
    }
    println!("{}", json!({"side": "rs", "results": results}));
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let outcome = match args.as_slice() {
        [cmd, job] if cmd == "side" => run(job),
        _ => Err("usage: libcachekit-interop-rust-python side '<json job>'".into()),
    };
    if let Err(e) = outcome {
        eprintln!("libcachekit-interop-rust-python: {e}");
        std::process::exit(2);
    }
}
