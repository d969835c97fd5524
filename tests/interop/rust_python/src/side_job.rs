//! What every Rust side of the interop scenarios (tests/interop/rs_scenarios.py) shares:
//! the job it takes (tests/interop/python/side.py's: `backend`, `function`
//! one | three | var, `namespace`, `interop`, `options`, `cases`), the value its
//! functions return, the count of their runs, and the one JSON line it prints (per
//! case, whether this process ran the function body and the value it got).
//! tests/interop/rust includes this file with #[path].
use serde::{Deserialize, Serialize};
use serde_json::{json, Value as Json};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};

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

/// Every function's value, counted as a run.
pub fn answer(op: &str) -> Answer {
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

/// side.py's `RS_CASES` of three(a, b, c=2.5): its `c` ("defaults": Python binds 2.5
/// from the signature; "all": passed explicitly).
pub fn three_c(case: &str) -> Option<f64> {
    match case {
        "defaults" => Some(2.5),
        "all" => Some(0.25),
        _ => None,
    }
}

/// The job function of the namespaced entries (rs_scenarios.py's run_namespaced_pair):
/// each case is a key under the client namespace KV_NAMESPACE.
pub const KV: &str = "kv";
pub const KV_NAMESPACE: &str = "rsapp";

/// A job, checked against the functions' literal namespaces (rsplain plain, rsvault
/// encrypted) and operation (the job's `function`).
pub struct Job {
    pub json: Json,
    pub function: String,
    pub secure: bool,
}

impl Job {
    pub fn parse(job: &str) -> Result<Job, String> {
        let json: Json = serde_json::from_str(job).map_err(|e| format!("job: {e}"))?;
        let function = str_at(&json, "/function").ok_or("job: function missing")?.to_string();
        let secure = json
            .pointer("/options/encryption")
            .and_then(Json::as_bool)
            .unwrap_or(false);
        if function == KV {
            // Namespaced entries: the client namespace is the job's, no interop operation.
            if str_at(&json, "/namespace") != Some(KV_NAMESPACE) || !json.pointer("/interop").is_none_or(Json::is_null)
            {
                return Err(format!(
                    "job: kv entries are under namespace {KV_NAMESPACE}, interop null"
                ));
            }
            return Ok(Job { json, function, secure });
        }
        let namespace = if secure { "rsvault" } else { "rsplain" };
        if str_at(&json, "/namespace") != Some(namespace) || str_at(&json, "/interop") != Some(&function) {
            return Err(format!(
                "job: the functions here are namespace {namespace}, interop = function"
            ));
        }
        Ok(Job { json, function, secure })
    }

    /// The string at a JSON pointer ("/options/master_key").
    pub fn str(&self, pointer: &str) -> Option<&str> {
        str_at(&self.json, pointer)
    }

    /// Calls `call(case)` for each case and prints the side's line.
    pub fn run_cases(&self, side: &str, mut call: impl FnMut(&str) -> Result<Answer, String>) -> Result<(), String> {
        let cases = self
            .json
            .get("cases")
            .and_then(Json::as_array)
            .ok_or("job: cases missing")?;
        let mut results = Vec::new();
        for case in cases {
            let case = case.as_str().ok_or("job: a case is not a string")?;
            let before = RAN.load(Ordering::SeqCst);
            let got = call(case);
            let ran = RAN.load(Ordering::SeqCst) > before;
            results.push(match got {
                Ok(v) => json!({"case": case, "ran": ran, "value": v}),
                Err(e) => json!({"case": case, "error": e}),
            });
        }
        println!("{}", json!({"side": side, "results": results}));
        Ok(())
    }
}

fn str_at<'a>(json: &'a Json, pointer: &str) -> Option<&'a str> {
    json.pointer(pointer)?.as_str()
}
