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
// struct; time.Time has no interop value form and is refused.
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
	if _, err := EncodeValue(time.Unix(0, 0)); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("time.Time: %v, want ErrUnsupported", err)
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
