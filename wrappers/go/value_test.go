package cachekit

import (
	"bytes"
	"errors"
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
