//! The MessagePack reader behind `decode_value`: a serde `Deserializer` over
//! a borrowed slice. It reads what rmp-serde reads, with the same visits
//! (so every `Deserialize` sees what rmp-serde would show it), and hands
//! the rarer shapes (ext types, enums, 128-bit integers, unit) to rmp-serde
//! itself on the item's own bytes. Its own work is the common case, done
//! cheaper: strings that are all ASCII skip the UTF-8 decoder, and
//! containers are walked without rmp-serde's per-item marker dispatch.
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// The deepest nesting read. The protocol allows a bound from 32 to 1024
/// (the C library reads 1024); this reader recurses once per level, and an
/// unoptimised build's frames need more than a spawned thread's 2 MiB stack
/// (tokio's workers, the test harness) for 1024 levels, so a hostile
/// document could abort the process. 256 levels fit with room to spare; a
/// deeper value is `DeserializationFailed`, which the cache treats as a miss.
pub(crate) const MAX_DEPTH: usize = 256;

#[derive(Debug)]
pub(crate) struct DecodeError(String);

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for DecodeError {}

impl de::Error for DecodeError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        DecodeError(msg.to_string())
    }
}

type Result<T> = std::result::Result<T, DecodeError>;

/// Why a document was refused: the caller maps each to its error variant.
#[derive(Debug)]
pub(crate) enum Refused {
    /// Not a document of the caller's type (or not well-formed).
    Decode(DecodeError),
    /// One complete document and then more bytes: a value is exactly one
    /// document (the interop reader rule), so this is no value at all.
    Trailing { consumed: usize, len: usize },
}

/// Decode `input` as exactly one document.
pub(crate) fn from_slice<'de, T: de::Deserialize<'de>>(input: &'de [u8]) -> std::result::Result<T, Refused> {
    let mut reader = Reader {
        input,
        pos: 0,
        depth: 0,
    };
    let value = T::deserialize(&mut reader).map_err(Refused::Decode)?;
    if reader.pos != input.len() {
        return Err(Refused::Trailing {
            consumed: reader.pos,
            len: input.len(),
        });
    }
    Ok(value)
}

struct Reader<'de> {
    input: &'de [u8],
    pos: usize,
    depth: usize,
}

fn short() -> DecodeError {
    DecodeError("unexpected end of the MessagePack input".into())
}

impl<'de> Reader<'de> {
    #[inline]
    fn peek(&self) -> Result<u8> {
        self.input.get(self.pos).copied().ok_or_else(short)
    }

