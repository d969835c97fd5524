//! Dates and times as the CacheKit SDKs store them in a value: the sentinel
//! maps `{"__datetime__" | "__date__" | "__time__": true, "value": iso}`
//! (protocol section 3), written with Python's isoformat and read with the
//! rules of Python's fromisoformat that those strings need (plus a trailing
//! `Z`, which interop readers accept). No calendar crate: the few civil-date
//! conversions are here.
use crate::types::Timestamp;
use crate::value::Value;
use serde::de::{Deserialize, Deserializer, Error as _};
use serde::ser::{Serialize, SerializeMap, Serializer};
use std::fmt;

pub(crate) const DATETIME_MARKER: &str = "__datetime__";
pub(crate) const DATE_MARKER: &str = "__date__";
pub(crate) const TIME_MARKER: &str = "__time__";

/// A calendar date (proleptic Gregorian, years 1 to 9999 as Python's `date`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Date {
    pub year: u16,
    pub month: u8,
    pub day: u8,
}

/// A time of day to the microsecond, with the UTC offset of an aware time
/// (seconds east of UTC) or none for a naive one, as Python's `time`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Time {
    pub hour: u8,
    pub minute: u8,
    pub second: u8,
    pub microsecond: u32,
    pub utc_offset: Option<i32>,
}

/// A date and a time of day (Python's `datetime`): aware when
/// `time.utc_offset` is set, naive otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DateTime {
    pub date: Date,
    pub time: Time,
}

