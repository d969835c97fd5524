//! Every typed row of interop-mode.json (key_vectors, value_vectors,
//! error_vectors) through the Rust API: `interop_key` on `Value` arguments,
//! `encode_value` / `decode_value`.
mod support;
#[path = "../examples/harness/tagged_json.rs"]
#[allow(dead_code)]
mod tagged_json;

use libcachekit::{decode_value, encode_value, interop_key, interop_key_with_canonical, Value};
use support::vectors::{interop_mode, name, rows, UNENCODABLE};
use tagged_json::{from_tagged, hex_encode, to_tagged};

#[test]
fn key_vectors() {
    let Some(file) = interop_mode() else { return };
    let mut failures = Vec::new();
    for row in rows(&file, "key_vectors") {
        let args = from_tagged(&row["args"]).unwrap_or_else(|e| panic!("{}: {e}", name(row)));
        let ns = row["namespace"].as_str().unwrap();
        let op = row["operation"].as_str().unwrap();
        match interop_key_with_canonical(ns, op, &args) {
            Ok((key, canonical)) => {
                if key != row["expected_key"].as_str().unwrap() {
                    failures.push(format!("{}: key {key}", name(row)));
                }
                if hex_encode(&canonical) != row["canonical_args_hex"].as_str().unwrap() {
                    failures.push(format!("{}: canonical {}", name(row), hex_encode(&canonical)));
                }
            }
            Err(e) => failures.push(format!("{}: {e}", name(row))),
        }
    }
    assert!(failures.is_empty(), "key vectors failed:\n{}", failures.join("\n"));
    println!("key_vectors: {} rows passed", rows(&file, "key_vectors").len());
}

#[test]
fn value_vectors_encode_and_decode() {
    let Some(file) = interop_mode() else { return };
    let mut failures = Vec::new();
    for row in rows(&file, "value_vectors") {
        let value = from_tagged(&row["value"]).unwrap();
        let want = row["canonical_msgpack_hex"].as_str().unwrap();
        match encode_value(&value) {
            Ok(bytes) if hex_encode(&bytes) == want => {
                let back: Value = decode_value(&bytes).unwrap();
                if to_tagged(&back) != row["value"] {
                    failures.push(format!("{}: decoded as {}", name(row), to_tagged(&back)));
                }
            }
            Ok(bytes) => failures.push(format!("{}: encoded {}", name(row), hex_encode(&bytes))),
            Err(e) => failures.push(format!("{}: {e}", name(row))),
        }
    }
    assert!(failures.is_empty(), "value vectors failed:\n{}", failures.join("\n"));
}

#[test]
fn error_vectors_are_rejected() {
    let Some(file) = interop_mode() else { return };
    let mut failures = Vec::new();
    for row in rows(&file, "error_vectors") {
        let ns = row.get("namespace").and_then(|v| v.as_str()).unwrap_or("users");
        let op = row.get("operation").and_then(|v| v.as_str()).unwrap_or("get_user");
        let args = match from_tagged(&row["args"]) {
            Ok(args) => args,
            Err(e) if UNENCODABLE.contains(&name(row)) => {
                assert_eq!(e.name(), "UnsupportedType", "{}", name(row));
                continue;
            }
            Err(e) => {
                failures.push(format!("{}: could not build the arguments: {e}", name(row)));
                continue;
            }
        };
        match interop_key(ns, op, &args) {
            Ok(key) => failures.push(format!("{}: accepted as {key}", name(row))),
            Err(e) => {
                // Segment rows are InvalidSegment; value rows UnsupportedType.
                let expected = if row.get("namespace").is_some() {
                    "InvalidSegment"
                } else {
                    "UnsupportedType"
                };
                if e.name() != expected || e.message().is_empty() {
                    failures.push(format!(
                        "{}: {} ({}), expected {expected}",
                        name(row),
                        e.name(),
                        e.message()
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "error vectors failed:\n{}", failures.join("\n"));
}

#[test]
fn typed_struct_arguments_match_a_key_vector() {
    // issue_example_mixed: [42, "hello", {"b": 2, "a": 1}] as a Rust tuple.
    let Some(file) = interop_mode() else { return };
    let row = rows(&file, "key_vectors")
        .iter()
        .find(|r| name(r) == "issue_example_mixed")
        .unwrap();
    #[derive(serde::Serialize)]
    struct Ab {
        b: u8,
        a: u8,
    }
    let (ns, op) = (row["namespace"].as_str().unwrap(), row["operation"].as_str().unwrap());
    let key = interop_key(ns, op, &(42u64, "hello", Ab { b: 2, a: 1 })).unwrap();
    assert_eq!(key, row["expected_key"].as_str().unwrap());
}
