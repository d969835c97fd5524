package cachekit

import (
	"fmt"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

// DateTime is an instant in a cached value, stored as every SDK stores a
// datetime value: the sentinel map {"__datetime__": true, "value": ISO 8601
// with its UTC offset} (Python's isoformat: microseconds, written only when
// not zero). Use it for time fields of Wrap results; a bare time.Time has no
// interop value form (EncodeValue refuses it). Reading accepts a trailing Z.
// For arguments pass a time.Time: an argument datetime is keyed as float
// seconds, and a DateTime argument would be keyed as this map instead.
type DateTime struct{ time.Time }

// EncodeMsgpack writes the sentinel map (the core sorts its keys).
func (d DateTime) EncodeMsgpack(enc *msgpack.Encoder) error {
	if err := enc.EncodeMapLen(2); err != nil {
		return err
	}
	if err := enc.EncodeString("__datetime__"); err != nil {
		return err
	}
	if err := enc.EncodeBool(true); err != nil {
		return err
	}
	if err := enc.EncodeString("value"); err != nil {
		return err
	}
	return enc.EncodeString(isoformat(d.Time))
}

// isoformat is Python's datetime.isoformat() of an aware datetime.
func isoformat(t time.Time) string {
	t = t.Truncate(time.Microsecond)
	if t.Nanosecond() == 0 {
		return t.Format("2006-01-02T15:04:05-07:00")
	}
	return t.Format("2006-01-02T15:04:05.000000-07:00")
}

// DecodeMsgpack reads the sentinel map.
func (d *DateTime) DecodeMsgpack(dec *msgpack.Decoder) error {
	n, err := dec.DecodeMapLen()
	if err != nil {
		return err
	}
	sentinel, value := false, ""
	for i := 0; i < n; i++ {
		k, err := dec.DecodeString()
		if err != nil {
			return err
		}
		switch k {
		case "__datetime__":
			if sentinel, err = dec.DecodeBool(); err != nil {
				return err
			}
		case "value":
			if value, err = dec.DecodeString(); err != nil {
				return err
			}
		default:
			if err := dec.Skip(); err != nil {
				return err
			}
		}
	}
	if !sentinel {
		return fmt.Errorf("not a datetime value (no true __datetime__ key)")
	}
	t, err := time.Parse(time.RFC3339Nano, value) // an offset or a trailing Z

	if err != nil {
		return fmt.Errorf("datetime value %q: %w", value, err)
	}
	d.Time = t
	return nil
}
