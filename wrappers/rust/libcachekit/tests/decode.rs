//! `decode_value` reads MessagePack as rmp-serde reads it (src/decode.rs): the
//! same values and the same failures, for the shapes it reads itself (maps and
//! arrays into structs, options, ASCII and non-ASCII text, bin into bytes and
//! into `Vec<u8>`, every integer and float width) and those it hands to
//! rmp-serde (enums, unit structs, 128-bit integers, ext), plus input that is
//! cut short or nested too deep.
use libcachekit::{decode_value, Bytes, Value};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Debug;

#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct Inner {
    street: String,
    zip: Option<u32>,
}

#[derive(Debug, PartialEq, Serialize, Deserialize)]
enum Kind {
    Plain,
    Tagged(u8),
    Named { a: i64 },
}

#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct Unit;

#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct Record {
    id: u64,
    neg: i64,
    name: String,
    score: f64,
    ratio: f32,
    tags: Vec<String>,
    inner: Inner,
    maybe: Option<Inner>,
    kinds: Vec<Kind>,
    raw: Bytes,
    map: BTreeMap<String, i32>,
    pair: (u8, String),
    unit: Unit,
    big: i128,
}

fn record() -> Record {
    Record {
        id: u64::MAX,
        neg: i64::MIN,
        name: "h\u{e9}llo w\u{f6}rld \u{1f600}".into(),
        score: 1.5,
        ratio: 0.25,
        tags: vec!["a".into(), String::new(), "x".repeat(300)],
        inner: Inner {
            street: "main".into(),
            zip: Some(70000),
        },
        maybe: None,
        kinds: vec![Kind::Plain, Kind::Tagged(7), Kind::Named { a: -3 }],
        raw: Bytes(vec![0, 1, 0xfe]),
        map: BTreeMap::from([("k".into(), -1), ("z".into(), 65536)]),
        pair: (200, "p".into()),
        unit: Unit,
        big: -(1i128 << 70),
    }
}

/// Both readers agree on `bytes` read as `T`: the same value, or both fail.
fn agree<T: DeserializeOwned + PartialEq + Debug>(bytes: &[u8]) -> Option<T> {
    let ours = decode_value::<T>(bytes);
    let theirs = rmp_serde::from_slice::<T>(bytes);
    match (&ours, &theirs) {
        (Ok(a), Ok(b)) => assert_eq!(a, b),
        (Err(_), Err(_)) => {}
        _ => panic!("the readers disagree on {bytes:02x?}: ours {ours:?}, rmp-serde {theirs:?}"),
    }
    ours.ok()
}

#[test]
fn structs_from_maps_and_from_arrays() {
    let r = record();
    let as_map = rmp_serde::to_vec_named(&r).unwrap();
    assert_eq!(agree::<Record>(&as_map), Some(record()));
    let as_array = rmp_serde::to_vec(&r).unwrap();
    assert_eq!(agree::<Record>(&as_array), Some(record()));
    // The same bytes as a dynamic value, and every prefix of them (cut short).
    agree::<Value>(&as_map);
    for end in 0..as_map.len() {
        agree::<Record>(&as_map[..end]);
        agree::<Value>(&as_map[..end]);
    }
}

#[test]
fn widths_bin_and_text_as_rmp_serde_reads_them() {
    // Integers of every width into narrower and wider types, floats of both widths.
    for v in [
        0i64,
        1,
        127,
        128,
        255,
        256,
        65535,
        65536,
        -1,
        -32,
        -33,
        -128,
        -129,
        -32768,
        -32769,
        i64::MIN,
    ] {
        let b = rmp_serde::to_vec(&v).unwrap();
        agree::<i8>(&b);
        agree::<u16>(&b);
        agree::<i64>(&b);
        agree::<u64>(&b);
        agree::<f64>(&b);
        agree::<Value>(&b);
    }
    agree::<f64>(&rmp_serde::to_vec(&2.5f32).unwrap());
    agree::<f32>(&rmp_serde::to_vec(&2.5f64).unwrap());
    // bin: bytes into Bytes, into Vec<u8> (a sequence), into a String (refused by both).
    let bin = rmp_serde::to_vec(&Bytes(vec![1, 2, 3])).unwrap();
    assert_eq!(agree::<Bytes>(&bin), Some(Bytes(vec![1, 2, 3])));
    assert_eq!(agree::<Vec<u8>>(&bin), Some(vec![1, 2, 3]));
    agree::<String>(&bin);
    // A str that is not UTF-8: bytes for a bytes type, an error for text.
    let bad = [0xa2, 0xff, 0xfe];
    assert_eq!(agree::<Bytes>(&bad), Some(Bytes(vec![0xff, 0xfe])));
    agree::<String>(&bad);
    agree::<Value>(&bad);
    // Type mismatches and nil.
    agree::<Option<u8>>(&[0xc0]);
    agree::<Option<u8>>(&[0x05]);
    agree::<()>(&[0xc0]);
    agree::<Unit>(&[0x90]);
    agree::<u8>(&[0xa1, b'x']);
    agree::<Vec<u8>>(&[0x92, 0x01]);
    agree::<Value>(&[0xc1]);
}

#[test]
fn ext_items_are_read_by_rmp_serde() {
    // A timestamp ext (-1, 4 bytes) inside an array: a dynamic value rejects it as rmp-serde does.
    let doc = [0x92, 0x01, 0xd6, 0xff, 0x00, 0x00, 0x00, 0x01];
    agree::<Value>(&doc);
    agree::<(u8, (i8, Vec<u8>))>(&doc);
}

#[test]
fn nesting_too_deep_is_an_error_not_a_crash() {
    // rmp-serde stops at 1,024 levels, decode_value at 256 (src/decode.rs says
    // why). The frames of an unoptimised rmp-serde need more than a test
    // thread's 2 MiB for its depth: a thread of its own.
    let mut deep = vec![0x91u8; 100_000];
    deep.push(0x01);
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || {
            assert!(rmp_serde::from_slice::<Value>(&deep).is_err());
            assert!(decode_value::<Value>(&deep).is_err());
            assert!(decode_value::<Value>(&deep[deep.len() - 257..]).is_ok()); // 256 levels
            assert!(decode_value::<Value>(&deep[deep.len() - 258..]).is_err()); // 257
        })
        .unwrap()
        .join()
        .unwrap();
}
