package cachekit_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"testing"
	"time"

	cachekit "github.com/libcachekit/libcachekit/wrappers/go"
	"github.com/libcachekit/libcachekit/wrappers/go/internal/taggedjson"
	"github.com/libcachekit/libcachekit/wrappers/go/internal/vectors"
	"github.com/vmihailenco/msgpack/v5"
)

// goValue is a row's tagged JSON as the Go value a caller passes.
func goValue(t *testing.T, raw []byte) (any, error) {
	t.Helper()
	v, err := taggedjson.Decode(raw)
	if err != nil {
		t.Fatalf("row JSON: %v", err)
	}
	return taggedjson.ToGo(v)
}

// typedArgs is a row's tagged JSON as the Go values a caller passes,
// encoded as the MessagePack argument array.
func typedArgs(t *testing.T, raw []byte) ([]byte, error) {
	t.Helper()
	g, err := goValue(t, raw)
	if err != nil {
		return nil, err
	}
	return msgpack.Marshal(g)
}

// Every key_vectors row of interop-mode.json, by row name.
func TestInteropModeKeyVectors(t *testing.T) {
	f := vectors.LoadInteropMode(t, "../..")
	vectors.Each(t, f.KeyVectors, func(t *testing.T, row vectors.KeyRow) {
		args, err := typedArgs(t, row.Args)
		if err != nil {
			t.Fatalf("typed args: %v", err)
		}
		key, err := cachekit.InteropKey(row.Namespace, row.Operation, args)
		if err != nil || key != row.ExpectedKey {
			t.Fatalf("InteropKey = %q, %v; want %q", key, err, row.ExpectedKey)
		}
		canon, err := cachekit.CanonicalArgs(args)
		if err != nil || hex.EncodeToString(canon) != row.CanonicalArgsHex {
			t.Fatalf("CanonicalArgs = %x, %v; want %s", canon, err, row.CanonicalArgsHex)
		}
	})
}

