package cachekit_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"testing"

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