fn days_in_month(year: u16, month: u8) -> u8 {
    match month {
        4 | 6 | 9 | 11 => 30,
        2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        2 => 28,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Hinnant's method).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date `days` after 1970-01-01 (the inverse of `days_from_civil`).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}

/// A fixed-width run of ASCII digits as a number.
fn digits(s: &str) -> Option<u32> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

impl Date {
    /// The date, or `None` when it is not one (month 13, February 30, year 0).
    pub fn new(year: u16, month: u8, day: u8) -> Option<Date> {
        let valid =
            (1..=9999).contains(&year) && (1..=12).contains(&month) && day >= 1 && day <= days_in_month(year, month);
        valid.then_some(Date { year, month, day })
    }

    /// `YYYY-MM-DD`.
    pub fn parse_iso(s: &str) -> Option<Date> {
        let b = s.as_bytes();
        if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
            return None;
        }
        let year = digits(&s[0..4])?;
        Date::new(year as u16, digits(&s[5..7])? as u8, digits(&s[8..10])? as u8)
    }

    fn days_since_epoch(&self) -> i64 {
        days_from_civil(self.year.into(), self.month.into(), self.day.into())
    }
}

impl Time {
    /// The time, or `None` when a field is out of range (an offset must be
    /// strictly within a day, as Python requires).
    pub fn new(hour: u8, minute: u8, second: u8, microsecond: u32, utc_offset: Option<i32>) -> Option<Time> {
        let valid = hour < 24
            && minute < 60
            && second < 60
            && microsecond < 1_000_000
            && utc_offset.map_or(true, |o| o.abs() < 86_400);
        valid.then_some(Time {
            hour,
            minute,
            second,
            microsecond,
            utc_offset,
        })
    }

    /// `HH[:MM[:SS[.fraction]]]` and an optional offset `Z`, `±HH:MM` or
    /// `±HH:MM:SS`. A fraction of more than six digits is cut to microseconds.
    pub fn parse_iso(s: &str) -> Option<Time> {
        let (clock, offset) = match s.find(['+', '-', 'Z', 'z']) {
            Some(i) => (&s[..i], Some(parse_offset(&s[i..])?)),
            None => (s, None),
        };
        let (hms, fraction) = match clock.split_once('.') {
            Some((hms, f)) => (hms, Some(f)),
            None => (clock, None),
        };
        let parts: Vec<&str> = hms.split(':').collect();
        if parts.len() > 3 || parts.iter().any(|p| p.len() != 2) || (fraction.is_some() && parts.len() != 3) {
            return None;
        }
        let field = |i: usize| parts.get(i).map_or(Some(0), |p| digits(p));
        let microsecond = match fraction {
            None => 0,
            Some(f) if (1..=9).contains(&f.len()) && f.bytes().all(|b| b.is_ascii_digit()) => {
                let micros: String = f.chars().chain(std::iter::repeat('0')).take(6).collect();
                digits(&micros)?
            }
            Some(_) => return None,
        };
        Time::new(field(0)? as u8, field(1)? as u8, field(2)? as u8, microsecond, offset)
    }

    fn seconds_of_day(&self) -> i64 {
        i64::from(self.hour) * 3600 + i64::from(self.minute) * 60 + i64::from(self.second)
    }
}

/// `Z`, `±HH:MM` or `±HH:MM:SS` as seconds east of UTC.
fn parse_offset(s: &str) -> Option<i32> {
    if s == "Z" || s == "z" {
        return Some(0);
    }
    let sign = match s.as_bytes().first()? {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let parts: Vec<&str> = s[1..].split(':').collect();
    if !(2..=3).contains(&parts.len()) || parts.iter().any(|p| p.len() != 2) {
        return None;
    }
    let (h, m) = (digits(parts[0])?, digits(parts[1])?);
    let sec = parts.get(2).map_or(Some(0), |p| digits(p))?;
    if h >= 24 || m >= 60 || sec >= 60 {
        return None;
    }
    Some(sign * (h * 3600 + m * 60 + sec) as i32)
}

impl DateTime {
    /// `YYYY-MM-DD`, then `T` or a space, then a time as `Time::parse_iso`.
    pub fn parse_iso(s: &str) -> Option<DateTime> {
        let sep = s.as_bytes().get(10)?;
        if *sep != b'T' && *sep != b' ' {
            return None;
        }
        Some(DateTime {
            date: Date::parse_iso(s.get(..10)?)?,
            time: Time::parse_iso(s.get(11..)?)?,
        })
    }

    /// The instant of an aware datetime; `None` for a naive one, which has none.
    pub fn to_timestamp(&self) -> Option<Timestamp> {
        let offset = i64::from(self.time.utc_offset?);
        Some(Timestamp {
            seconds: self.date.days_since_epoch() * 86_400 + self.time.seconds_of_day() - offset,
            nanoseconds: self.time.microsecond * 1000,
        })
    }

    /// The instant in UTC (offset zero), floored to microseconds as the
    /// protocol floors datetimes; `None` outside the years 1 to 9999.
    pub fn from_timestamp(t: Timestamp) -> Option<DateTime> {
        if t.nanoseconds >= 1_000_000_000 {
            return None;
        }
        let (days, secs) = (t.seconds.div_euclid(86_400), t.seconds.rem_euclid(86_400));
        let (year, month, day) = civil_from_days(days);
        let date = Date::new(u16::try_from(year).ok()?, month as u8, day as u8)?;
        let time = Time::new(
            (secs / 3600) as u8,
            (secs / 60 % 60) as u8,
            (secs % 60) as u8,
            t.nanoseconds / 1000,
            Some(0),
        )?;
        Some(DateTime { date, time })
    }
}

impl From<DateTime> for Value {
    fn from(v: DateTime) -> Value {
        Value::DateTime(v)
    }
}

impl fmt::Display for Date {
    /// Python's `date.isoformat()`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

impl fmt::Display for Time {
    /// Python's `time.isoformat()`: microseconds only when not zero, the
    /// offset's seconds only when not zero.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:02}:{:02}:{:02}", self.hour, self.minute, self.second)?;
        if self.microsecond != 0 {
            write!(f, ".{:06}", self.microsecond)?;
        }
        if let Some(offset) = self.utc_offset {
            let (sign, o) = if offset < 0 { ('-', -offset) } else { ('+', offset) };
            write!(f, "{sign}{:02}:{:02}", o / 3600, o / 60 % 60)?;
            if o % 60 != 0 {
                write!(f, ":{:02}", o % 60)?;
            }
        }
        Ok(())
    }
}

impl fmt::Display for DateTime {
    /// Python's `datetime.isoformat()`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}T{}", self.date, self.time)
    }
}

/// The sentinel map of one temporal value.
fn serialize_sentinel<S: Serializer>(s: S, marker: &str, iso: String) -> Result<S::Ok, S::Error> {
    let mut map = s.serialize_map(Some(2))?;
    map.serialize_entry(marker, &true)?;
    map.serialize_entry("value", &iso)?;
    map.end()
}

impl Serialize for Date {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        serialize_sentinel(s, DATE_MARKER, self.to_string())
    }
}

