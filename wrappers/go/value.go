package cachekit

import (
	"bytes"
	"fmt"
	"reflect"
	"sync"
	"time"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"
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
// Before anything is decoded the document is checked against the decode
// bounds (depth 1024; declared items and bytes backed by the input): a
// hostile header is ErrDecode (Overclaim, DepthExceeded, Truncated), never
// an allocation of what it claims.
//
// Decoded into a *any, every document a reader must accept decodes: to
// int64, uint64, float64, string, []byte, bool, nil, time.Time (the
// timestamp ext), RawExt (other ext types), []any, map[string]any, and
// map[any]any for maps with other scalar keys.
func DecodeValue(data []byte, out any) error {
	d := valueDecoders.Get().(*valueDecoder)
	defer valueDecoders.Put(d)
	return d.decode(data, out)
}

// decode is DecodeValue with this decoder; it keeps no reference to data.
func (d *valueDecoder) decode(data []byte, out any) error {
	if d.dec == nil {
		d.dec = msgpack.NewDecoder(nil) // options: see valueDecoder
	}
	if err := d.bounds.check(data); err != nil {
		return err // before the library sees a header it would trust
	}
	d.r.Reset(data)
	d.dec.ResetReader(&d.r) // keeps the options (Reset would clear them)
	defer d.r.Reset(nil)    // a pooled decoder must not keep the caller's bytes alive
	var err error
	if p, ok := out.(*any); ok {
		*p, err = decodeDynamic(d.dec, &d.r, 0)
	} else {
		err = d.dec.Decode(out)
	}
	if err != nil {
		return decodeError(StatusDeserialization, err.Error())
	}
	if d.r.Len() != 0 {
		return decodeError(StatusTrailingBytes, fmt.Sprintf("%d bytes after one complete document", d.r.Len()))
	}
	return nil
}

// RawExt is an application ext type found in a value: kept, not interpreted.
type RawExt struct {
	Type int8
	Data []byte
}

// Ext gives the type and payload (the harness renders it as {"$ext": ...}).
func (e RawExt) Ext() (int8, []byte) { return e.Type, e.Data }

// decodeDynamic decodes one document into Go's dynamic values; unlike the
// library's interface decoding it keeps bin as []byte, widens integers to
// int64/uint64 and accepts non-string map keys and unknown ext types. r is
// the decoder's input: no allocation is larger than the bytes left in it
// can back (an item takes at least one byte, a map pair two), whatever a
// header claims.
func decodeDynamic(d *msgpack.Decoder, r *bytes.Reader, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nesting deeper than %d", maxDepth)
	}
	c, err := d.PeekCode()
	if err != nil {
		return nil, err
	}
	switch {
	case msgpcode.IsBin(c):
		return d.DecodeBytes()
	case msgpcode.IsFixedArray(c) || c == msgpcode.Array16 || c == msgpcode.Array32:
		n, err := d.DecodeArrayLen()
		if err != nil || n < 0 {
			return nil, err
		}
		out := make([]any, 0, min(n, r.Len()))
		for i := 0; i < n; i++ {
			e, err := decodeDynamic(d, r, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, e)
		}
		return out, nil
	case msgpcode.IsFixedMap(c) || c == msgpcode.Map16 || c == msgpcode.Map32:
		return decodeDynamicMap(d, r, depth)
	case msgpcode.IsExt(c):
		id, n, err := d.DecodeExtHeader()
		if err != nil {
			return nil, err
		}
		if n > r.Len() {
			return nil, fmt.Errorf("an ext of %d bytes with %d left", n, r.Len())
		}
		payload := make([]byte, n)
		if err := d.ReadFull(payload); err != nil {
			return nil, err
		}
		if id == -1 { // the standard timestamp
			var t time.Time
			if err := msgpack.Unmarshal(timestampDoc(payload), &t); err != nil {
				return nil, err
			}
			return t, nil
		}
		return RawExt{Type: id, Data: payload}, nil
	}
	return d.DecodeInterfaceLoose() // scalars: int64, uint64, float64, string, bool, nil
}

// timestampDoc re-frames a timestamp payload as a whole ext document.
func timestampDoc(payload []byte) []byte {
	switch len(payload) {
	case 4:
		return append([]byte{0xd6, 0xff}, payload...)
	case 8:
		return append([]byte{0xd7, 0xff}, payload...)
	}
	return append([]byte{0xc7, byte(len(payload)), 0xff}, payload...)
}

// decodeDynamicMap keeps maps with non-string keys (a reader must accept
// them) as map[any]any; a key Go cannot hash (an array, a map, bytes) is an
// error, not a crash.
func decodeDynamicMap(d *msgpack.Decoder, r *bytes.Reader, depth int) (any, error) {
	n, err := d.DecodeMapLen()
	if err != nil || n < 0 {
		return nil, err
	}
	keys, vals := make([]any, 0, min(n, r.Len()/2)), make([]any, 0, min(n, r.Len()/2))
	allStrings := true
	for i := 0; i < n; i++ {
		k, err := decodeDynamic(d, r, depth+1)
		if err != nil {
			return nil, err
		}
		if _, ok := k.(string); !ok {
			allStrings = false
			if k != nil && !reflect.TypeOf(k).Comparable() {
				return nil, fmt.Errorf("a map key of type %T", k)
			}
		}
		v, err := decodeDynamic(d, r, depth+1)
		if err != nil {
			return nil, err
		}
		keys, vals = append(keys, k), append(vals, v)
	}
	if allStrings {
		m := make(map[string]any, len(keys))
		for i := range keys {
			m[keys[i].(string)] = vals[i]
		}
		return m, nil
	}
	m := make(map[any]any, len(keys))
	for i := range keys {
		m[keys[i]] = vals[i]
	}
	return m, nil
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
// allocates only what the result itself holds. Interface fields inside the
// caller's types get the library's default interface decoding (bin stays
// []byte; its "loose" mode would make bin a string); a whole value decoded
// into *any goes through decodeDynamic. The zero value is ready.
type valueDecoder struct {
	r      bytes.Reader
	dec    *msgpack.Decoder
	bounds boundsWalker
}

var valueDecoders = sync.Pool{New: func() any { return new(valueDecoder) }}
