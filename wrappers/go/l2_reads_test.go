package cachekit

import (
	"context"
	"fmt"
	"testing"
)

// callCounts counts the server's GET and SET commands around one step.
func callCounts(t *testing.T, srv *redisServer, step func()) (gets, sets int) {
	t.Helper()
	g0, s0 := srv.Calls(t, "get"), srv.Calls(t, "set")
	step()
	return srv.Calls(t, "get") - g0, srv.Calls(t, "set") - s0
}

// A cold GetOrLoad miss reads L2 once (the C get_or_load's read; the fast
// path asks L1 alone), stores once, and the next call is an L1 hit.
func TestGetOrLoadColdMissReadsL2Once(t *testing.T) {
	srv := startRedis(t)
	c := openCache(t, Options{BackendURL: srv.URL()})
	load := func(context.Context) ([]byte, error) { return []byte{0x2a}, nil }
	gets, sets := callCounts(t, srv, func() {
		if v, err := c.GetOrLoad(context.Background(), "users", "cold", load); err != nil || string(v) != "\x2a" {
			t.Fatalf("GetOrLoad = %x, %v", v, err)
		}
	})
	if gets != 1 || sets != 1 {
		t.Fatalf("a cold GetOrLoad miss sent %d GET and %d SET; want 1 and 1", gets, sets)
	}
	gets, _ = callCounts(t, srv, func() {
		if _, err := c.GetOrLoad(context.Background(), "users", "cold", load); err != nil {
			t.Fatal(err)
		}
	})
	if gets != 0 {
		t.Fatalf("an L1 hit sent %d GET", gets)
	}
}

// A cold Wrap miss reads L2 once too: the hit lookup asks L1 alone and the
// miss path does not look the key up again before its get_or_load.
func TestWrapColdMissReadsL2Once(t *testing.T) {
	srv := startRedis(t)
	c := openCache(t, Options{BackendURL: srv.URL()})
	get := Wrap1(c, Fn{Namespace: "users", Operation: "get"}, func(_ context.Context, id int64) (int64, error) {
		return id * 2, nil
	})
	gets, sets := callCounts(t, srv, func() {
		if v, err := get(context.Background(), 21); err != nil || v != 42 {
			t.Fatalf("get(21) = %d, %v", v, err)
		}
	})
	if gets != 1 || sets != 1 {
		t.Fatalf("a cold Wrap miss sent %d GET and %d SET; want 1 and 1", gets, sets)
	}
}

// With L1 off a hit is one L2 read, through GetOrLoad and through Wrap.
func TestL2HitWithL1OffReadsL2Once(t *testing.T) {
	srv := startRedis(t)
	c := openCache(t, Options{BackendURL: srv.URL(), DisableL1: true})
	ctx := context.Background()
	load := func(context.Context) ([]byte, error) { return []byte{0x07}, nil }
	get := Wrap1(c, Fn{Namespace: "users", Operation: "get"}, func(_ context.Context, id int64) (int64, error) {
		return id, nil
	})
	if _, err := c.GetOrLoad(ctx, "users", "warm", load); err != nil {
		t.Fatal(err)
	}
	if _, err := get(ctx, 7); err != nil {
		t.Fatal(err)
	}
	gets, sets := callCounts(t, srv, func() {
		if v, err := c.GetOrLoad(ctx, "users", "warm", load); err != nil || string(v) != "\x07" {
			t.Fatalf("GetOrLoad = %x, %v", v, err)
		}
		if v, err := get(ctx, 7); err != nil || v != 7 {
			t.Fatalf("get(7) = %d, %v", v, err)
		}
	})
	if gets != 2 || sets != 0 {
		t.Fatalf("two L2 hits sent %d GET and %d SET; want 2 and 0", gets, sets)
	}
}

// Get still reads both tiers: a value another cache stored is found in L2
// (one GET), then served from this cache's L1 (none).
func TestGetReadsL2OnAnL1Miss(t *testing.T) {
	srv := startRedis(t)
	ctx := context.Background()
	writer := openCache(t, Options{BackendURL: srv.URL()})
	if err := writer.Set(ctx, "users", "k", []byte{0x01}, 0); err != nil {
		t.Fatal(err)
	}
	c := openCache(t, Options{BackendURL: srv.URL()})
	for i, want := range []int{1, 0} {
		gets, _ := callCounts(t, srv, func() {
			if v, err := c.Get(ctx, "users", "k"); err != nil || string(v) != "\x01" {
				t.Fatalf("Get = %x, %v", v, err)
			}
		})
		if gets != want {
			t.Fatalf("Get #%d sent %d GET; want %d", i+1, gets, want)
		}
	}
}

// With L1 off a Wrap hit is decoded straight from the library's buffer: the
// result must not alias it (strings and slices stay right after later reads
// reuse the buffer), and a stored value of another shape is still
// recomputed and replaced.
func TestWrapL2HitWithL1OffDecodesIntoOwnMemory(t *testing.T) {
	srv := startRedis(t)
	c := openCache(t, Options{BackendURL: srv.URL(), DisableL1: true})
	ctx := context.Background()
	type page struct {
		Names []string `msgpack:"names"`
		Note  string   `msgpack:"note"`
	}
	get := Wrap1(c, Fn{Namespace: "users", Operation: "page"}, func(_ context.Context, id int64) (page, error) {
		return page{Names: []string{fmt.Sprint("ann", id), fmt.Sprint("bob", id)}, Note: fmt.Sprint("page ", id)}, nil
	})
	for id := int64(1); id <= 2; id++ {
		if _, err := get(ctx, id); err != nil { // stores it
			t.Fatal(err)
		}
	}
	first, err := get(ctx, 1) // an L2 hit
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ { // later hits overwrite the pooled buffer
		if _, err := get(ctx, 2); err != nil {
			t.Fatal(err)
		}
	}
	if first.Note != "page 1" || len(first.Names) != 2 || first.Names[0] != "ann1" || first.Names[1] != "bob1" {
		t.Fatalf("an L2 hit's result changed after later reads: %#v", first)
	}

	fn := Fn{Namespace: "users", Operation: "shape"}
	key, err := Key(fn.Namespace, fn.Operation, int64(42))
	if err != nil {
		t.Fatal(err)
	}
	old, _ := EncodeValue("not a page")
	if err := c.Set(ctx, fn.Namespace, key, old, 0); err != nil {
		t.Fatal(err)
	}
	var cnt calls
	shaped := Wrap1(c, fn, func(_ context.Context, id int64) (page, error) {
		cnt.n.Add(1)
		return page{Note: "fresh"}, nil
	})
	for i := 0; i < 2; i++ {
		if got, err := shaped(ctx, 42); err != nil || got.Note != "fresh" {
			t.Fatalf("call %d: %#v, %v", i+1, got, err)
		}
	}
	if cnt.count() != 1 {
		t.Fatalf("%d computes; want 1 (the other shape recomputed once, then replaced)", cnt.count())
	}
}
