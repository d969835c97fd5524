package cachekit

import (
	"context"
	"errors"
	"testing"
)

// msgStr is the MessagePack str of s (short strings), a valid cache value.
func msgStr(s string) []byte { return append([]byte{0xa0 | byte(len(s))}, s...) }

func newL1(t *testing.T, opts Options) *Cache {
	t.Helper()
	if opts.BackendURL == "" && opts.Backend == nil {
		opts.BackendURL = "none"
	}
	c, err := New(context.Background(), opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestRoundTripL1Only(t *testing.T) {
	ctx := context.Background()
	c := newL1(t, Options{})
	if _, err := c.Get(ctx, "users", "users:get:1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get of a missing key: %v, want ErrNotFound", err)
	}
	if err := c.Set(ctx, "users", "users:get:1", msgStr("ann"), 0); err != nil {
		t.Fatalf("Set: %v", err)
	}
	v, err := c.Get(ctx, "users", "users:get:1")
	if err != nil || string(v) != string(msgStr("ann")) {
		t.Fatalf("Get: %q, %v", v, err)
	}
	if err := c.Delete(ctx, "users", "users:get:1"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if _, err := c.Get(ctx, "users", "users:get:1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get after Delete: %v", err)
	}
}
