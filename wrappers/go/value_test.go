package cachekit

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// A map whose key Go cannot hash (an array) is refused with ErrDecode, not a
// panic; bin stays []byte in an interface, at the top and inside a struct.
func TestDecodeValueIntoInterfaces(t *testing.T) {
	var v any
	if err := DecodeValue([]byte{0x81, 0x91, 0x01, 0x02}, &v); !errors.Is(err, ErrDecode) {
		t.Fatalf("{[1]: 2}: %v, want ErrDecode", err)
	}
	if err := DecodeValue([]byte{0xc4, 0x02, 0xde, 0xad}, &v); err != nil || !bytes.Equal(v.([]byte), []byte{0xde, 0xad}) {
		t.Fatalf("bin: %#v, %v", v, err)
	}
	var s struct {
		X any `msgpack:"x"`
	}
	if err := DecodeValue([]byte{0x81, 0xa1, 'x', 0xc4, 0x01, 0x07}, &s); err != nil || !bytes.Equal(s.X.([]byte), []byte{7}) {
		t.Fatalf("bin field: %#v, %v", s, err)
	}
	if err := DecodeValue([]byte{0x01, 0x02}, &v); !errors.Is(err, ErrDecode) {
		t.Fatalf("trailing byte: %v, want ErrDecode", err)
	}
}

// EncodeValue writes the canonical form whatever the field order of the
// struct; a time.Time field is refused (the library would write an ext), a
// time.Time value is written as DateTime writes it.
func TestEncodeValueSortsStructFields(t *testing.T) {
	type rec struct {
		Name string `msgpack:"name"`
		Age  int    `msgpack:"age"`
	}
	data, err := EncodeValue(rec{Name: "alice", Age: 30})
	want := []byte{0x82, 0xa3, 'a', 'g', 'e', 0x1e, 0xa4, 'n', 'a', 'm', 'e', 0xa5, 'a', 'l', 'i', 'c', 'e'}
	if err != nil || !bytes.Equal(data, want) {
		t.Fatalf("EncodeValue = %x, %v; want %x (interop-mode.json issue_example_object)", data, err, want)
	}
	type stamped struct {
		At time.Time `msgpack:"at"`
	}
	if _, err := EncodeValue(stamped{At: time.Unix(0, 0)}); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("a time.Time field: %v, want ErrUnsupported", err)
	}
	at := time.Date(2024, 1, 1, 12, 30, 45, 123456789, time.UTC)
	bare, err := EncodeValue(at)
	wrapped, _ := EncodeValue(DateTime{at})
	inList, _ := EncodeValue([]any{at})
	if err != nil || !bytes.Equal(bare, wrapped) || !bytes.Equal(inList, append([]byte{0x91}, wrapped...)) {
		t.Fatalf("a bare time.Time: %x, %v; want DateTime's %x (also inside a []any: %x)", bare, err, wrapped, inList)
	}
}

// DateTime is stored as interop-mode.json's datetime_sentinel_value row
// writes it, and read back to the same instant (a trailing Z read too).
func TestDateTimeValue(t *testing.T) {
	at := time.Date(2024, 1, 1, 12, 30, 45, 123456789, time.UTC)
	data, err := EncodeValue(DateTime{at})
	want := "82ac5f5f6461746574696d655f5fc3a576616c7565d920323032342d30312d30315431323a33303a34352e3132333435362b30303a3030"
	if err != nil || fmt.Sprintf("%x", data) != want {
		t.Fatalf("EncodeValue = %x, %v; want %s", data, err, want)
	}
	var back DateTime
	if err := DecodeValue(data, &back); err != nil || !back.Equal(at.Truncate(time.Microsecond)) {
		t.Fatalf("DecodeValue = %v, %v", back, err)
	}
	whole, _ := EncodeValue(DateTime{time.Date(2024, 1, 1, 18, 0, 0, 0, time.FixedZone("", 5*3600+1800))})
	var w DateTime
	if err := DecodeValue(whole, &w); err != nil || !strings.Contains(string(whole), "2024-01-01T18:00:00+05:30") {
		t.Fatalf("whole second with offset: %q, %v", whole, err)
	}
	z, _ := EncodeValue(map[string]any{"__datetime__": true, "value": "2024-01-01T00:00:00Z"})
	if err := DecodeValue(z, &w); err != nil || !w.Equal(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("trailing Z: %v, %v", w, err)
	}
	notDT, _ := EncodeValue(map[string]any{"value": "x"})
	if err := DecodeValue(notDT, &w); !errors.Is(err, ErrDecode) {
		t.Fatalf("a map without the sentinel: %v, want ErrDecode", err)
	}
}

// The MessagePack timestamp ext (d6 ff + 4 bytes of seconds) decodes to a
// time.Time, into an interface and into a time.Time.
func TestDecodeValueTimestampExt(t *testing.T) {
	doc := []byte{0xd6, 0xff, 0x00, 0x00, 0x00, 0x01}
	want := time.Unix(1, 0)
	var v any
	if err := DecodeValue(doc, &v); err != nil || !v.(time.Time).Equal(want) {
		t.Fatalf("into any: %#v, %v", v, err)
	}
	var tt time.Time
	if err := DecodeValue(doc, &tt); err != nil || !tt.Equal(want) {
		t.Fatalf("into time.Time: %v, %v", tt, err)
	}
}

// Issue 25: a lone 5-byte array32 header claiming 2^32-1 elements made the
// decoder allocate them (an out-of-memory abort no recover catches). Every
// decode target now gets ErrDecode (Overclaim) before any allocation.
func TestDecodeValueFiveByteArray32Header(t *testing.T) {
	doc := []byte{0xdd, 0xff, 0xff, 0xff, 0xff}
	targets := []any{new(any), new([]any), new([]int), new([]string), new(map[string]any), new(struct{ A []int })}
	for _, out := range targets {
		err := DecodeValue(doc, out)
		var e *Error
		if !errors.Is(err, ErrDecode) || !errors.As(err, &e) || e.Code != StatusOverclaim {
			t.Fatalf("into %T: %v, want ErrDecode (Overclaim)", out, err)
		}
	}
}
