package cachekit_test

import (
	"encoding/hex"
	"errors"
	"reflect"
	"testing"

	cachekit "github.com/libcachekit/libcachekit/wrappers/go"
	"github.com/libcachekit/libcachekit/wrappers/go/internal/taggedjson"
	"github.com/libcachekit/libcachekit/wrappers/go/internal/vectors"
)

// Every key_vectors row through the typed key builder Wrap uses: the row's
// arguments as Go values passed to Key.
func TestKeyTypedKeyVectors(t *testing.T) {
	f := vectors.LoadInteropMode(t, "../..")
	vectors.Each(t, f.KeyVectors, func(t *testing.T, row vectors.KeyRow) {
		args, err := goValue(t, row.Args)
		if err != nil {
			t.Fatalf("typed args: %v", err)
		}
		key, err := cachekit.Key(row.Namespace, row.Operation, args.([]any)...)
		if err != nil || key != row.ExpectedKey {
			t.Fatalf("Key = %q, %v; want %q", key, err, row.ExpectedKey)
		}
	})
}

// Every error_vectors row is refused by Key (or, for an integer no Go type
// holds, already by the conversion to a Go value), with a named error.
func TestKeyTypedErrorVectors(t *testing.T) {
	f := vectors.LoadInteropMode(t, "../..")
	vectors.Each(t, f.ErrorVectors, func(t *testing.T, row vectors.ErrorRow) {
		ns, op, raw := row.Request()
		args, err := goValue(t, raw)
		var te *taggedjson.Error
		if errors.As(err, &te) {
			return // no Go value: nothing reaches Key
		}
		if err != nil {
			t.Fatal(err)
		}
		key, err := cachekit.Key(ns, op, args.([]any)...)
		if !errors.Is(err, cachekit.ErrUnsupported) && !errors.Is(err, cachekit.ErrInvalid) {
			t.Fatalf("Key = %q, %v; want ErrUnsupported or ErrInvalid", key, err)
		}
	})
}

// Every value_vectors row through EncodeValue (the canonical bytes) and back
// through DecodeValue into an interface (the same value, where Go has one).
func TestEncodeValueVectors(t *testing.T) {
	f := vectors.LoadInteropMode(t, "../..")
	vectors.Each(t, f.ValueVectors, func(t *testing.T, row vectors.ValueRow) {
		v, err := goValue(t, row.Value)
		if err != nil {
			t.Fatalf("typed value: %v", err)
		}
		data, err := cachekit.EncodeValue(v)
		if err != nil || hex.EncodeToString(data) != row.CanonicalHex {
			t.Fatalf("EncodeValue = %x, %v; want %s", data, err, row.CanonicalHex)
		}
		var back any
		if err := cachekit.DecodeValue(data, &back); err != nil {
			t.Fatalf("DecodeValue: %v", err)
		}
		again, err := cachekit.EncodeValue(back)
		if err != nil || hex.EncodeToString(again) != row.CanonicalHex {
			t.Fatalf("re-encoded %#v = %x, %v", back, again, err)
		}
	})
}

// The reader rows through DecodeValue into an interface: every accepted
// document decodes (to the row's value where the row gives one; a
// non-string map key becomes a map[any]any, an ext type a RawExt), and the
// rejected one is refused.
func TestDecodeValueReaderVectors(t *testing.T) {
	f := vectors.LoadInteropMode(t, "../..")
	vectors.Each(t, f.ReaderAccept, func(t *testing.T, row vectors.ReaderRow) {
		data, _ := hex.DecodeString(row.InputHex)
		var got any
		if err := cachekit.DecodeValue(data, &got); err != nil {
			t.Fatalf("DecodeValue: %v", err)
		}
		if row.Value == nil {
			return
		}
		want, err := goValue(t, row.Value)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(normal(got), normal(want)) {
			t.Fatalf("DecodeValue = %#v, want %#v", got, want)
		}
	})
	vectors.Each(t, f.ReaderReject, func(t *testing.T, row vectors.ReaderRow) {
		data, _ := hex.DecodeString(row.InputHex)
		want := row.WantError(t)
		var got any
		var ce *cachekit.Error
		if err := cachekit.DecodeValue(data, &got); !errors.Is(err, cachekit.ErrDecode) || !errors.As(err, &ce) || ce.Name != want {
			t.Fatalf("DecodeValue = %#v, %v; want ErrDecode %s (the row's error: %q)", got, err, want, row.Error)
		}
	})
}

// normal makes small non-negative integers comparable whichever of int64 and
// uint64 the decoder or the JSON conversion chose.
func normal(v any) any {
	switch x := v.(type) {
	case uint64:
		if x <= 1<<63-1 {
			return int64(x)
		}
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normal(e)
		}
		return out
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = normal(e)
		}
		return out
	}
	return v
}

// The reader_accept_vectors rows no tagged JSON can carry, by the Go values
// they decode to: reader_ext_type as a RawExt (into an interface and into a
// RawExt), reader_non_string_map_key as a map[any]any (into an interface)
// and into a map with integer keys.
func TestDecodeValueReaderRowsWithoutTaggedJSON(t *testing.T) {
	f := vectors.LoadInteropMode(t, "../..")
	rows := map[string]vectors.ReaderRow{}
	for _, r := range f.ReaderAccept {
		rows[r.Name] = r
	}
	input := func(name string) []byte {
		row, ok := rows[name]
		if !ok {
			t.Fatalf("reader_accept_vectors has no row %s", name)
		}
		data, _ := hex.DecodeString(row.InputHex)
		return data
	}
	t.Run("reader_ext_type", func(t *testing.T) {
		data := input("reader_ext_type")
		want := cachekit.RawExt{Type: 1, Data: []byte{0x2a}}
		var dyn any
		if err := cachekit.DecodeValue(data, &dyn); err != nil || !reflect.DeepEqual(dyn, want) {
			t.Fatalf("into any: %#v, %v; want %#v", dyn, err, want)
		}
		var ext cachekit.RawExt
		if err := cachekit.DecodeValue(data, &ext); err != nil || !reflect.DeepEqual(ext, want) {
			t.Fatalf("into RawExt: %#v, %v; want %#v", ext, err, want)
		}
	})
	t.Run("reader_non_string_map_key", func(t *testing.T) {
		data := input("reader_non_string_map_key")
		var dyn any
		if err := cachekit.DecodeValue(data, &dyn); err != nil || !reflect.DeepEqual(dyn, map[any]any{int64(1): int64(42)}) {
			t.Fatalf("into any: %#v, %v", dyn, err)
		}
		var typed map[int]int
		if err := cachekit.DecodeValue(data, &typed); err != nil || !reflect.DeepEqual(typed, map[int]int{1: 42}) {
			t.Fatalf("into map[int]int: %#v, %v", typed, err)
		}
	})
}
