//! The interop/v1 rule for the namespace and operation segments of a key
//! (shared/spec/protocol.md section 1b), checked at compile time so a bad
//! literal never reaches a running program.

/// `None` when `s` is a valid segment, else why not.
pub fn segment_problem(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    if bytes.is_empty() {
        return Some("is empty".into());
    }
    if bytes.len() > 64 {
        return Some(format!("is {} characters long (at most 64)", bytes.len()));
    }
    let lower_digit = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    if !lower_digit(bytes[0]) {
        return Some("must start with a lowercase ASCII letter or a digit".into());
    }
    if let Some(c) = s
        .chars()
        .find(|&c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-')))
    {
        return Some(format!("contains {c:?} (allowed: a-z 0-9 . _ -)"));
    }
    if s.contains("..") {
        return Some("contains \"..\"".into());
    }
    None
}

/// The namespace rule: a segment that is not one of the reserved names.
pub fn namespace_problem(s: &str) -> Option<String> {
    if s == "ns" || s == "nsapi" {
        return Some(format!("{s:?} is reserved"));
    }
    segment_problem(s)
}
