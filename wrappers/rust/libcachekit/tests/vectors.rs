//! The reader rows of the upstream vectors, through the crate's reader
//! (`decode_value`) and a cache's `get_or_load`, each reported by name:
//! interop-mode.json `reader_accept_vectors` (decoded, and equal to the
//! row's tagged `value` where it has one) and `reader_reject_vectors`
//! (refused), and wire-format.json `temporal_sentinel_vectors` (revived as
//! this crate's `DateTime`, `Date` and `Time`, in `Value` and typed, and
//! written back as the same bytes).
mod support;
#[path = "../examples/harness/tagged_json.rs"]
#[allow(dead_code)]
mod tagged_json;

use libcachekit::{decode_value, encode_value, Cache, Date, DateTime, Time, Timestamp, Value};
use serde_json::Value as Json;
use support::vectors::{interop_mode, name, rows, wire_format};
use tagged_json::{hex_decode, hex_encode, to_tagged};

fn input(row: &Json) -> Vec<u8> {
    hex_decode(
        row["input_hex"]
            .as_str()
            .unwrap_or_else(|| panic!("{}: no input_hex", name(row))),
    )
    .unwrap()
}

fn l1_only() -> Cache {
    Cache::builder().l1_only().build().expect("an L1-only cache")
}

#[test]
fn reader_accept_vectors_decode_as_values() {
    let Some(file) = interop_mode() else { return };
    let mut failures = Vec::new();
    for row in rows(&file, "reader_accept_vectors") {
        match decode_value::<Value>(&input(row)) {
            Ok(v) => match row.get("value") {
                Some(want) if &to_tagged(&v) != want => {
                    failures.push(format!("{}: decoded as {}, expected {want}", name(row), to_tagged(&v)))
                }
                _ => println!("reader_accept_vectors {}: ok ({})", name(row), to_tagged(&v)),
            },
            Err(e) => failures.push(format!("{}: {e}", name(row))),
        }
    }
    assert!(
        failures.is_empty(),
        "reader_accept_vectors failed:\n{}",
        failures.join("\n")
    );
}

#[test]
fn reader_accept_vectors_without_tagged_values_decode_to_their_variants() {
    // The two rows tagged JSON cannot carry: each Value variant checked.
    let Some(file) = interop_mode() else { return };
    let row = |n: &str| {
        rows(&file, "reader_accept_vectors")
            .iter()
            .find(|r| name(r) == n)
            .unwrap_or_else(|| panic!("reader_accept_vectors has no {n}"))
    };
    let ext: Value = decode_value(&input(row("reader_ext_type"))).unwrap();
    assert_eq!(ext, Value::Ext(1, vec![0x2a]), "reader_ext_type");
    let map: Value = decode_value(&input(row("reader_non_string_map_key"))).unwrap();
    assert_eq!(
        map,
        Value::Map(vec![(Value::UInt(1), Value::UInt(42))]),
        "reader_non_string_map_key"
    );
}

#[test]
fn reader_accept_vectors_are_served_by_get_or_load() {
    let Some(file) = interop_mode() else { return };
    let cache = l1_only();
    for row in rows(&file, "reader_accept_vectors") {
        let key = format!("readers:accept:{}", name(row));
        cache.set_bytes("readers", &key, &input(row), None).unwrap();
        let got: Value = cache
            .get_or_load("readers", &key, None, || -> Result<Value, String> {
                panic!("{}: the loader ran for a readable value", name(row))
            })
            .unwrap_or_else(|e| panic!("{}: {e}", name(row)));
        assert_eq!(got, decode_value::<Value>(&input(row)).unwrap(), "{}", name(row));
        println!("reader_accept_vectors {}: served", name(row));
    }
}

#[test]
fn reader_reject_vectors_are_refused() {
    let Some(file) = interop_mode() else { return };
    let mut failures = Vec::new();
    for row in rows(&file, "reader_reject_vectors") {
        match decode_value::<Value>(&input(row)) {
            Ok(v) => failures.push(format!("{}: accepted as {}", name(row), to_tagged(&v))),
            Err(e) if e.message().is_empty() => failures.push(format!("{}: {} without a message", name(row), e.name())),
            Err(e) => println!("reader_reject_vectors {}: refused ({e})", name(row)),
        }
    }
    assert!(
        failures.is_empty(),
        "reader_reject_vectors failed:\n{}",
        failures.join("\n")
    );
}

#[test]
fn reader_trailing_byte_is_trailing_bytes() {
    let Some(file) = interop_mode() else { return };
    let Some(row) = rows(&file, "reader_reject_vectors")
        .iter()
        .find(|r| name(r) == "reader_trailing_byte")
    else {
        panic!("reader_reject_vectors has no reader_trailing_byte")
    };
    let e = decode_value::<Value>(&input(row)).unwrap_err();
    assert_eq!(e.name(), "TrailingBytes", "reader_trailing_byte: {e}");
}

