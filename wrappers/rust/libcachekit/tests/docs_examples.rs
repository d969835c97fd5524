//! docs/rust.md, "The #[cached] attribute and async": every ```rust block of
//! the section is a piece of examples/cached.rs, which `cargo test` builds, so
//! the documented code compiles.
fn normalise(s: &str) -> String {
    s.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_code_block_of_the_cached_section_is_compiled_code() {
    let root = env!("CARGO_MANIFEST_DIR");
    let doc = std::fs::read_to_string(format!("{root}/../../../docs/rust.md")).expect("docs/rust.md");
    let example = normalise(&std::fs::read_to_string(format!("{root}/examples/cached.rs")).unwrap());
    let start = doc
        .find("## The #[cached] attribute and async")
        .expect("the section exists");
    let section = &doc[start..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |i| i + 3)];
    let blocks: Vec<&str> = section
        .split("```rust\n")
        .skip(1)
        .map(|b| &b[..b.find("```").unwrap()])
        .collect();
    assert!(blocks.len() >= 4, "the section shows its examples");
    for block in blocks {
        assert!(
            example.contains(&normalise(block)),
            "not in examples/cached.rs:\n{block}"
        );
    }
}