    #[inline]
    fn take(&mut self, n: usize) -> Result<&'de [u8]> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.input.len())
            .ok_or_else(short)?;
        let bytes = &self.input[self.pos..end];
        self.pos = end;
        Ok(bytes)
    }

    #[inline]
    fn be<const N: usize>(&mut self) -> Result<[u8; N]> {
        Ok(self.take(N)?.try_into().expect("N bytes"))
    }

    #[inline]
    fn len8(&mut self) -> Result<usize> {
        Ok(self.be::<1>()?[0] as usize)
    }
    #[inline]
    fn len16(&mut self) -> Result<usize> {
        Ok(u16::from_be_bytes(self.be()?) as usize)
    }
    #[inline]
    fn len32(&mut self) -> Result<usize> {
        Ok(u32::from_be_bytes(self.be()?) as usize)
    }

    /// Move past one whole item (for the shapes handed to rmp-serde).
    fn skip(&mut self) -> Result<()> {
        let mut pending: u64 = 1;
        while pending > 0 {
            pending -= 1;
            let m = self.be::<1>()?[0];
            let (body, children) = match m {
                0x00..=0x7f | 0xe0..=0xff | 0xc0 | 0xc2 | 0xc3 => (0, 0),
                0x80..=0x8f => (0, (m & 0x0f) as u64 * 2),
                0x90..=0x9f => (0, (m & 0x0f) as u64),
                0xa0..=0xbf => ((m & 0x1f) as usize, 0),
                0xc4 | 0xd9 => (self.len8()?, 0),
                0xc5 | 0xda => (self.len16()?, 0),
                0xc6 | 0xdb => (self.len32()?, 0),
                0xc7 => (self.len8()? + 1, 0),
                0xc8 => (self.len16()? + 1, 0),
                0xc9 => (self.len32()? + 1, 0),
                0xca => (4, 0),
                0xcb => (8, 0),
                0xcc | 0xd0 => (1, 0),
                0xcd | 0xd1 => (2, 0),
                0xce | 0xd2 => (4, 0),
                0xcf | 0xd3 => (8, 0),
                0xd4 => (2, 0),
                0xd5 => (3, 0),
                0xd6 => (5, 0),
                0xd7 => (9, 0),
                0xd8 => (17, 0),
                0xdc => (0, self.len16()? as u64),
                0xdd => (0, self.len32()? as u64),
                0xde => (0, self.len16()? as u64 * 2),
                0xdf => (0, self.len32()? as u64 * 2),
                0xc1 => return Err(DecodeError("reserved MessagePack marker 0xc1".into())),
            };
            self.take(body)?;
            pending += children;
        }
        Ok(())
    }

    /// Hand the next item to rmp-serde (its own bytes only).
    fn delegate<V>(
        &mut self,
        f: impl FnOnce(
            &mut rmp_serde::Deserializer<rmp_serde::decode::ReadRefReader<'de, [u8]>>,
        ) -> std::result::Result<V, rmp_serde::decode::Error>,
    ) -> Result<V> {
        let start = self.pos;
        self.skip()?;
        let item: &'de [u8] = &self.input[start..self.pos];
        f(&mut rmp_serde::Deserializer::from_read_ref(item)).map_err(|e| DecodeError(e.to_string()))
    }

    #[inline]
    fn visit_str<V: Visitor<'de>>(&mut self, len: usize, visitor: V) -> Result<V::Value> {
        let bytes = self.take(len)?;
        if bytes.is_ascii() {
            // SAFETY: ASCII bytes are valid UTF-8.
            return visitor.visit_borrowed_str(unsafe { std::str::from_utf8_unchecked(bytes) });
        }
        match std::str::from_utf8(bytes) {
            Ok(s) => visitor.visit_borrowed_str(s),
            // As rmp-serde: not text, so offered as bytes.
            Err(e) => visitor
                .visit_borrowed_bytes::<DecodeError>(bytes)
                .map_err(|_| DecodeError(format!("invalid UTF-8 in a string: {e}"))),
        }
    }

    #[inline]
    fn enter(&mut self) -> Result<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(DecodeError(format!(
                "MessagePack nested deeper than {MAX_DEPTH} levels"
            )));
        }
        Ok(())
    }

    fn visit_seq<V: Visitor<'de>>(&mut self, len: usize, visitor: V) -> Result<V::Value> {
        self.enter()?;
        let mut items = Items {
            reader: self,
            left: len,
        };
        let value = visitor.visit_seq(&mut items)?;
        let left = items.left;
        self.depth -= 1;
        if left != 0 {
            return Err(de::Error::invalid_length(len, &"fewer elements in the array"));
        }
        Ok(value)
    }

    fn visit_map<V: Visitor<'de>>(&mut self, len: usize, visitor: V) -> Result<V::Value> {
        self.enter()?;
        let mut items = Items {
            reader: self,
            left: len,
        };
        let value = visitor.visit_map(&mut items)?;
        let left = items.left;
        self.depth -= 1;
        if left != 0 {
            return Err(de::Error::invalid_length(len, &"fewer entries in the map"));
        }
        Ok(value)
    }
}

fn is_ext(m: u8) -> bool {
    matches!(m, 0xc7..=0xc9 | 0xd4..=0xd8)
}

