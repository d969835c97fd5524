package cachekit

import (
	"fmt"
	"strings"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

// DateTime is an instant in a cached value, stored as every SDK stores a
// datetime value: the sentinel map {"__datetime__": true, "value": ISO 8601
// with its UTC offset} (Python's isoformat: microseconds, written only when
// not zero). Use it for time fields of Wrap results: EncodeValue writes a
// bare time.Time this way too, but refuses a time.Time struct field (the
// library would write a timestamp ext). Reading accepts a trailing Z, and a
// value without an offset (Python's naive datetime) as UTC.
// For arguments pass a time.Time: an argument datetime is keyed as float
// seconds, and a DateTime argument would be keyed as this map instead.
type DateTime struct{ time.Time }

// EncodeMsgpack writes the sentinel map (the core sorts its keys).
func (d DateTime) EncodeMsgpack(enc *msgpack.Encoder) error {
	return encodeSentinel(enc, sentinelDateTime, isoformat(d.Time))
}

// isoformat is Python's datetime.isoformat() of an aware datetime.
func isoformat(t time.Time) string {
	t = t.Truncate(time.Microsecond)
	if t.Nanosecond() == 0 {
		return t.Format("2006-01-02T15:04:05-07:00")
	}
	return t.Format("2006-01-02T15:04:05.000000-07:00")
}

// DecodeMsgpack reads the sentinel map (the value offset, if any, kept).
func (d *DateTime) DecodeMsgpack(dec *msgpack.Decoder) error {
	value, err := decodeSentinel(dec, sentinelDateTime)
	if err != nil {
		return err
	}
	d.Time, err = parseDateTime(value)
	return err
}

// The sentinel keys of the three temporal kinds (wire-format.md): a map with
// one of them true and a "value" string is that temporal value.
const (
	sentinelDateTime = "__datetime__"
	sentinelDate     = "__date__"
	sentinelTime     = "__time__"
)

// encodeSentinel writes {key: true, "value": iso} (the core sorts the keys).
func encodeSentinel(enc *msgpack.Encoder, key, iso string) error {
	if err := enc.EncodeMapLen(2); err != nil {
		return err
	}
	if err := enc.EncodeString(key); err != nil {
		return err
	}
	if err := enc.EncodeBool(true); err != nil {
		return err
	}
	if err := enc.EncodeString("value"); err != nil {
		return err
	}
	return enc.EncodeString(iso)
}

// decodeSentinel reads a sentinel map of the given kind and gives its value.
func decodeSentinel(dec *msgpack.Decoder, key string) (string, error) {
	n, err := dec.DecodeMapLen()
	if err != nil {
		return "", err
	}
	sentinel, value, hasValue := false, "", false
	for i := 0; i < n; i++ {
		k, err := dec.DecodeString()
		if err != nil {
			return "", err
		}
		switch k {
		case key:
			if sentinel, err = dec.DecodeBool(); err != nil {
				return "", err
			}
		case "value":
			if value, err = dec.DecodeString(); err != nil {
				return "", err
			}
			hasValue = true
		default:
			if err := dec.Skip(); err != nil {
				return "", err
			}
		}
	}
	if !sentinel || !hasValue {
		return "", fmt.Errorf("not a %s value (no true %s key and \"value\" string)", strings.Trim(key, "_"), key)
	}
	return value, nil
}

// reviveTemporal turns a decoded sentinel map into its temporal value: a
// time.Time for a datetime, a Date, a TimeOfDay. ok is false for any other
// map (it stays a map); a sentinel whose value does not parse is an error.
func reviveTemporal(m map[string]any) (v any, ok bool, err error) {
	if len(m) < 2 {
		return nil, false, nil
	}
	value, isString := m["value"].(string)
	if !isString {
		return nil, false, nil
	}
	switch {
	case m[sentinelDateTime] == true:
		t, err := parseDateTime(value)
		return t, true, err
	case m[sentinelDate] == true:
		d, err := parseDate(value)
		return d, true, err
	case m[sentinelTime] == true:
		t, err := parseTimeOfDay(value)
		return t, true, err
	}
	return nil, false, nil
}

// parseDateTime reads Python's datetime.isoformat(): with a UTC offset or a
// trailing Z; one without an offset (a naive datetime) is read as UTC, since
// a Go time.Time always has a location.
func parseDateTime(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse("2006-01-02T15:04:05", s); err == nil { // fractions are accepted too
		return t, nil
	}
	return time.Time{}, fmt.Errorf("datetime value %q is not an ISO 8601 datetime", s)
}

// Date is a calendar date in a cached value, stored as every SDK stores a
// date: the sentinel map {"__date__": true, "value": "YYYY-MM-DD"} (Python's
// datetime.date). DecodeValue into an interface revives that map as a Date.
type Date struct {
	Year  int
	Month time.Month
	Day   int
}

// String is the ISO form the sentinel map holds.
func (d Date) String() string { return fmt.Sprintf("%04d-%02d-%02d", d.Year, int(d.Month), d.Day) }

// EncodeMsgpack writes the sentinel map.
func (d Date) EncodeMsgpack(enc *msgpack.Encoder) error {
	return encodeSentinel(enc, sentinelDate, d.String())
}

// DecodeMsgpack reads the sentinel map.
func (d *Date) DecodeMsgpack(dec *msgpack.Decoder) error {
	value, err := decodeSentinel(dec, sentinelDate)
	if err != nil {
		return err
	}
	*d, err = parseDate(value)
	return err
}

func parseDate(s string) (Date, error) {
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		return Date{}, fmt.Errorf("date value %q is not an ISO 8601 date (YYYY-MM-DD)", s)
	}
	return Date{Year: t.Year(), Month: t.Month(), Day: t.Day()}, nil
}