// Every value_vectors row: the canonical bytes, and a round trip through a
// cache and the decoder back to the same value.
func TestInteropModeValueVectors(t *testing.T) {
	f := vectors.LoadInteropMode(t, "../..")
	ctx := context.Background()
	c, err := cachekit.New(ctx, cachekit.Options{BackendURL: "memory://", DisableL1: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	vectors.Each(t, f.ValueVectors, func(t *testing.T, row vectors.ValueRow) {
		packed, err := typedArgs(t, row.Value)
		if err != nil {
			t.Fatalf("typed value: %v", err)
		}
		canon, err := cachekit.CanonicalValue(packed)
		if err != nil || hex.EncodeToString(canon) != row.CanonicalHex {
			t.Fatalf("CanonicalValue = %x, %v; want %s", canon, err, row.CanonicalHex)
		}
		key := "vectors:value:" + hex.EncodeToString([]byte(row.Name))[:16]
		if err := c.Set(ctx, "vectors", key, canon, 0); err != nil {
			t.Fatalf("Set: %v", err)
		}
		got, err := c.Get(ctx, "vectors", key)
		if err != nil || !bytes.Equal(got, canon) {
			t.Fatalf("Get = %x, %v", got, err)
		}
		var back any
		dec := msgpack.NewDecoder(bytes.NewReader(got))
		dec.UseLooseInterfaceDecoding(true)
		if err := dec.Decode(&back); err != nil {
			t.Fatalf("decode: %v", err)
		}
		j, err := taggedjson.FromGo(back)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := taggedjson.Decode(row.Value)
		if !taggedjson.Equal(j, want) {
			t.Fatalf("decoded %v, want %v", j, want)
		}
	})
}

// Every error_vectors row is refused, with a specific error.
func TestInteropModeErrorVectors(t *testing.T) {
	f := vectors.LoadInteropMode(t, "../..")
	vectors.Each(t, f.ErrorVectors, func(t *testing.T, row vectors.ErrorRow) {
		ns, op, raw := row.Request()
		args, err := typedArgs(t, raw)
		if err == nil {
			_, err = cachekit.InteropKey(ns, op, args)
		}
		if err == nil {
			t.Fatal("accepted")
		}
		var ce *cachekit.Error
		var te *taggedjson.Error
		if !errors.As(err, &ce) && !errors.As(err, &te) {
			t.Fatalf("refused with %v (%T), want a named error", err, err)
		}
	})
}

// Every reader row (reader_accept_vectors, reader_reject_vectors): accepted
// documents pass the bounded check, rejected ones fail it with the row's error.
func TestInteropModeReaderVectors(t *testing.T) {
	f := vectors.LoadInteropMode(t, "../..")
	vectors.Each(t, f.ReaderAccept, func(t *testing.T, row vectors.ReaderRow) {
		data, _ := hex.DecodeString(row.InputHex)
		if err := cachekit.CheckValue(data); err != nil {
			t.Fatalf("CheckValue: %v", err)
		}
	})
	vectors.Each(t, f.ReaderReject, func(t *testing.T, row vectors.ReaderRow) {
		data, _ := hex.DecodeString(row.InputHex)
		want := row.WantError(t)
		var ce *cachekit.Error
		if err := cachekit.CheckValue(data); !errors.As(err, &ce) || ce.Name != want {
			t.Fatalf("CheckValue = %v; want %s (the row's error: %q)", err, want, row.Error)
		}
	})
}

// Every encryption_vectors row: the sealed bytes, put in a backend under
// the row's key, read through an encrypting cache of that tenant.
func TestInteropModeEncryptionVectors(t *testing.T) {
	f := vectors.LoadInteropMode(t, "../..")
	ctx := context.Background()
	vectors.Each(t, f.Encryption, func(t *testing.T, row vectors.EncryptionRow) {
		b, err := cachekit.OpenBackend(ctx, "memory://", cachekit.BackendOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		ct, _ := hex.DecodeString(row.CiphertextHex)
		if err := b.Set(ctx, []byte(row.CacheKey), ct, 0); err != nil {
			t.Fatal(err)
		}
		c, err := cachekit.New(ctx, cachekit.Options{Backend: b, DisableL1: true, Encryption: true,
			MasterKeyHex: row.MasterKeyHex, Tenant: row.TenantID, FailClosed: true})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		got, err := c.Get(ctx, "users", row.CacheKey)
		if err != nil || hex.EncodeToString(got) != row.PlaintextHex {
			t.Fatalf("Get = %x, %v; want %s", got, err, row.PlaintextHex)
		}
		kr, err := cachekit.NewKeyring(row.MasterKeyHex)
		if err != nil {
			t.Fatal(err)
		}
		defer kr.Close()
		aad, _ := hex.DecodeString(row.AADHex)
		pt, idx, err := kr.Decrypt(row.TenantID, nil, aad, ct)
		if err != nil || idx != 0 || hex.EncodeToString(pt) != row.PlaintextHex {
			t.Fatalf("Keyring.Decrypt = %x, %d, %v", pt, idx, err)
		}
	})
}

// wantTemporal is the Go value a temporal_sentinel_vectors row revives to.
func wantTemporal(t *testing.T, row vectors.TemporalRow) any {
	t.Helper()
	iso := row.RevivesTo.ISO
	switch row.RevivesTo.Type {
	case "datetime":
		v, err := time.Parse(time.RFC3339Nano, iso)
		if err != nil {
			t.Fatalf("revives_to %q: %v", iso, err)
		}
		return v
	case "date":
		v, err := time.Parse("2006-01-02", iso)
		if err != nil {
			t.Fatalf("revives_to %q: %v", iso, err)
		}
		return cachekit.Date{Year: v.Year(), Month: v.Month(), Day: v.Day()}
	case "time":
		v, err := time.Parse("15:04:05", iso)
		if err != nil {
			t.Fatalf("revives_to %q: %v", iso, err)
		}
		return cachekit.TimeOfDay{Hour: v.Hour(), Minute: v.Minute(), Second: v.Second(), Nanosecond: v.Nanosecond()}
	}
	t.Fatalf("revives_to type %q: not datetime, date or time", row.RevivesTo.Type)
	return nil
}

// sameTemporal compares a revived value with the wanted one (instants by
// time.Time.Equal: a location is not part of the value).
func sameTemporal(got, want any) bool {
	if w, ok := want.(time.Time); ok {
		g, ok := got.(time.Time)
		return ok && g.Equal(w)
	}
	return got == want
}

// Every wire-format.json temporal_sentinel_vectors row (subtests named
// temporal_sentinel_vectors/<name>) revives as a Go temporal value, not as
// the marker map: through DecodeValue into an interface (at the top, as a
// map value and an array element, in an `any` field and a map[string]any
// value of the caller's types), into the typed targets (time.Time and
// DateTime, Date, TimeOfDay), and through caches (interop and auto format,
// L1 and L2) read by Wrap0 into `any` and by GetOrLoad; EncodeValue writes
// the revived value back as the row's bytes.
func TestWireFormatTemporalSentinelVectors(t *testing.T) {
	f := vectors.LoadWireFormat(t, "../..")
	ctx := context.Background()
	t.Run("temporal_sentinel_vectors", func(t *testing.T) {
		vectors.Each(t, f.TemporalSentinels, func(t *testing.T, row vectors.TemporalRow) {
			payload, err := hex.DecodeString(row.PayloadHex)
			if err != nil {
				t.Fatal(err)
			}
			want := wantTemporal(t, row)
			var top any
			if err := cachekit.DecodeValue(payload, &top); err != nil || !sameTemporal(top, want) {
				t.Fatalf("DecodeValue into any = %#v, %v; want %#v", top, err, want)
			}
			var nested any
			doc := append(append([]byte{0x82, 0xa2, 'a', 't'}, payload...), append([]byte{0xa4, 'l', 'i', 's', 't', 0x91}, payload...)...)
			if err := cachekit.DecodeValue(doc, &nested); err != nil {
				t.Fatalf("nested: %v", err)
			}
			m, _ := nested.(map[string]any)
			list, _ := m["list"].([]any)
			if !sameTemporal(m["at"], want) || len(list) != 1 || !sameTemporal(list[0], want) {
				t.Fatalf("nested = %#v; want %#v as the map value and the list element", nested, want)
			}
			var field struct {
				At any `msgpack:"at"`
			}
			var values map[string]any
			if err := cachekit.DecodeValue(doc, &field); err != nil || !sameTemporal(field.At, want) {
				t.Fatalf("an any field = %#v, %v", field.At, err)
			}
			if err := cachekit.DecodeValue(doc, &values); err != nil || !sameTemporal(values["at"], want) {
				t.Fatalf("a map[string]any value = %#v, %v", values["at"], err)
			}
			typedTemporal(t, payload, want)
			again, err := cachekit.EncodeValue(top)
			if err != nil || !bytes.Equal(again, payload) {
				t.Fatalf("EncodeValue(%#v) = %x, %v; want the row's %x", top, again, err, payload)
			}
			for _, opts := range []cachekit.Options{
				{BackendURL: "memory://"},
				{BackendURL: "memory://", DisableL1: true},
				{BackendURL: "memory://", Format: cachekit.FormatAuto},
			} {
				temporalThroughCache(ctx, t, opts, payload, want)
			}
		})
	})
}

// typedTemporal decodes a sentinel into the typed target of its kind.
func typedTemporal(t *testing.T, payload []byte, want any) {
	t.Helper()
	var got any
	var err error
	switch want.(type) {
	case time.Time:
		var tt time.Time
		var dt cachekit.DateTime
		if err = cachekit.DecodeValue(payload, &tt); err == nil {
			err = cachekit.DecodeValue(payload, &dt)
			if !dt.Equal(tt) {
				t.Fatalf("DateTime %v, time.Time %v", dt, tt)
			}
		}
		got = tt
	case cachekit.Date:
		var d cachekit.Date
		err = cachekit.DecodeValue(payload, &d)
		got = d
	case cachekit.TimeOfDay:
		var tod cachekit.TimeOfDay
		err = cachekit.DecodeValue(payload, &tod)
		got = tod
	}
	if err != nil || !sameTemporal(got, want) {
		t.Fatalf("typed DecodeValue = %#v, %v; want %#v", got, err, want)
	}
}

// temporalThroughCache stores the sentinel under a wrapped function's key
// and reads it back through Wrap0 into any and through GetOrLoad: the
// stored value is served (nothing computes), revived.
func temporalThroughCache(ctx context.Context, t *testing.T, opts cachekit.Options, payload []byte, want any) {
	t.Helper()
	c, err := cachekit.New(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fn := cachekit.Fn{Namespace: "vectors", Operation: "temporal"}
	key, err := cachekit.Key(fn.Namespace, fn.Operation)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Set(ctx, fn.Namespace, key, payload, 0); err != nil {
		t.Fatalf("Set: %v", err)
	}
	computed := 0
	get := cachekit.Wrap0(c, fn, func(context.Context) (any, error) { computed++; return "computed", nil })
	for i := 0; i < 2; i++ {
		got, err := get(ctx)
		if err != nil || computed != 0 || !sameTemporal(got, want) {
			t.Fatalf("%+v: Wrap0 into any = %#v, %v (computed %d); want %#v", opts, got, err, computed, want)
		}
	}
	raw, err := c.GetOrLoad(ctx, fn.Namespace, key, func(context.Context) ([]byte, error) {
		computed++
		return cachekit.EncodeValue("computed")
	})
	var got any
	if err == nil {
		err = cachekit.DecodeValue(raw, &got)
	}
	if err != nil || computed != 0 || !sameTemporal(got, want) {
		t.Fatalf("%+v: GetOrLoad, DecodeValue into any = %#v, %v (computed %d); want %#v", opts, got, err, computed, want)
	}
}
