package cachekit

import (
	"context"
	"errors"
	"testing"
)

func openBackend(t *testing.T, url string) *Backend {
	t.Helper()
	b, err := OpenBackend(context.Background(), url, BackendOptions{})
	if err != nil {
		t.Fatalf("OpenBackend(%s): %v", url, err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func checkPackedBatches(t *testing.T, b *Backend) {
	ctx := context.Background()
	keys := [][]byte{[]byte("k0"), []byte("k1"), []byte("k2"), []byte("k3")}
	values := [][]byte{[]byte("zero"), {}, []byte("two"), []byte("three\x00with a NUL")}
	if err := b.SetMany(ctx, keys[:3], values[:3], 0); err != nil {
		t.Fatalf("SetMany: %v", err)
	}
	if err := b.Set(ctx, keys[3], values[3], NoExpiry); err != nil {
		t.Fatalf("Set: %v", err)
	}
	got, err := b.GetMany(ctx, append(keys, []byte("missing")))
	if err != nil {
		t.Fatalf("GetMany: %v", err)
	}
	for i, want := range values {
		if got[i] == nil || string(got[i]) != string(want) {
			t.Errorf("GetMany[%d] = %q, want %q", i, got[i], want)
		}
	}
	if got[4] != nil {
		t.Errorf("GetMany of a missing key = %q, want nil", got[4])
	}
	if err := b.Delete(ctx, keys[0]); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if _, err := b.Get(ctx, keys[0]); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get after Delete: %v", err)
	}
	if err := b.SetMany(ctx, keys, values[:1], 0); !errors.Is(err, ErrInvalid) {
		t.Fatalf("SetMany with fewer values than keys: %v", err)
	}
}

func TestPackedBatchesMemory(t *testing.T) { checkPackedBatches(t, openBackend(t, "memory://")) }

func TestPackedBatchesRedis(t *testing.T) {
	checkPackedBatches(t, openBackend(t, startRedis(t).URL()))
}

func TestCacheBorrowsABackend(t *testing.T) {
	ctx := context.Background()
	b := openBackend(t, "memory://")
	if b.Kind() != "memory" {
		t.Fatalf("Kind = %q", b.Kind())
	}
	c, err := New(ctx, Options{Backend: b})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Set(ctx, "n", keyA, msgStr("x"), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Get(ctx, []byte(keyA)); err != nil {
		t.Fatalf("the value did not reach the borrowed backend: %v", err)
	}
	if err := b.Close(); !errors.Is(err, ErrBusy) {
		t.Fatalf("Close of a borrowed backend: %v, want ErrBusy", err)
	}
	c.Close()
	if err := b.Close(); err != nil {
		t.Fatalf("Close once the cache closed: %v", err)
	}
	if _, err := b.Get(ctx, []byte("k")); !errors.Is(err, ErrClosed) {
		t.Fatalf("Get after Close: %v", err)
	}
	if _, err := New(ctx, Options{Backend: b}); !errors.Is(err, ErrClosed) {
		t.Fatalf("New on a closed backend: %v", err)
	}
}
