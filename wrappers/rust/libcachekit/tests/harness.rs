//! The harness example speaks wrapper-harness.md: every typed row of
//! interop-mode.json (keys, values, errors) and its reader rows
//! (reader_accept_vectors, reader_reject_vectors) fed through it as one session.
mod support;

use serde_json::{json, Value as Json};
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use support::vectors::{interop_mode, name, rows, UNENCODABLE};

/// cargo test builds the examples next to the test binaries' folder.
fn harness_binary() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap().parent().unwrap();
    let path = dir.join("examples").join("harness");
    assert!(
        path.exists(),
        "{} is missing: run through `cargo test` (which builds the examples)",
        path.display()
    );
    path
}

fn run(requests: &[Json]) -> Vec<Json> {
    let mut child = Command::new(harness_binary())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("the harness starts");
    let mut stdin = child.stdin.take().unwrap();
    let input: String = requests.iter().map(|r| format!("{r}\n")).collect::<String>() + "not json\n";
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(out.status.success());
    let lines: Vec<Json> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), requests.len() + 1, "one response per line");
    assert_eq!(lines.last().unwrap()["error"], "BadRequest");
    lines
}

#[test]
fn every_typed_row_of_interop_mode() {
    let Some(file) = interop_mode() else { return };
    let mut requests = Vec::new();
    let mut expect: Vec<(String, Json)> = Vec::new();
    for row in rows(&file, "key_vectors") {
        requests.push(
            json!({"id": requests.len(), "op": "key.interop.typed", "namespace": row["namespace"],
                             "operation": row["operation"], "args_json": row["args"]}),
        );
        expect.push((name(row).into(), json!({"ok": true, "key": row["expected_key"]})));
    }
    for row in rows(&file, "value_vectors") {
        requests.push(json!({"id": requests.len(), "op": "value.encode", "value_json": row["value"]}));
        expect.push((
            name(row).into(),
            json!({"ok": true, "data": row["canonical_msgpack_hex"]}),
        ));
        requests.push(json!({"id": requests.len(), "op": "value.decode", "data": row["canonical_msgpack_hex"]}));
        expect.push((name(row).into(), json!({"ok": true, "value_json": row["value"]})));
    }
    for row in rows(&file, "error_vectors") {
        let has_segments = row.get("namespace").is_some();
        requests.push(json!({"id": requests.len(), "op": "key.interop.typed",
                             "namespace": row.get("namespace").unwrap_or(&json!("users")),
                             "operation": row.get("operation").unwrap_or(&json!("get_user")),
                             "args_json": row["args"]}));
        let error = if has_segments {
            "InvalidSegment"
        } else {
            "UnsupportedType"
        };
        expect.push((name(row).into(), json!({"ok": false, "error": error})));
    }
    // The reader rows: every accept document decodes (to the row's tagged
    // value where it has one), every reject document is refused.
    for row in rows(&file, "reader_accept_vectors") {
        requests.push(json!({"id": requests.len(), "op": "value.decode", "data": row["input_hex"]}));
        let want = match row.get("value") {
            Some(value) => json!({"ok": true, "value_json": value}),
            None => json!({"ok": true}),
        };
        expect.push((name(row).into(), want));
    }
    for row in rows(&file, "reader_reject_vectors") {
        requests.push(json!({"id": requests.len(), "op": "value.decode", "data": row["input_hex"]}));
        expect.push((name(row).into(), json!({"ok": false})));
    }
    let responses = run(&requests);
    let mut failures = Vec::new();
    for (i, ((row, want), got)) in expect.iter().zip(&responses).enumerate() {
        assert_eq!(got["id"], i, "responses in order");
        for (field, value) in want.as_object().unwrap() {
            if &got[field] != value {
                failures.push(format!("{row}: {field} = {}, expected {value} ({got})", got[field]));
            }
        }
        if got["ok"] == false && got["message"].as_str().unwrap_or("").is_empty() {
            failures.push(format!("{row}: an error without a message"));
        }
    }
    assert!(failures.is_empty(), "harness rows failed:\n{}", failures.join("\n"));
    let _ = UNENCODABLE; // same rule as interop_vectors.rs: refused as UnsupportedType
}

#[test]
fn codec_ops_and_bad_requests() {
    let Some(file) = interop_mode() else { return };
    let enc = &rows(&file, "encryption_vectors")[0];
    let requests = vec![
        json!({"id": "a", "op": "key.interop", "namespace": "users", "operation": "get_user", "args": "91cd002a"}),
        json!({"id": "b", "op": "crypto.decrypt", "master_key": enc["master_key_hex"], "tenant": enc["tenant_id"],
               "aad": enc["aad_hex"], "ciphertext": enc["ciphertext_hex"]}),
        json!({"id": "c", "op": "no.such.op"}),
        json!({"id": "d", "op": "value.decode", "data": "zz"}),
        json!({"id": "e", "op": "envelope.unwrap", "envelope": "c0"}),
    ];
    let r = run(&requests);
    assert_eq!(
        r[0]["key"],
        "users:get_user:61598716255080080f6456eb065c2e51badfaa4320b0efe97469c29cffee8875"
    );
    assert_eq!(r[0]["canonical"], "912a");
    assert_eq!(r[1]["plaintext"], enc["plaintext_hex"]);
    assert_eq!(r[1]["key_index"], 0);
    assert_eq!(r[2]["error"], "BadRequest");
    assert_eq!(r[3]["error"], "BadRequest");
    assert_eq!(r[4]["ok"], false);
    assert_eq!(r[4]["id"], "e");
}
