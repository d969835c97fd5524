//! A key prefix in interop format is refused by `build()`: interop keys are
//! `{namespace}:{operation}:{hash}` with no prefix (protocol 1b; the
//! reference SDK refuses key-prefixing backends in interop mode), and a
//! prefixed key is one no other SDK reads. The check is the crate's own, so
//! it holds whatever the C library answers.
use libcachekit::{Cache, Format};

#[test]
fn interop_format_with_a_key_prefix_is_a_configuration_error() {
    let refused = Cache::builder().l1_only().key_prefix("app:").build();
    let Err(e) = refused else {
        panic!("interop + key_prefix must not build")
    };
    assert_eq!(e.name(), "InvalidArgument", "{e}");
    assert!(
        e.message().contains("key_prefix") && e.message().contains("interop"),
        "{e}"
    );
    // Saying Format::Interop explicitly is the same configuration.
    let explicit = Cache::builder()
        .format(Format::Interop)
        .backend_url("memory://")
        .key_prefix("t:default:")
        .build();
    assert_eq!(explicit.err().map(|e| e.name()), Some("InvalidArgument"));
}

#[test]
fn a_prefix_stays_allowed_where_the_protocol_allows_it() {
    // Auto format keys may carry a prefix; an empty prefix is no prefix.
    Cache::builder()
        .format(Format::Auto)
        .l1_only()
        .key_prefix("app:")
        .build()
        .expect("auto format with a prefix");
    Cache::builder()
        .l1_only()
        .key_prefix("")
        .build()
        .expect("interop with an empty prefix");
    // Plain: interop's bytes under a client namespace (cachekit-rs's layout).
    Cache::builder()
        .format(Format::Plain)
        .backend_url("memory://")
        .key_prefix("rsapp:")
        .build()
        .expect("plain format with a prefix");
}
