//! Every struct of cachekit.h has the size and field offsets here that the C
//! compiler gives the real header (layout/layout.c, built by build.rs).
use core::ffi::{c_char, CStr};
use libcachekit_sys::*;

include!("../layout/table.rs");

#[repr(C)]
struct Entry {
    name: *const c_char,
    value: usize,
}

extern "C" {
    static ck_layout_entries: [Entry; 0];
    static ck_layout_count: usize;
}

fn c_layout() -> Vec<(String, usize)> {
    // SAFETY: layout.c defines ck_layout_count entries of static strings.
    unsafe {
        let entries = core::slice::from_raw_parts(ck_layout_entries.as_ptr(), ck_layout_count);
        entries
            .iter()
            .map(|e| (CStr::from_ptr(e.name).to_str().unwrap().to_owned(), e.value))
            .collect()
    }
}

#[test]
fn every_struct_matches_the_header() {
    let c = c_layout();
    let rust: &[(&str, usize)] = rust_layout!();
    assert_eq!(
        c.len(),
        rust.len(),
        "the C probe and the Rust table list different fields"
    );
    let mut mismatches = Vec::new();
    for ((c_name, c_value), (r_name, r_value)) in c.iter().zip(rust) {
        assert_eq!(c_name, r_name, "the C probe and the Rust table are out of order");
        if c_value != r_value {
            mismatches.push(format!("{c_name}: C {c_value}, Rust {r_value}"));
        }
    }
    assert!(
        mismatches.is_empty(),
        "layout differs from cachekit.h:\n{}",
        mismatches.join("\n")
    );
    // Eleven structs (cachekit_health since 0.2), each with its size checked.
    assert_eq!(c.iter().filter(|(n, _)| !n.contains('.')).count(), 11);
}

#[test]
fn init_constants_match_the_macros() {
    let err = cachekit_error::INIT;
    assert_eq!(err.struct_size, core::mem::size_of::<cachekit_error>());
    let health = cachekit_health::INIT;
    assert_eq!(health.struct_size, core::mem::size_of::<cachekit_health>());
    let lookup = cachekit_lookup::INIT;
    assert_eq!(lookup.age_seconds, -1.0);
    assert_eq!(lookup.temporal_keys, -1);
}
