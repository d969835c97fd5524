//! `libcachekit-interop-rust ours-side '<json job>'`: our Rust wrapper's `#[cached]`
//! side of the Go <-> Rust interop (tests/interop/go_rust/run.py). The job is py_side.rs's
//! (`function` one | three, `namespace` rsplain | rsvault, `options.encryption`,
//! `options.master_key`, `options.tenant`, `cases`) with `backend.redis` or
//! `backend.file` (a directory); the output line is py_side.rs's too.
use crate::py_side::{Answer, PLAIN_NAMESPACE, SECURE_NAMESPACE};
use libcachekit::{cached, Cache, Timestamp, Value as V};
use serde_json::{json, Value};
use std::sync::OnceLock;

static CACHE: OnceLock<Cache> = OnceLock::new();

// The functions' arguments only key the entry: their bodies ignore them.
#[cached(namespace = "rsplain", operation = "one", ttl = 600, cache = CACHE.get().unwrap())]
fn plain_one(_a: V) -> Answer {
    crate::py_side::answer_value("one")
}
#[cached(namespace = "rsplain", operation = "three", ttl = 600, cache = CACHE.get().unwrap())]
fn plain_three(_a: i64, _b: String, _c: f64) -> Answer {
    crate::py_side::answer_value("three")
}
#[cached(namespace = "rsvault", operation = "one", ttl = 600, cache = CACHE.get().unwrap())]
fn secure_one(_a: V) -> Answer {
    crate::py_side::answer_value("one")
}
#[cached(namespace = "rsvault", operation = "three", ttl = 600, cache = CACHE.get().unwrap())]
fn secure_three(_a: i64, _b: String, _c: f64) -> Answer {
    crate::py_side::answer_value("three")
}

fn int(i: i64) -> V {
    V::Int(i)
}
fn s(x: &str) -> V {
    V::Str(x.into())
}
fn map(pairs: Vec<(&str, V)>) -> V {
    V::Map(pairs.into_iter().map(|(k, v)| (s(k), v)).collect())
}

/// py_side.rs's `one_arg(case)` in our wrapper's dynamic value.
fn one_arg(case: &str) -> Option<V> {
    Some(match case {
        "int" => int(42),
        "bigint" => V::UInt(u64::MAX - 1),
        "negint" => int(i64::MIN),
        "float" => V::Float(3.25),
        "negzero" => V::Float(-0.0),
        "str" => s("h\u{e9}llo w\u{f6}rld"),
        "bytes" => V::Bytes(vec![0u8, 1, 0xfe]),
        "none" => V::Nil,
        "bool" => V::Bool(true),
        "list" => V::Array(vec![int(1), s("a"), V::Nil]),
        "tuple" => V::Array(vec![int(1), int(2), s("b")]),
        "dict" => map(vec![("b", int(1)), ("a", V::Array(vec![int(2), int(3)]))]),
        "nested" => map(vec![
            (
                "x",
                V::Array(vec![int(1), map(vec![("y", V::Array(vec![int(2), V::Float(3.5)]))])]),
            ),
            ("a", map(vec![("c", V::Bytes(b"z".to_vec()))])),
        ]),
        // 2026-03-04T05:06:07.000890Z
        "datetime" => V::Timestamp(Timestamp {
            seconds: 1_772_600_767,
            nanoseconds: 890_000,
        }),
        "set" => V::Set(vec![int(1), int(2), int(3)]),
        // The interop model keys a UUID as its lowercase hyphenated string.
        "uuid" => s("12345678-1234-5678-1234-567812345678"),
        _ => return None,
    })
}

fn call(secure: bool, function: &str, case: &str) -> Result<Answer, String> {
    match function {
        "one" => {
            let a = one_arg(case).ok_or_else(|| format!("unknown case {case}"))?;
            Ok(if secure { secure_one(a) } else { plain_one(a) })
        }
        "three" => {
            let c = match case {
                "defaults" => 2.5,
                "all" => 0.25,
                _ => return Err(format!("unknown case {case}")),
            };
            let b = "x".to_string();
            Ok(if secure {
                secure_three(1, b, c)
            } else {
                plain_three(1, b, c)
            })
        }
        _ => Err(format!("unknown function {function}")),
    }
}

fn str_at<'a>(job: &'a Value, pointer: &str) -> Option<&'a str> {
    job.pointer(pointer)?.as_str()
}

/// Runs the job; Err for a job this side cannot run.
pub fn run(job: &str) -> Result<(), String> {
    let job: Value = serde_json::from_str(job).map_err(|e| format!("job: {e}"))?;
    let url = match (str_at(&job, "/backend/redis"), str_at(&job, "/backend/file")) {
        (Some(redis), _) => redis.to_string(),
        (None, Some(dir)) => format!("file://{dir}"),
        _ => return Err("job: backend.redis or backend.file missing".into()),
    };
    let function = str_at(&job, "/function").ok_or("job: function missing")?;
    let secure = job
        .pointer("/options/encryption")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let namespace = if secure { SECURE_NAMESPACE } else { PLAIN_NAMESPACE };
    if str_at(&job, "/namespace") != Some(namespace) {
        return Err(format!("job: our functions here are namespace {namespace}"));
    }
    // Fail closed and no L1: a read must come from the backend, an error must show.
    let mut builder = Cache::builder().backend_url(url).l1(false).fail_closed(true);
    if secure {
        builder = builder.encryption(str_at(&job, "/options/master_key").ok_or("job: options.master_key missing")?);
        if let Some(tenant) = str_at(&job, "/options/tenant") {
            builder = builder.tenant(tenant);
        }
    }
    CACHE
        .set(builder.build().map_err(|e| e.to_string())?)
        .map_err(|_| "one job per process")?;
    let cases = job.get("cases").and_then(Value::as_array).ok_or("job: cases missing")?;
    let mut results = Vec::new();
    for case in cases {
        let case = case.as_str().ok_or("job: a case is not a string")?;
        let before = crate::py_side::runs();
        results.push(match call(secure, function, case) {
            Ok(v) => json!({"case": case, "ran": crate::py_side::runs() > before, "value": v}),
            Err(e) => json!({"case": case, "error": e}),
        });
    }
    println!("{}", json!({"side": "ours-rs", "results": results}));
    Ok(())
}
