package cachekit_test

import (
	"errors"
	"testing"
	"time"

	cachekit "github.com/libcachekit/libcachekit/wrappers/go"
	"github.com/libcachekit/libcachekit/wrappers/go/internal/vectors"
)

// decodeTargets are what a caller may decode into: the dynamic path and the
// typed ones the MessagePack library fills (slices, maps, structs, the
// package's own types).
func decodeTargets() []any {
	return []any{new(any), new([]any), new([]int), new([]string), new([][]byte), new(map[string]any),
		new(map[int]int), new(struct {
			A any    `msgpack:"a"`
			B []int  `msgpack:"b"`
			C string `msgpack:""`
		}), new(time.Time), new(cachekit.DateTime), new(cachekit.Date), new(cachekit.TimeOfDay), new(cachekit.RawExt)}
}

// Every decoder of the package on hostile input (issue 25): seeded with
// every decode-bounds.json vector (reject_vectors and accept_vectors), it
// must never panic or abort, a reject vector must be refused by every
// target with ErrDecode, an accept vector must decode into an interface,
// and whatever the core's bounded check refuses DecodeValue refuses too.
// Run longer with: go test -run '^$' -fuzz FuzzDecodeValue -fuzztime 5m
func FuzzDecodeValue(f *testing.F) {
	bounds := vectors.LoadDecodeBounds(f, "../..")
	rejects := map[string]string{}
	accepts := map[string]string{}
	for _, row := range bounds.Reject {
		in := row.Input(f)
		rejects[string(in)] = row.Name
		f.Add(in)
	}
	for _, row := range bounds.Accept {
		in := row.Input(f)
		accepts[string(in)] = row.Name
		f.Add(in)
	}
	f.Add([]byte{0xdd, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		var dyn any
		dynErr := cachekit.DecodeValue(data, &dyn)
		if name, ok := rejects[string(data)]; ok {
			for _, out := range decodeTargets() {
				if err := cachekit.DecodeValue(data, out); !errors.Is(err, cachekit.ErrDecode) {
					t.Fatalf("decode-bounds.json reject_vectors/%s into %T: %v, want ErrDecode", name, out, err)
				}
			}
			return
		}
		if name, ok := accepts[string(data)]; ok && dynErr != nil {
			t.Fatalf("decode-bounds.json accept_vectors/%s: %v", name, dynErr)
		}
		if cachekit.CheckValue(data) != nil && !errors.Is(dynErr, cachekit.ErrDecode) {
			t.Fatalf("the core refuses %x, DecodeValue into any gave %#v, %v", data, dyn, dynErr)
		}
		for _, out := range decodeTargets() {
			_ = cachekit.DecodeValue(data, out) // any error will do; no panic, no abort
		}
	})
}

// Every decode-bounds.json vector by name: each reject_vectors document is
// refused by every decode target with ErrDecode and the status the core's
// check gives it; each accept_vectors document decodes into an interface.
func TestDecodeValueDecodeBoundsVectors(t *testing.T) {
	bounds := vectors.LoadDecodeBounds(t, "../..")
	t.Run("reject_vectors", func(t *testing.T) {
		vectors.Each(t, bounds.Reject, func(t *testing.T, row vectors.BoundsRow) {
			in := row.Input(t)
			var core *cachekit.Error
			if !errors.As(cachekit.CheckValue(in), &core) {
				t.Fatal("the core's check accepts it")
			}
			for _, out := range decodeTargets() {
				err := cachekit.DecodeValue(in, out)
				var e *cachekit.Error
				if !errors.Is(err, cachekit.ErrDecode) || !errors.As(err, &e) || e.Code != core.Code {
					t.Fatalf("into %T: %v; want ErrDecode %s as the core says", out, err, core.Name)
				}
			}
		})
	})
	t.Run("accept_vectors", func(t *testing.T) {
		vectors.Each(t, bounds.Accept, func(t *testing.T, row vectors.BoundsRow) {
			var v any
			if err := cachekit.DecodeValue(row.Input(t), &v); err != nil {
				t.Fatalf("DecodeValue: %v", err)
			}
		})
	})
}
