//! Compile errors of `#[cached]` (trybuild; the expected messages are the
//! committed tests/ui/*.stderr files: regenerate with TRYBUILD=overwrite).
#[test]
fn cached_attribute_compile_errors() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
