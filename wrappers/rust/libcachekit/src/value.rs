//! `Value`: a dynamic interop value (what a `serde_json::Value` is for JSON),
//! for arguments and values whose type is known only at run time.
use crate::temporal::{revive, Date, DateTime, Time};
use crate::types::{Bytes, Ext, Set, Timestamp};
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};

/// One MessagePack value of the interop profile, plus the input extensions
/// (sets and timestamps) a key's arguments may hold, the temporal values a
/// stored value holds as sentinel maps, and ext types a reader must accept.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Nil,
    Bool(bool),
    Int(i64),
    UInt(u64),
    Float(f64),
    Str(String),
    Bytes(Vec<u8>),
    Array(Vec<Value>),
    /// Keys in the order given; the canonical encoding sorts them.
    Map(Vec<(Value, Value)>),
    /// Arguments only: the core writes the sorted, de-duplicated elements.
    Set(Vec<Value>),
    /// An aware UTC instant: an argument (keyed as the protocol keys a
    /// datetime), or a MessagePack timestamp (ext -1) read from a value.
    Timestamp(Timestamp),
    /// A `{"__datetime__": true, "value": iso}` sentinel of a stored value.
    DateTime(DateTime),
    /// A `{"__date__": true, "value": iso}` sentinel.
    Date(Date),
    /// A `{"__time__": true, "value": iso}` sentinel.
    Time(Time),
    /// An application ext type (type, body) read from a value: the protocol
    /// lets readers meet one; the canonical writers refuse to store it.
    Ext(i8, Vec<u8>),
}

impl Serialize for Value {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Value::Nil => s.serialize_unit(),
            Value::Bool(b) => s.serialize_bool(*b),
            Value::Int(i) => s.serialize_i64(*i),
            Value::UInt(u) => s.serialize_u64(*u),
            Value::Float(f) => s.serialize_f64(*f),
            Value::Str(v) => s.serialize_str(v),
            Value::Bytes(b) => s.serialize_bytes(b),
            Value::Array(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Value::Map(pairs) => {
                let mut map = s.serialize_map(Some(pairs.len()))?;
                for (k, v) in pairs {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
            Value::Set(items) => Set(items.clone()).serialize(s),
            Value::Timestamp(t) => t.serialize(s),
            Value::DateTime(v) => v.serialize(s),
            Value::Date(v) => v.serialize(s),
            Value::Time(v) => v.serialize(s),
            Value::Ext(tag, body) => Ext(*tag, body).serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
        d.deserialize_any(ValueVisitor)
    }
}

struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;
    fn expecting(&self, f: &mut core::fmt::Formatter) -> core::fmt::Result {
        f.write_str("a MessagePack value")
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Nil)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Nil)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        Value::deserialize(d)
    }
    /// rmp-serde hands an ext item over as a newtype of (type, body).
    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        let (tag, body): (i8, Bytes) = Deserialize::deserialize(d)?;
        if tag == libcachekit_sys::CACHEKIT_MSGPACK_EXT_TIMESTAMP {
            return Timestamp::from_ext_body(&body.0)
                .map(Value::Timestamp)
                .map_err(serde::de::Error::custom);
        }
        Ok(Value::Ext(tag, body.0))
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(if v >= 0 { Value::UInt(v as u64) } else { Value::Int(v) })
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::UInt(v))
    }
    fn visit_f32<E>(self, v: f32) -> Result<Value, E> {
        Ok(Value::Float(v as f64))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::Float(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::Str(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::Str(v))
    }
    fn visit_bytes<E>(self, v: &[u8]) -> Result<Value, E> {
        Ok(Value::Bytes(v.to_vec()))
    }
    fn visit_byte_buf<E>(self, v: Vec<u8>) -> Result<Value, E> {
        Ok(Value::Bytes(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut pairs = Vec::with_capacity(map.size_hint().unwrap_or(0).min(4096));
        while let Some(pair) = map.next_entry()? {
            pairs.push(pair);
        }
        Ok(revive(pairs))
    }
}

impl From<Bytes> for Value {
    fn from(b: Bytes) -> Value {
        Value::Bytes(b.0)
    }
}
