package cachekit

import (
	"bytes"
	"fmt"
	"maps"
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
// Temporal values are written as the sentinel maps every SDK stores: a
// time.Time (the value itself, or inside a []any, map[string]any or
// map[any]any) as DateTime's {"__datetime__": true, ...}, a Date and a
// TimeOfDay as theirs. A time.Time field of a struct is refused with
// ErrUnsupported (the MessagePack library writes it as a timestamp ext,
// which interop values do not carry): declare it as DateTime.
func EncodeValue(v any) ([]byte, error) {
	e := getArgsEncoder()
	defer putArgsEncoder(e)
	if err := e.encode(withSentinels(v)); err != nil {
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
// map[any]any for maps with other scalar keys. The temporal sentinel maps
// revive, at any depth: {"__datetime__": true, "value": iso} as a
// time.Time, "__date__" as a Date, "__time__" as a TimeOfDay (a sentinel
// whose value does not parse is ErrDecode). Maps inside interface fields
// and map[string]any values of the caller's types revive the same way
// (there the library decodes the other values: an application ext type is
// an error; decode into an interface or a RawExt to keep one).
// Into a *time.Time, both the datetime sentinel and the timestamp ext
// decode; into a *RawExt, an ext type.
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
	d.dec.ResetReader(&d.r)           // keeps the options (Reset would clear them)
	d.dec.SetMapDecoder(interfaceMap) // ResetReader drops it
	defer d.r.Reset(nil)              // a pooled decoder must not keep the caller's bytes alive
	var err error
	switch p := out.(type) {
	case *any:
		*p, err = decodeDynamic(d.dec, &d.r, 0)
	case *time.Time:
		*p, err = decodeTime(d.dec, &d.r)
	default:
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

// DecodeMsgpack reads any ext type (a RawExt target on the typed path).
func (e *RawExt) DecodeMsgpack(dec *msgpack.Decoder) error {
	id, n, err := dec.DecodeExtHeader()
	if err != nil {
		return err
	}
	e.Type, e.Data = id, make([]byte, n) // n is backed: the bounds check ran
	return dec.ReadFull(e.Data)
}

// decodeTime is DecodeValue into a time.Time: the datetime sentinel or the
// timestamp ext.
func decodeTime(d *msgpack.Decoder, r *bytes.Reader) (time.Time, error) {
	v, err := decodeDynamic(d, r, 0)
	if err != nil {
		return time.Time{}, err
	}
	t, ok := v.(time.Time)
	if !ok {
		return time.Time{}, fmt.Errorf("a %T value is not a datetime", v)
	}
	return t, nil
}

// withSentinels gives v with every time.Time of the dynamic shapes
// DecodeValue produces (at the top, in []any, map[string]any, map[any]any)
// as a DateTime, which writes the datetime sentinel map; v itself when it
// holds none (nothing is copied then).
func withSentinels(v any) any {
	r, _ := sentinels(v)
	return r
}

func sentinels(v any) (any, bool) {
	switch x := v.(type) {
	case time.Time:
		return DateTime{x}, true
	case []any:
		var out []any
		for i, e := range x {
			s, changed := sentinels(e)
			if changed && out == nil {
				out = append([]any(nil), x...)
			}
			if changed {
				out[i] = s
			}
		}
		if out != nil {
			return out, true
		}
	case map[string]any:
		if out := sentinelsInMap(x); out != nil {
			return out, true
		}
	case map[any]any:
		if out := sentinelsInMap(x); out != nil {
			return out, true
		}
	}
	return v, false
}

// sentinelsInMap is sentinels for one map of either key type: a copy with
// the changed values replaced, or nil when no value changes (m is never
// written, since the caller's value must stay as given).
func sentinelsInMap[K comparable](m map[K]any) map[K]any {
	var out map[K]any
	for k, e := range m {
		if s, changed := sentinels(e); changed {
			if out == nil {
				out = maps.Clone(m)
			}
			out[k] = s
		}
	}
	return out
}

// decodeDynamic decodes one document into Go's dynamic values; unlike the
// library's interface decoding it keeps bin as []byte, widens integers to
// int64/uint64, accepts non-string map keys and unknown ext types and
// revives the temporal sentinel maps. r is the decoder's input: no
// allocation is larger than the bytes left in it can back (an item takes at
// least one byte, a map pair two), whatever a header claims.
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
// error, not a crash. A sentinel map revives as its temporal value.
func decodeDynamicMap(d *msgpack.Decoder, r *bytes.Reader, depth int) (any, error) {
	n, err := d.DecodeMapLen()
	if err != nil || n < 0 {
		return nil, err
	}
	return collectMap(n, r.Len()/2, func() (any, any, error) {
		k, err := decodeDynamic(d, r, depth+1)
		if err != nil {
			return nil, nil, err
		}
		v, err := decodeDynamic(d, r, depth+1)
		return k, v, err
	})
}

// interfaceMap is the library's map decoder for interface values inside the
// caller's types (an `any` field, a map[string]any value): the library's
// own interface decoding of keys and values, with non-string keys kept and
// the temporal sentinels revived as decodeDynamic does. Its input was
// bounds-checked whole: a count is backed by bytes, so it caps nothing.
func interfaceMap(d *msgpack.Decoder) (any, error) {
	n, err := d.DecodeMapLen()
	if err != nil || n < 0 {
		return nil, err
	}
	return collectMap(n, n, func() (any, any, error) {
		k, err := d.DecodeInterface()
		if err != nil {
			return nil, nil, err
		}
		v, err := d.DecodeInterface()
		return k, v, err
	})
}

// collectMap reads n pairs with next into a map[string]any (every key a
// string: then a sentinel map revives) or a map[any]any, preallocating at
// most capHint pairs.
func collectMap(n, capHint int, next func() (any, any, error)) (any, error) {
	keys, vals := make([]any, 0, min(n, capHint)), make([]any, 0, min(n, capHint))
	allStrings := true
	for i := 0; i < n; i++ {
		k, v, err := next()
		if err != nil {
			return nil, err
		}
		if _, ok := k.(string); !ok {
			allStrings = false
			if k != nil && !reflect.TypeOf(k).Comparable() {
				return nil, fmt.Errorf("a map key of type %T", k)
			}
		}
		keys, vals = append(keys, k), append(vals, v)
	}
	if allStrings {
		m := make(map[string]any, len(keys))
		for i := range keys {
			m[keys[i].(string)] = vals[i]
		}
		if t, ok, err := reviveTemporal(m); ok || err != nil {
			return t, err
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
// []byte; its "loose" mode would make bin a string) with interfaceMap for
// their maps; a whole value decoded into *any goes through decodeDynamic.
// The zero value is ready.
type valueDecoder struct {
	r      bytes.Reader
	dec    *msgpack.Decoder
	bounds boundsWalker
}

var valueDecoders = sync.Pool{New: func() any { return new(valueDecoder) }}
