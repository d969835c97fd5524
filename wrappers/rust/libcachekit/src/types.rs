//! Argument and value types MessagePack has no serde form for: byte strings,
//! sets and UTC timestamps (the core's input extensions).
use libcachekit_sys as sys;
use serde::ser::{Serialize, SerializeTuple, Serializer};

/// A byte string, written as MessagePack bin (a plain `Vec<u8>` is an array of
/// integers in serde).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Bytes(pub Vec<u8>);

impl Serialize for Bytes {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(&self.0)
    }
}

impl<'de> serde::Deserialize<'de> for Bytes {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Bytes, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Bytes;
            fn expecting(&self, f: &mut core::fmt::Formatter) -> core::fmt::Result {
                f.write_str("a byte string")
            }
            fn visit_bytes<E>(self, v: &[u8]) -> Result<Bytes, E> {
                Ok(Bytes(v.to_vec()))
            }
            fn visit_byte_buf<E>(self, v: Vec<u8>) -> Result<Bytes, E> {
                Ok(Bytes(v))
            }
        }
        d.deserialize_byte_buf(V)
    }
}

/// A MessagePack extension value: rmp-serde's ext form.
pub(crate) struct Ext<'a>(pub(crate) i8, pub(crate) &'a [u8]);

impl Serialize for Ext<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        struct Body<'a>(i8, &'a [u8]);
        impl Serialize for Body<'_> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut t = s.serialize_tuple(2)?;
                t.serialize_element(&self.0)?;
                t.serialize_element(&RawBin(self.1))?;
                t.end()
            }
        }
        s.serialize_newtype_struct(rmp_serde::MSGPACK_EXT_STRUCT_NAME, &Body(self.0, self.1))
    }
}

struct RawBin<'a>(&'a [u8]);
impl Serialize for RawBin<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(self.0)
    }
}

/// A set argument: the core writes it as the sorted, de-duplicated array of
/// its canonical elements, so element order does not change the key.
#[derive(Debug, Clone, PartialEq)]
pub struct Set<T>(pub Vec<T>);

impl<T: Serialize> Serialize for Set<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let inner = rmp_serde::encode::to_vec_named(&self.0).map_err(serde::ser::Error::custom)?;
        Ext(sys::CACHEKIT_MSGPACK_EXT_SET, &inner).serialize(s)
    }
}

/// An aware UTC instant (seconds since the Unix epoch plus nanoseconds),
/// written as the MessagePack timestamp extension; the core turns it into
/// float64 seconds floored to microseconds, as the interop spec says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timestamp {
    pub seconds: i64,
    pub nanoseconds: u32,
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.nanoseconds >= 1_000_000_000 {
            return Err(serde::ser::Error::custom("Timestamp nanoseconds must be below 1e9"));
        }
        // The 12-byte form: u32be nanoseconds, i64be seconds.
        let mut data = [0u8; 12];
        data[..4].copy_from_slice(&self.nanoseconds.to_be_bytes());
        data[4..].copy_from_slice(&self.seconds.to_be_bytes());
        Ext(sys::CACHEKIT_MSGPACK_EXT_TIMESTAMP, &data).serialize(s)
    }
}

impl Timestamp {
    /// The body of a MessagePack timestamp ext (type -1) in any of its three
    /// forms: 4 bytes (u32 seconds), 8 (30-bit nanoseconds over 34-bit
    /// seconds), 12 (u32 nanoseconds, i64 seconds).
    pub(crate) fn from_ext_body(data: &[u8]) -> Result<Timestamp, String> {
        let t = match data.len() {
            4 => Timestamp {
                seconds: u32::from_be_bytes(data.try_into().expect("4 bytes")).into(),
                nanoseconds: 0,
            },
            8 => {
                let v = u64::from_be_bytes(data.try_into().expect("8 bytes"));
                Timestamp {
                    seconds: (v & 0x3_ffff_ffff) as i64,
                    nanoseconds: (v >> 34) as u32,
                }
            }
            12 => Timestamp {
                seconds: i64::from_be_bytes(data[4..].try_into().expect("8 bytes")),
                nanoseconds: u32::from_be_bytes(data[..4].try_into().expect("4 bytes")),
            },
            n => return Err(format!("a MessagePack timestamp has 4, 8 or 12 bytes, not {n}")),
        };
        if t.nanoseconds >= 1_000_000_000 {
            return Err(format!("a MessagePack timestamp with {} nanoseconds", t.nanoseconds));
        }
        Ok(t)
    }
}

impl From<std::time::SystemTime> for Timestamp {
    fn from(t: std::time::SystemTime) -> Timestamp {
        match t.duration_since(std::time::UNIX_EPOCH) {
            Ok(d) => Timestamp {
                seconds: d.as_secs() as i64,
                nanoseconds: d.subsec_nanos(),
            },
            Err(e) => {
                let d = e.duration();
                let (mut secs, mut nanos) = (-(d.as_secs() as i64), d.subsec_nanos());
                if nanos > 0 {
                    secs -= 1;
                    nanos = 1_000_000_000 - nanos;
                }
                Timestamp {
                    seconds: secs,
                    nanoseconds: nanos,
                }
            }
        }
    }
}
