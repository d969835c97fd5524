package cachekit

import (
	"bytes"
	"fmt"
	"sync"

	"github.com/vmihailenco/msgpack/v5"
)

// EncodeValue is the interop/v1 value of v: the canonical MessagePack
// document (value profile: shortest widths, map keys sorted, floats kept as
// float64) that Wrap stores and every CacheKit SDK reads. Go values map to
// MessagePack as for Key, structs as maps of their `msgpack`-tagged fields.
// time.Time has no interop value form here (Python's datetime sentinel map
// is not written): it is refused with ErrUnsupported; store a string or a
// number instead.
func EncodeValue(v any) ([]byte, error) {
	e := getArgsEncoder()
	defer putArgsEncoder(e)
	if err := e.encode(v); err != nil {
		return nil, err
	}
	return CanonicalValue(e.buf.Bytes()) // the core writes it as the other SDKs do
}

// DecodeValue decodes one interop/v1 value into out (a pointer), reading
// data in place: strings and byte slices are the only copies made. Exactly
// one document is accepted: trailing bytes are ErrDecode (TrailingBytes),
// a document that does not fit out's type is ErrDecode (DeserializationFailed).
// Values decoded into an interface hold int64, uint64, float64, string,
// []byte, bool, nil, []any and map[string]any.
func DecodeValue(data []byte, out any) error {
	d := getValueDecoder(data)
	defer putValueDecoder(d)
	if err := d.dec.Decode(out); err != nil {
		return decodeError(StatusDeserialization, err.Error())
	}
	if d.r.Len() != 0 {
		return decodeError(StatusTrailingBytes, fmt.Sprintf("%d bytes after one complete document", d.r.Len()))
	}
	return nil
}

// decodeAs is DecodeValue into a fresh value of the caller's type.
func decodeAs[R any](data []byte) (R, error) {
	var r R
	err := DecodeValue(data, &r)
	return r, err
}

func decodeError(code Status, msg string) error {
	return &Error{Code: code, Name: code.Name(), Message: msg}
}

// valueDecoder is a reusable decoder over a reusable reader: decoding
// allocates only what the result itself holds.
type valueDecoder struct {
	r   bytes.Reader
	dec *msgpack.Decoder
}

var valueDecoders = sync.Pool{New: func() any {
	d := &valueDecoder{dec: msgpack.NewDecoder(nil)}
	d.dec.UseLooseInterfaceDecoding(true) // int64/uint64/float64 in interfaces
	return d
}}

func getValueDecoder(data []byte) *valueDecoder {
	d := valueDecoders.Get().(*valueDecoder)
	d.r.Reset(data)
	d.dec.ResetReader(&d.r) // keeps the options (Reset would clear them)
	return d
}

func putValueDecoder(d *valueDecoder) {
	d.r.Reset(nil) // the pool must not keep the caller's bytes alive
	valueDecoders.Put(d)
}
