//! Errors carry the C status name and the message of the same call.
use libcachekit::codec::{envelope_unwrap, frame_decode, Keyring};
use libcachekit::{decode_value, interop_key, Cache, Error};

#[test]
fn names_codes_and_messages() {
    let e = interop_key("Users", "get", &[0u8; 0]).unwrap_err();
    assert!(matches!(e, Error::InvalidSegment { .. }));
    assert_eq!((e.name(), e.code()), ("InvalidSegment", -19));
    assert!(!e.message().is_empty());
    assert_eq!(e.to_string(), format!("InvalidSegment: {}", e.message()));

    let e = interop_key("users", "get", &(f64::NAN,)).unwrap_err();
    assert_eq!(e.name(), "UnsupportedType");

    let e = envelope_unwrap(&[0xc0]).unwrap_err();
    assert!(e.code() < 0 && !e.message().is_empty(), "{e:?}");

    let e = frame_decode(b"XX").unwrap_err();
    assert_eq!(e.name(), "InvalidFrame");

    let e = Keyring::new("not hex", &[]).unwrap_err();
    assert_eq!(e.name(), "InvalidArgument");

    let e = decode_value::<String>(&[0x2a]).unwrap_err();
    assert_eq!(e.name(), "DeserializationFailed");

    let e = Cache::builder()
        .backend_url("rediss://127.0.0.1:1?ssl_ca_certs=/nonexistent/ca.pem")
        .build()
        .unwrap_err();
    assert_eq!(e.name(), "InvalidArgument");
    assert!(!e.message().is_empty());

    // Every C status maps to its own variant with the C library's name.
    for code in -30..=-1 {
        let e = Error::from_code(code, "m");
        let c_name = unsafe { std::ffi::CStr::from_ptr(libcachekit::sys::cachekit_error_name(code)) };
        assert_eq!(e.name(), c_name.to_str().unwrap());
        assert_eq!(e.code(), code);
    }
    assert_eq!(Error::from_code(-999, "").name(), "Unknown");
}

#[test]
fn payloads_that_are_not_one_msgpack_document_are_refused() {
    let cache = Cache::builder().l1_only().build().unwrap();
    let e = cache.set_bytes("users", "users:get_user:1", &[0xc1], None).unwrap_err();
    assert!(!e.message().is_empty(), "{e:?}");
    let r = cache.get_or_load_bytes("users", "users:get_user:2", None, || Ok::<_, ()>(vec![0x92, 0x01]));
    match r {
        Err(libcachekit::LoadError::Cache(e)) => assert!(!e.message().is_empty(), "{e:?}"),
        other => panic!("a truncated document was accepted: {other:?}"),
    }
    println!("{e}");
}

#[test]
fn keyring_round_trip_and_codec_calls() {
    let ring = Keyring::new(&"61".repeat(32), &[]).unwrap();
    let sealed = ring.encrypt(Some("t"), b"aad", b"hello").unwrap();
    let fp = ring.fingerprint(Some("t")).unwrap();
    let opened = ring.decrypt(Some("t"), Some(&fp), b"aad", &sealed).unwrap();
    assert_eq!((opened.plaintext.as_slice(), opened.key_index), (&b"hello"[..], 0));
    assert_eq!(
        ring.decrypt(Some("t"), None, b"other", &sealed).unwrap_err().name(),
        "AuthenticationFailed"
    );

    let env = libcachekit::codec::envelope_wrap(&[0x2a], "msgpack").unwrap();
    assert_eq!(envelope_unwrap(&env).unwrap(), (vec![0x2a], "msgpack".to_string()));
    let frame = libcachekit::codec::frame_encode("default", "{}", &[0x2a]).unwrap();
    let f = frame_decode(&frame).unwrap();
    assert_eq!((f.serializer.as_str(), f.payload.as_slice()), ("default", &[0x2a][..]));
    let json = libcachekit::codec::inspect(&[0x2a], None, None, None).unwrap();
    assert!(json.contains("\"kind\""), "{json}");
}
