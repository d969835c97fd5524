//! Our Rust wrapper's `#[cached]` side of the interop scenarios
//! (tests/interop/rs_scenarios.py): side.py's one(a), three(a, b, c=2.5) and
//! var(*args, **kwargs) in namespace rsplain (sync functions) and rsvault (encrypted:
//! async functions on a current-thread Tokio runtime; `options.master_key`, and
//! `options.tenant` or the default one). The backend is the job's `backend.redis` or
//! `backend.file` (a directory). L1 is off and errors fail closed, so every hit is the
//! other side's entry and every error shows. The `side` of this crate's program, the
//! `ours-side` of tests/interop/rust's (which includes this file with #[path]).
// The functions' arguments only key the entry: their bodies ignore them.
#![allow(unused_variables)]

use crate::side_job::{answer, three_c, Answer, Job, KV, KV_NAMESPACE};
use libcachekit::{cached, Cache, Timestamp, Value};
use std::collections::BTreeMap;
use std::sync::OnceLock;
use std::time::Duration;

static CACHE: OnceLock<Cache> = OnceLock::new();

fn cache() -> &'static Cache {
    CACHE.get().expect("the cache is built before the first call")
}

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
            (
                "x",
                Array(vec![Int(1), map(vec![("y", Array(vec![Int(2), Float(3.5)]))])]),
            ),
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

/// side.py's `RS_CASES` of var(*args, **kwargs).
fn var_args(case: &str) -> Option<(Vec<Value>, BTreeMap<String, Value>)> {
    match case {
        "varargs" => Some((
            vec![Value::Int(1), s("two")],
            BTreeMap::from([("k".to_string(), s("v"))]),
        )),
        "empty" => Some((vec![], BTreeMap::new())),
        _ => None,
    }
}

fn call(rt: &tokio::runtime::Runtime, secure: bool, function: &str, case: &str) -> Result<Answer, String> {
    let unknown = || format!("unknown case {case} of {function}");
    Ok(match function {
        "one" => {
            let a = one_arg(case).ok_or_else(unknown)?;
            if secure {
                rt.block_on(secure_one(a))
            } else {
                plain_one(a)
            }
        }
        "three" => {
            let c = three_c(case).ok_or_else(unknown)?;
            let b = "x".to_string();
            if secure {
                rt.block_on(secure_three(1, b, c))
            } else {
                plain_three(1, b, c)
            }
        }
        "var" => {
            let (args, kwargs) = var_args(case).ok_or_else(unknown)?;
            if secure {
                rt.block_on(secure_var(args, kwargs))
            } else {
                plain_var(args, kwargs)
            }
        }
        _ => return Err(format!("unknown function {function}")),
    })
}

/// The namespaced entry under `key`, or (a miss) the computed one, stored.
fn get_or_set(key: &str) -> Result<Answer, String> {
    if let Some(found) = cache().get::<Answer>(KV_NAMESPACE, key).map_err(|e| e.to_string())? {
        return Ok(found);
    }
    let value = answer(KV);
    cache()
        .set(KV_NAMESPACE, key, &value, Some(Duration::from_secs(600)))
        .map_err(|e| e.to_string())?;
    Ok(value)
}

/// Runs the job; Err for a job this side cannot run (bad JSON, namespace, cache).
pub fn run(job: &str) -> Result<(), String> {
    let job = Job::parse(job)?;
    let url = match (job.str("/backend/redis"), job.str("/backend/file")) {
        (Some(redis), _) => redis.to_string(),
        (None, Some(dir)) => format!("file://{dir}"),
        _ => return Err("job: backend.redis or backend.file missing".into()),
    };
    let mut builder = Cache::builder().backend_url(url).l1(false).fail_closed(true);
    if job.secure {
        builder = builder.encryption(
            job.str("/options/master_key")
                .ok_or("job: options.master_key missing")?,
        );
        if let Some(tenant) = job.str("/options/tenant") {
            builder = builder.tenant(tenant);
        }
    }
    if job.function == KV {
        builder = builder
            .format(libcachekit::Format::Plain)
            .key_prefix(format!("{KV_NAMESPACE}:"));
    }
    CACHE
        .set(builder.build().map_err(|e| e.to_string())?)
        .map_err(|_| "one job per process")?;
    if job.function == KV {
        return job.run_cases("ours-rs", get_or_set);
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .map_err(|e| e.to_string())?;
    job.run_cases("ours-rs", |case| call(&rt, job.secure, &job.function, case))
}
