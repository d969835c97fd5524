package cachekit

import (
	"bytes"
	"sync"

	"github.com/vmihailenco/msgpack/v5"
)

// Key is the interop/v1 key of a call: namespace, operation and the call's
// arguments in order, as every CacheKit SDK computes it for the same call.
// The arguments are written as one MessagePack array (the types below), and
// the core re-encodes that array canonically and hashes it (InteropKey).
//
// Go values map to MessagePack as github.com/vmihailenco/msgpack/v5 writes
// them: integers, floats, bool, string, []byte (bin), nil and nil pointers
// (nil), pointers as what they point to, slices and arrays, maps with string
// keys (sorted by the core), structs as maps of their fields named by their
// `msgpack` tags (untagged fields by their Go names; `msgpack:"-"` skips one),
// time.Time as an aware timestamp (the core turns it into float seconds, as
// Python does for a datetime), types with MarshalBinary as bin and with
// MarshalText as a string. A Set argument is an unordered set. Refused, with
// an *Error of the core (ErrUnsupported): NaN and infinities, maps with
// non-string keys, invalid UTF-8. Segments that do not match the interop
// pattern are ErrInvalidSegment.
func Key(ns, op string, args ...any) (string, error) {
	var stack [64]byte
	if b, ok := appendScalarArgs(stack[:0], args); ok {
		return InteropKey(ns, op, b)
	}
	e := getArgsEncoder()
	defer putArgsEncoder(e)
	if err := e.array(args); err != nil {
		return "", err
	}
	return InteropKey(ns, op, e.buf.Bytes())
}

// argsEncoder is one reusable MessagePack writer for argument arrays and
// values. Widths and struct field order need not be canonical here: the core
// canonicalises.
type argsEncoder struct {
	buf bytes.Buffer
	enc *msgpack.Encoder
}

// array writes args as one MessagePack array.
func (e *argsEncoder) array(args []any) error {
	if err := e.enc.EncodeArrayLen(len(args)); err != nil {
		return err
	}
	for _, a := range args {
		if err := e.encode(a); err != nil {
			return err
		}
	}
	return nil
}

func (e *argsEncoder) encode(v any) error {
	if err := e.enc.Encode(v); err != nil {
		return unsupported(err)
	}
	return nil
}

// unsupported is an argument or value the MessagePack writer refused (a
// channel, a func, ...), reported as the core reports its own refusals.
func unsupported(err error) error {
	return &Error{Code: StatusUnsupportedType, Name: StatusUnsupportedType.Name(), Message: err.Error()}
}

var argsEncoders = sync.Pool{New: func() any {
	e := &argsEncoder{}
	e.enc = msgpack.NewEncoder(&e.buf)
	e.enc.UseCompactInts(true)
	e.enc.SetSortMapKeys(true) // map[string]string/bool/any: the same map, the same bytes (the key memo)
	return e
}}

func getArgsEncoder() *argsEncoder {
	e := argsEncoders.Get().(*argsEncoder)
	e.buf.Reset()
	return e
}

func putArgsEncoder(e *argsEncoder) {
	if e.buf.Cap() <= 64<<10 { // a huge argument's buffer is not kept alive
		argsEncoders.Put(e)
	}
}

// extSet is the core's input extension for a set (CACHEKIT_MSGPACK_EXT_SET).
const extSet = 83

// Set is an unordered set argument: its key is the same whatever the order
// and repetition of the elements, as for a Python set or frozenset (the core
// sorts the canonical elements by their bytes and drops duplicates).
type Set []any

// EncodeMsgpack writes the set as the core's set extension around an array.
func (s Set) EncodeMsgpack(enc *msgpack.Encoder) error {
	inner := getArgsEncoder()
	defer putArgsEncoder(inner)
	if err := inner.enc.EncodeArrayLen(len(s)); err != nil {
		return err
	}
	for _, v := range s {
		if err := inner.enc.Encode(v); err != nil {
			return err
		}
	}
	if err := enc.EncodeExtHeader(extSet, inner.buf.Len()); err != nil {
		return err
	}
	_, err := enc.Writer().Write(inner.buf.Bytes())
	return err
}
