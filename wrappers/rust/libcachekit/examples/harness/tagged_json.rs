//! The `tagged_json` convention of interop-mode.json <-> `libcachekit::Value`
//! (shared by the harness and the vector tests).
use libcachekit::{Error, Timestamp, Value};
use serde_json::Value as Json;

fn unsupported(message: String) -> Error {
    Error::from_code(libcachekit::sys::CACHEKIT_EUNSUPPORTED, message)
}

fn bad_request(message: String) -> Error {
    Error::from_code(libcachekit::sys::CACHEKIT_EINVAL, message)
}

pub fn hex_decode(s: &str) -> Result<Vec<u8>, Error> {
    if s.len() % 2 != 0 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(bad_request(format!("not hex: {s}")));
    }
    Ok((0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect())
}

pub fn hex_encode(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Tagged JSON -> Value. Integers outside i64/u64 and naive datetimes are
/// refused with UnsupportedType (MessagePack and the protocol cannot carry them).
pub fn from_tagged(j: &Json) -> Result<Value, Error> {
    Ok(match j {
        Json::Null => Value::Nil,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => {
            if let Some(u) = n.as_u64() {
                Value::UInt(u)
            } else if let Some(i) = n.as_i64() {
                Value::Int(i)
            } else {
                return Err(unsupported(format!("a bare JSON number must be an integer: {n}")));
            }
        }
        Json::String(s) => Value::Str(s.clone()),
        Json::Array(items) => Value::Array(items.iter().map(from_tagged).collect::<Result<_, _>>()?),
        Json::Object(map) => {
            if map.len() == 1 {
                let (tag, v) = map.iter().next().unwrap();
                if let Some(value) = from_tag(tag, v)? {
                    return Ok(value);
                }
            }
            Value::Map(
                map.iter()
                    .map(|(k, v)| Ok((Value::Str(k.clone()), from_tagged(v)?)))
                    .collect::<Result<_, Error>>()?,
            )
        }
    })
}

fn text<'a>(tag: &str, v: &'a Json) -> Result<&'a str, Error> {
    v.as_str().ok_or_else(|| bad_request(format!("{tag} needs a string")))
}

fn from_tag(tag: &str, v: &Json) -> Result<Option<Value>, Error> {
    Ok(Some(match tag {
        "$int" => {
            let s = text(tag, v)?;
            if let Ok(u) = s.parse::<u64>() {
                Value::UInt(u)
            } else if let Ok(i) = s.parse::<i64>() {
                Value::Int(i)
            } else {
                return Err(unsupported(format!(
                    "integer {s} is outside the 64-bit range MessagePack carries"
                )));
            }
        }
        "$float" => {
            let s = text(tag, v)?;
            Value::Float(s.parse::<f64>().map_err(|_| bad_request(format!("bad $float {s}")))?)
        }
        "$bytes" => Value::Bytes(hex_decode(text(tag, v)?)?),
        "$uuid" => Value::Str(text(tag, v)?.to_ascii_lowercase()),
        "$datetime" => Value::Timestamp(parse_datetime(text(tag, v)?)?),
        "$set" => {
            let items = v.as_array().ok_or_else(|| bad_request("$set needs an array".into()))?;
            Value::Set(items.iter().map(from_tagged).collect::<Result<_, _>>()?)
        }
        _ => return Ok(None),
    }))
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

/// ISO 8601 `YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM)`; no offset is a
/// naive datetime, which has no instant: UnsupportedType.
pub fn parse_datetime(s: &str) -> Result<Timestamp, Error> {
    let bad = || bad_request(format!("bad $datetime {s}"));
    let b = s.as_bytes();
    if b.len() < 19
        || b[4] != b'-'
        || b[7] != b'-'
        || !(b[10] == b'T' || b[10] == b' ')
        || b[13] != b':'
        || b[16] != b':'
    {
        return Err(bad());
    }
    let num = |r: core::ops::Range<usize>| s.get(r).and_then(|t| t.parse::<i64>().ok()).ok_or_else(bad);
    let (y, mo, d, h, mi, sec) = (
        num(0..4)?,
        num(5..7)?,
        num(8..10)?,
        num(11..13)?,
        num(14..16)?,
        num(17..19)?,
    );
    let mut i = 19;
    let mut nanos: i64 = 0;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        let digits = &s[start..i];
        if digits.is_empty() {
            return Err(bad());
        }
        let padded: String = digits.chars().chain(std::iter::repeat('0')).take(9).collect();
        nanos = padded.parse().map_err(|_| bad())?;
    }
    let offset = match &s[i..] {
        "" => return Err(unsupported(format!("naive datetime {s}: no UTC offset"))),
        "Z" | "z" => 0,
        o if o.len() == 6 && (o.starts_with('+') || o.starts_with('-')) && &o[3..4] == ":" => {
            let sign = if o.starts_with('-') { -1 } else { 1 };
            sign * (num(i + 1..i + 3)? * 3600 + num(i + 4..i + 6)? * 60)
        }
        _ => return Err(bad()),
    };
    let seconds = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec - offset;
    Ok(Timestamp {
        seconds,
        nanoseconds: nanos as u32,
    })
}

/// Value -> tagged JSON (floats as {"$float": text}, bytes as {"$bytes": hex},
/// ext types as {"$ext": type, "data": hex}).
pub fn to_tagged(v: &Value) -> Json {
    match v {
        Value::Nil => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Int(i) => Json::from(*i),
        Value::UInt(u) => Json::from(*u),
        Value::Float(f) => serde_json::json!({ "$float": format!("{f:?}") }),
        Value::Str(s) => Json::String(s.clone()),
        Value::Bytes(b) => serde_json::json!({ "$bytes": hex_encode(b) }),
        Value::Array(items) => Json::Array(items.iter().map(to_tagged).collect()),
        Value::Map(pairs) => Json::Object(
            pairs
                .iter()
                .map(|(k, v)| {
                    let key = match k {
                        Value::Str(s) => s.clone(),
                        other => to_tagged(other).to_string(),
                    };
                    (key, to_tagged(v))
                })
                .collect(),
        ),
        Value::Set(items) => serde_json::json!({ "$set": items.iter().map(to_tagged).collect::<Vec<_>>() }),
        Value::Timestamp(t) => serde_json::json!({ "$timestamp": [t.seconds, t.nanoseconds] }),
        // A revived sentinel as the map it is stored as (value_vectors'
        // datetime_sentinel_value), its text in isoformat.
        Value::DateTime(d) => serde_json::json!({ "__datetime__": true, "value": d.to_string() }),
        Value::Date(d) => serde_json::json!({ "__date__": true, "value": d.to_string() }),
        Value::Time(t) => serde_json::json!({ "__time__": true, "value": t.to_string() }),
        // As the core's cachekit_msgpack_to_json and the Go harness write one.
        Value::Ext(tag, body) => serde_json::json!({ "$ext": tag, "data": hex_encode(body) }),
    }
}
