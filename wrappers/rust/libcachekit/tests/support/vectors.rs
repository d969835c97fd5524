//! Finding and reading interop-mode.json (as the C suites do:
//! CACHEKIT_VECTORS_DIR, then meson's CACHEKIT_VECTORS_DIR_DEFAULT, else
//! ../shared/vectors/upstream beside the repository root).
use serde_json::Value as Json;
use std::path::PathBuf;

pub fn vectors_dir() -> PathBuf {
    for var in ["CACHEKIT_VECTORS_DIR", "CACHEKIT_VECTORS_DIR_DEFAULT"] {
        if let Some(dir) = std::env::var_os(var).filter(|d| !d.is_empty()) {
            return PathBuf::from(dir);
        }
    }
    // wrappers/rust/libcachekit -> the repository root, then ../shared.
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../../shared/vectors/upstream")
}

/// interop-mode.json, or None (with a message) when the vectors are absent;
/// the suite's script then reports itself skipped.
pub fn interop_mode() -> Option<Json> {
    vector_file("interop-mode.json")
}

/// wire-format.json (its temporal sentinels concern every wrapper).
#[allow(dead_code)]
pub fn wire_format() -> Option<Json> {
    vector_file("wire-format.json")
}

/// decode-bounds.json (hostile documents every decoder must refuse).
#[allow(dead_code)]
pub fn decode_bounds() -> Option<Json> {
    vector_file("decode-bounds.json")
}

fn vector_file(file: &str) -> Option<Json> {
    let path = vectors_dir().join(file);
    match std::fs::read_to_string(&path) {
        Ok(text) => Some(serde_json::from_str(&text).unwrap_or_else(|e| panic!("{file} is not JSON: {e}"))),
        Err(e) => {
            eprintln!("SKIP: no vectors at {} ({e}); set CACHEKIT_VECTORS_DIR", path.display());
            None
        }
    }
}

pub fn rows<'a>(file: &'a Json, category: &str) -> &'a Vec<Json> {
    file[category]
        .as_array()
        .unwrap_or_else(|| panic!("{category} is not a list"))
}

pub fn name(row: &Json) -> &str {
    row["name"].as_str().unwrap_or("?")
}

/// Error rows whose arguments cannot be built as Rust values at all
/// (rejected before the core, as in tests/conformance/test_interop_mode.cpp).
pub const UNENCODABLE: &[&str] = &[
    "reject_int_overflow",
    "reject_int_underflow",
    "reject_int_overflow_in_list",
    "reject_int_underflow_in_map",
    "reject_int_overflow_in_map",
    "reject_int_underflow_in_list",
    "reject_naive_datetime",
    "reject_naive_datetime_nested",
];