// TimeOfDay is a time of day in a cached value, stored as every SDK stores
// one: the sentinel map {"__time__": true, "value": "HH:MM:SS[.ffffff]"}
// (Python's datetime.time; an aware one carries its UTC offset, "+HH:MM").
// DecodeValue into an interface revives that map as a TimeOfDay.
type TimeOfDay struct {
	Hour, Minute, Second int
	Nanosecond           int  // written to microseconds, as Python keeps it
	Aware                bool // the value carries a UTC offset
	OffsetSeconds        int  // east of UTC, when Aware
}

// String is Python's time.isoformat(): microseconds only when not zero.
func (t TimeOfDay) String() string {
	s := fmt.Sprintf("%02d:%02d:%02d", t.Hour, t.Minute, t.Second)
	if us := t.Nanosecond / 1000; us != 0 {
		s += fmt.Sprintf(".%06d", us)
	}
	if t.Aware {
		sign, off := '+', t.OffsetSeconds
		if off < 0 {
			sign, off = '-', -off
		}
		s += fmt.Sprintf("%c%02d:%02d", sign, off/3600, off/60%60)
		if off%60 != 0 {
			s += fmt.Sprintf(":%02d", off%60)
		}
	}
	return s
}

// EncodeMsgpack writes the sentinel map.
func (t TimeOfDay) EncodeMsgpack(enc *msgpack.Encoder) error {
	return encodeSentinel(enc, sentinelTime, t.String())
}

// DecodeMsgpack reads the sentinel map.
func (t *TimeOfDay) DecodeMsgpack(dec *msgpack.Decoder) error {
	value, err := decodeSentinel(dec, sentinelTime)
	if err != nil {
		return err
	}
	*t, err = parseTimeOfDay(value)
	return err
}

func parseTimeOfDay(s string) (TimeOfDay, error) {
	// Go's parser takes a fraction after the seconds without the layout naming it.
	if p, err := time.Parse("15:04:05Z07:00", s); err == nil {
		_, off := p.Zone()
		return TimeOfDay{Hour: p.Hour(), Minute: p.Minute(), Second: p.Second(), Nanosecond: p.Nanosecond(),
			Aware: true, OffsetSeconds: off}, nil
	}
	for _, layout := range []string{"15:04:05", "15:04"} {
		if p, err := time.Parse(layout, s); err == nil {
			return TimeOfDay{Hour: p.Hour(), Minute: p.Minute(), Second: p.Second(), Nanosecond: p.Nanosecond()}, nil
		}
	}
	return TimeOfDay{}, fmt.Errorf("time value %q is not an ISO 8601 time of day (HH:MM:SS)", s)
}