impl<'de> Reader<'de> {
    /// The next item, visited as rmp-serde visits it; `allow_bytes` false (a
    /// sequence or struct was asked for) visits a bin as a sequence of bytes.
    #[inline]
    fn any<V: Visitor<'de>>(&mut self, visitor: V, allow_bytes: bool) -> Result<V::Value> {
        let m = self.peek()?;
        if !allow_bytes && matches!(m, 0xc4..=0xc6) {
            return self.delegate(|d| d.deserialize_seq(visitor));
        }
        if is_ext(m) {
            return self.delegate(|d| d.deserialize_any(visitor));
        }
        self.pos += 1;
        match m {
            0x00..=0x7f => visitor.visit_u64(m as u64),
            0xe0..=0xff => visitor.visit_i64(m as i8 as i64),
            0x80..=0x8f => self.visit_map((m & 0x0f) as usize, visitor),
            0x90..=0x9f => self.visit_seq((m & 0x0f) as usize, visitor),
            0xa0..=0xbf => self.visit_str((m & 0x1f) as usize, visitor),
            0xc0 => visitor.visit_unit(),
            0xc2 => visitor.visit_bool(false),
            0xc3 => visitor.visit_bool(true),
            0xc4 => {
                let n = self.len8()?;
                visitor.visit_borrowed_bytes(self.take(n)?)
            }
            0xc5 => {
                let n = self.len16()?;
                visitor.visit_borrowed_bytes(self.take(n)?)
            }
            0xc6 => {
                let n = self.len32()?;
                visitor.visit_borrowed_bytes(self.take(n)?)
            }
            0xca => visitor.visit_f32(f32::from_be_bytes(self.be()?)),
            0xcb => visitor.visit_f64(f64::from_be_bytes(self.be()?)),
            0xcc => visitor.visit_u64(u8::from_be_bytes(self.be()?) as u64),
            0xcd => visitor.visit_u64(u16::from_be_bytes(self.be()?) as u64),
            0xce => visitor.visit_u64(u32::from_be_bytes(self.be()?) as u64),
            0xcf => visitor.visit_u64(u64::from_be_bytes(self.be()?)),
            0xd0 => visitor.visit_i64(i8::from_be_bytes(self.be()?) as i64),
            0xd1 => visitor.visit_i64(i16::from_be_bytes(self.be()?) as i64),
            0xd2 => visitor.visit_i64(i32::from_be_bytes(self.be()?) as i64),
            0xd3 => visitor.visit_i64(i64::from_be_bytes(self.be()?)),
            0xd9 => {
                let n = self.len8()?;
                self.visit_str(n, visitor)
            }
            0xda => {
                let n = self.len16()?;
                self.visit_str(n, visitor)
            }
            0xdb => {
                let n = self.len32()?;
                self.visit_str(n, visitor)
            }
            0xdc => {
                let n = self.len16()?;
                self.visit_seq(n, visitor)
            }
            0xdd => {
                let n = self.len32()?;
                self.visit_seq(n, visitor)
            }
            0xde => {
                let n = self.len16()?;
                self.visit_map(n, visitor)
            }
            0xdf => {
                let n = self.len32()?;
                self.visit_map(n, visitor)
            }
            _ => Err(DecodeError(format!("reserved MessagePack marker {m:#04x}"))),
        }
    }
}

impl<'de> Deserializer<'de> for &mut Reader<'de> {
    type Error = DecodeError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.any(visitor, true)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.any(visitor, false)
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value> {
        self.any(visitor, false)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(self, _: &'static str, _: usize, visitor: V) -> Result<V::Value> {
        self.any(visitor, false)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        self.any(visitor, false)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        if self.peek()? == 0xc0 {
            self.pos += 1;
            return visitor.visit_none();
        }
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(self, name: &'static str, visitor: V) -> Result<V::Value> {
        if name == rmp_serde::MSGPACK_EXT_STRUCT_NAME {
            return self.delegate(|d| d.deserialize_newtype_struct(name, visitor));
        }
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        self.delegate(|d| d.deserialize_enum(name, variants, visitor))
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.delegate(|d| d.deserialize_unit(visitor))
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(self, name: &'static str, visitor: V) -> Result<V::Value> {
        self.delegate(|d| d.deserialize_unit_struct(name, visitor))
    }

    fn deserialize_i128<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.delegate(|d| d.deserialize_i128(visitor))
    }

    fn deserialize_u128<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.delegate(|d| d.deserialize_u128(visitor))
    }

    fn is_human_readable(&self) -> bool {
        false
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 u8 u16 u32 u64 f32 f64 char str string bytes byte_buf
        map identifier ignored_any
    }
}

/// The elements of an array, or the entries of a map, still to read.
struct Items<'a, 'de> {
    reader: &'a mut Reader<'de>,
    left: usize,
}

impl<'de> SeqAccess<'de> for Items<'_, 'de> {
    type Error = DecodeError;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        seed.deserialize(&mut *self.reader).map(Some)
    }

    fn size_hint(&self) -> Option<usize> {
        // A hint only: never more than the input could hold (one byte each).
        Some(self.left.min(self.reader.input.len() - self.reader.pos))
    }
}

impl<'de> MapAccess<'de> for Items<'_, 'de> {
    type Error = DecodeError;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        seed.deserialize(&mut *self.reader).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value> {
        seed.deserialize(&mut *self.reader)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.left.min((self.reader.input.len() - self.reader.pos) / 2))
    }
}