impl Serialize for Time {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        serialize_sentinel(s, TIME_MARKER, self.to_string())
    }
}

impl Serialize for DateTime {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        serialize_sentinel(s, DATETIME_MARKER, self.to_string())
    }
}

/// A map revived when it is a sentinel as the Python SDKs revive one:
/// exactly two entries, the marker set to `true` and a `value` string that
/// parses; any other map (an unparsable value included) stays a map.
pub(crate) fn revive(pairs: Vec<(Value, Value)>) -> Value {
    if pairs.len() == 2 {
        let iso = pairs.iter().find_map(|(k, v)| match (k, v) {
            (Value::Str(k), Value::Str(v)) if k == "value" => Some(v.as_str()),
            _ => None,
        });
        let marker = pairs.iter().find_map(|(k, v)| match (k, v) {
            (Value::Str(k), Value::Bool(true)) => Some(k.as_str()),
            _ => None,
        });
        if let (Some(iso), Some(marker)) = (iso, marker) {
            // A trailing Z is UTC (the reference's fromisoformat reads "+00:00").
            let revived = match marker {
                DATETIME_MARKER => DateTime::parse_iso(iso).map(Value::DateTime),
                DATE_MARKER => Date::parse_iso(iso).map(Value::Date),
                TIME_MARKER => Time::parse_iso(iso).map(Value::Time),
                _ => None,
            };
            if let Some(v) = revived {
                return v;
            }
        }
    }
    Value::Map(pairs)
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Map(_) => "a map that is not a temporal sentinel",
        Value::DateTime(_) => "a datetime",
        Value::Date(_) => "a date",
        Value::Time(_) => "a time",
        Value::Timestamp(_) => "a MessagePack timestamp",
        _ => "another kind of value",
    }
}

impl<'de> Deserialize<'de> for Date {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Date, D::Error> {
        match Value::deserialize(d)? {
            Value::Date(v) => Ok(v),
            other => Err(D::Error::custom(format!(
                "expected a date sentinel, found {}",
                kind(&other)
            ))),
        }
    }
}

impl<'de> Deserialize<'de> for Time {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Time, D::Error> {
        match Value::deserialize(d)? {
            Value::Time(v) => Ok(v),
            other => Err(D::Error::custom(format!(
                "expected a time sentinel, found {}",
                kind(&other)
            ))),
        }
    }
}

impl<'de> Deserialize<'de> for DateTime {
    /// A datetime sentinel, or a MessagePack timestamp (as UTC).
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<DateTime, D::Error> {
        match Value::deserialize(d)? {
            Value::DateTime(v) => Ok(v),
            Value::Timestamp(t) => DateTime::from_timestamp(t)
                .ok_or_else(|| D::Error::custom("the timestamp is outside the years 1 to 9999")),
            other => Err(D::Error::custom(format!(
                "expected a datetime sentinel, found {}",
                kind(&other)
            ))),
        }
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    /// A MessagePack timestamp, or the sentinel of an aware datetime.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Timestamp, D::Error> {
        match Value::deserialize(d)? {
            Value::Timestamp(t) => Ok(t),
            Value::DateTime(v) => v
                .to_timestamp()
                .ok_or_else(|| D::Error::custom(format!("naive datetime {v}: no UTC offset, so no instant"))),
            other => Err(D::Error::custom(format!(
                "expected a timestamp or a datetime sentinel, found {}",
                kind(&other)
            ))),
        }
    }
}
