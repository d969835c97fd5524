package cachekit

import (
	"bytes"
	"context"
	"fmt"
	"testing"
)

// unrepresentable stores doc under a Wrap0 function's key and checks that a
// result type that cannot hold it makes a miss: the first call computes
// once and rewrites the entry, so the next call is a hit of the new value
// (never an error served until the entry expires).
func unrepresentable[R comparable](t *testing.T, name string, doc []byte, fresh R) {
	for _, opts := range []Options{{BackendURL: "memory://"}, {BackendURL: "memory://", DisableL1: true}} {
		t.Run(fmt.Sprintf("%s/l1=%v", name, !opts.DisableL1), func(t *testing.T) {
			c := openCache(t, opts)
			ctx := context.Background()
			fn := Fn{Namespace: "shapes", Operation: "op"}
			key, err := Key(fn.Namespace, fn.Operation)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Set(ctx, fn.Namespace, key, doc, 0); err != nil {
				t.Fatalf("Set %x: %v", doc, err)
			}
			var cnt calls
			get := Wrap0(c, fn, func(context.Context) (R, error) { cnt.n.Add(1); return fresh, nil })
			for i := 1; i <= 2; i++ {
				if got, err := get(ctx); err != nil || got != fresh || cnt.count() != 1 {
					t.Fatalf("L1 %v, call %d: %v, %v after %d computes; want %v after 1", !opts.DisableL1, i, got, err, cnt.count(), fresh)
				}
			}
			want, _ := EncodeValue(fresh)
			if stored, err := c.Get(ctx, fn.Namespace, key); err != nil || !bytes.Equal(stored, want) {
				t.Fatalf("stored %x, %v; want the recomputed %x", stored, err, want)
			}
		})
	}
}

// Documents every reader must accept (interop-mode.json's
// reader_non_string_map_key 81012a and reader_ext_type d4012a,
// wire-format.json's temporal_sentinel_date) and a sentinel whose value does
// not parse, read by result types that cannot hold them.
func TestWrapRecomputesValuesItsTypeCannotHold(t *testing.T) {
	unrepresentable(t, "non-string key into a string-keyed struct", []byte{0x81, 0x01, 0x2a}, struct {
		A int `msgpack:"a"`
	}{A: 1})
	unrepresentable(t, "ext type into int", []byte{0xd4, 0x01, 0x2a}, 7)
	date, _ := EncodeValue(Date{Year: 2025, Month: 11, Day: 14})
	unrepresentable(t, "date into string", date, "fresh")
	bad, _ := EncodeValue(map[string]any{"__date__": true, "value": "soon"})
	unrepresentable[any](t, "unparsable sentinel into any", bad, "fresh")
}
