//! The sentinel rules beyond the three upstream rows (tests/vectors.rs):
//! what revives and what stays a map, the isoformat text written back, and
//! the conversions between `DateTime` and `Timestamp`.
use libcachekit::{decode_value, encode_value, Date, DateTime, Time, Timestamp, Value};
use std::collections::BTreeMap;

/// The sentinel map `{marker: flag, "value": text}` plus any extra entries, encoded.
fn sentinel(marker: &str, flag: Value, text: &str, extra: &[(&str, Value)]) -> Vec<u8> {
    let mut pairs = vec![
        (Value::Str(marker.into()), flag),
        (Value::Str("value".into()), Value::Str(text.into())),
    ];
    pairs.extend(extra.iter().map(|(k, v)| (Value::Str((*k).into()), v.clone())));
    encode_value(&Value::Map(pairs)).unwrap()
}

#[test]
fn aware_naive_z_and_fractions_revive() {
    let z: DateTime = decode_value(&sentinel(
        "__datetime__",
        Value::Bool(true),
        "2025-11-14T10:30:00Z",
        &[],
    ))
    .unwrap();
    assert_eq!(z.time.utc_offset, Some(0));
    assert_eq!(z.to_string(), "2025-11-14T10:30:00+00:00");
    let east: DateTime = decode_value(&sentinel(
        "__datetime__",
        Value::Bool(true),
        "2024-02-29 23:59:59.5+05:30",
        &[],
    ))
    .unwrap();
    assert_eq!(east.time.microsecond, 500_000);
    assert_eq!(east.to_string(), "2024-02-29T23:59:59.500000+05:30");
    assert_eq!(east.to_timestamp().unwrap().seconds, 1_709_231_399);
    let naive: DateTime =
        decode_value(&sentinel("__datetime__", Value::Bool(true), "2024-01-01T00:00:00", &[])).unwrap();
    assert_eq!(naive.time.utc_offset, None);
    assert!(naive.to_timestamp().is_none());
    // A naive datetime has no instant: not a Timestamp.
    let e = decode_value::<Timestamp>(&sentinel("__datetime__", Value::Bool(true), "2024-01-01T00:00:00", &[]))
        .unwrap_err();
    assert!(e.message().contains("naive"), "{e}");
    let t: Time = decode_value(&sentinel("__time__", Value::Bool(true), "10:30:00.000123-08:00", &[])).unwrap();
    assert_eq!((t.microsecond, t.utc_offset), (123, Some(-8 * 3600)));
    assert_eq!(t.to_string(), "10:30:00.000123-08:00");
}

#[test]
fn maps_that_are_not_sentinels_stay_maps() {
    let not_revived = [
        sentinel("__datetime__", Value::Bool(false), "2025-11-14T10:30:00+00:00", &[]),
        sentinel("__datetime__", Value::UInt(1), "2025-11-14T10:30:00+00:00", &[]),
        sentinel("__date__", Value::Bool(true), "2025-02-30", &[]),
        sentinel("__time__", Value::Bool(true), "24:00:00", &[]),
        sentinel("__datetime__", Value::Bool(true), "not a date", &[]),
        sentinel("__date__", Value::Bool(true), "2025-11-14", &[("extra", Value::Nil)]),
        sentinel("__other__", Value::Bool(true), "2025-11-14", &[]),
    ];
    for doc in not_revived {
        let v: Value = decode_value(&doc).unwrap();
        assert!(matches!(v, Value::Map(_)), "{v:?}");
        // And a typed reader says why instead of guessing.
        assert!(decode_value::<Date>(&doc).is_err());
    }
}

#[test]
fn typed_values_are_stored_as_sentinel_maps() {
    let date = Date::new(2025, 11, 14).unwrap();
    let bytes = encode_value(&date).unwrap();
    // A plain map type reads the raw entries (a Value would revive them).
    let map: BTreeMap<String, Value> = decode_value(&bytes).unwrap();
    assert_eq!(map["__date__"], Value::Bool(true));
    assert_eq!(map["value"], Value::Str("2025-11-14".into()));
    assert_eq!(decode_value::<Date>(&bytes).unwrap(), date);
    assert!(Date::new(2023, 2, 29).is_none() && Date::new(0, 1, 1).is_none());
    assert!(Time::new(10, 0, 0, 0, Some(86_400)).is_none());
}

#[test]
fn timestamps_and_utc_datetimes_convert_both_ways() {
    let t = Timestamp {
        seconds: -1,
        nanoseconds: 999_999_999,
    };
    let dt = DateTime::from_timestamp(t).unwrap();
    assert_eq!(dt.to_string(), "1969-12-31T23:59:59.999999+00:00");
    // Floored to microseconds, as the protocol floors datetimes.
    assert_eq!(
        dt.to_timestamp().unwrap(),
        Timestamp {
            seconds: -1,
            nanoseconds: 999_999_000
        }
    );
    assert!(DateTime::from_timestamp(Timestamp {
        seconds: i64::MAX,
        nanoseconds: 0
    })
    .is_none());
    // A MessagePack timestamp read as a DateTime is that instant in UTC.
    let from_ext: DateTime = decode_value(&[0xd6, 0xff, 0, 0, 0, 1]).unwrap();
    assert_eq!(from_ext.to_string(), "1970-01-01T00:00:01+00:00");
}