/// The row's revived value, built from its `revives_to` (not by the parser under test).
fn expected_revival(row: &Json) -> Value {
    let iso = row["revives_to"]["iso"].as_str().unwrap();
    match row["revives_to"]["type"].as_str().unwrap() {
        // "2025-11-14T10:30:00+00:00" and "2025-11-14", "10:30:00" in every row so far.
        "datetime" => {
            assert_eq!(iso, "2025-11-14T10:30:00+00:00", "{}: a new revives_to", name(row));
            Value::DateTime(DateTime {
                date: Date::new(2025, 11, 14).unwrap(),
                time: Time::new(10, 30, 0, 0, Some(0)).unwrap(),
            })
        }
        "date" => {
            assert_eq!(iso, "2025-11-14", "{}: a new revives_to", name(row));
            Value::Date(Date::new(2025, 11, 14).unwrap())
        }
        "time" => {
            assert_eq!(iso, "10:30:00", "{}: a new revives_to", name(row));
            Value::Time(Time::new(10, 30, 0, 0, None).unwrap())
        }
        other => panic!("{}: unknown revives_to type {other}", name(row)),
    }
}

#[test]
fn temporal_sentinel_vectors_revive_in_value_and_round_trip() {
    let Some(file) = wire_format() else { return };
    let sentinels = rows(&file, "temporal_sentinel_vectors");
    assert_eq!(
        sentinels.len(),
        3,
        "temporal_sentinel_vectors: the 3 rows of wire-format 1.4.0"
    );
    for row in sentinels {
        let payload = hex_decode(row["payload_hex"].as_str().unwrap()).unwrap();
        let got: Value = decode_value(&payload).unwrap_or_else(|e| panic!("{}: {e}", name(row)));
        let want = expected_revival(row);
        assert_eq!(got, want, "{}: not revived", name(row));
        let iso = row["revives_to"]["iso"].as_str().unwrap();
        let text = match &got {
            Value::DateTime(v) => v.to_string(),
            Value::Date(v) => v.to_string(),
            Value::Time(v) => v.to_string(),
            other => panic!("{}: {other:?}", name(row)),
        };
        assert_eq!(text, iso, "{}: isoformat", name(row));
        // Written back, the revived value is the same sentinel map, byte for byte.
        assert_eq!(
            hex_encode(&encode_value(&got).unwrap()),
            row["payload_hex"].as_str().unwrap(),
            "{}: re-encoded",
            name(row)
        );
        println!("temporal_sentinel_vectors {}: revived as {got:?}", name(row));
    }
}

#[test]
fn temporal_sentinel_vectors_revive_as_typed_values() {
    let Some(file) = wire_format() else { return };
    let row = |n: &str| {
        let row = rows(&file, "temporal_sentinel_vectors")
            .iter()
            .find(|r| name(r) == n)
            .unwrap_or_else(|| panic!("temporal_sentinel_vectors has no {n}"));
        hex_decode(row["payload_hex"].as_str().unwrap()).unwrap()
    };
    let datetime: DateTime = decode_value(&row("temporal_sentinel_datetime")).unwrap();
    assert_eq!(
        datetime.to_string(),
        "2025-11-14T10:30:00+00:00",
        "temporal_sentinel_datetime"
    );
    // An aware datetime is an instant: 2025-11-14T10:30:00Z.
    let instant: Timestamp = decode_value(&row("temporal_sentinel_datetime")).unwrap();
    assert_eq!(
        instant,
        Timestamp {
            seconds: 1_763_116_200,
            nanoseconds: 0
        },
        "temporal_sentinel_datetime as a Timestamp"
    );
    let date: Date = decode_value(&row("temporal_sentinel_date")).unwrap();
    assert_eq!(date, Date::new(2025, 11, 14).unwrap(), "temporal_sentinel_date");
    let time: Time = decode_value(&row("temporal_sentinel_time")).unwrap();
    assert_eq!(time, Time::new(10, 30, 0, 0, None).unwrap(), "temporal_sentinel_time");
    // In a struct field, as a cached value would hold them.
    #[derive(serde::Deserialize)]
    struct Event {
        at: DateTime,
    }
    let mut doc = vec![0x81, 0xa2, b'a', b't'];
    doc.extend(row("temporal_sentinel_datetime"));
    let event: Event = decode_value(&doc).unwrap();
    assert_eq!(event.at, datetime, "temporal_sentinel_datetime in a struct");
    // A date is not a time: the wrong type is an error for the caller (a miss in get_or_load).
    assert!(decode_value::<Time>(&row("temporal_sentinel_date")).is_err());
}

#[test]
fn temporal_sentinel_vectors_are_served_by_get_or_load_as_value() {
    let Some(file) = wire_format() else { return };
    let cache = l1_only();
    for row in rows(&file, "temporal_sentinel_vectors") {
        let key = format!("temporal:get:{}", name(row));
        let payload = hex_decode(row["payload_hex"].as_str().unwrap()).unwrap();
        cache.set_bytes("temporal", &key, &payload, None).unwrap();
        let got: Value = cache
            .get_or_load("temporal", &key, None, || -> Result<Value, String> {
                panic!("{}: the loader ran", name(row))
            })
            .unwrap();
        assert_eq!(got, expected_revival(row), "{}", name(row));
    }
}
