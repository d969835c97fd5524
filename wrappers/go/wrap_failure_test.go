package cachekit

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// With Redis frozen (SIGSTOP: the port stays open, nothing answers) and the
// default fail-open policy, wrapped functions still answer: every caller gets
// its own computed value and no error, within a bound set by the command
// timeout (generous here: the machine may be loaded).
func TestWrapUnderFailOpenWhileRedisIsStopped(t *testing.T) {
	srv := startRedis(t)
	c := openCache(t, Options{BackendURL: srv.URL(), CommandTimeout: 100 * time.Millisecond,
		ConnectTimeout: 200 * time.Millisecond})
	get := Wrap1(c, Fn{Namespace: "users", Operation: "get_user", TTL: time.Minute},
		func(_ context.Context, id int64) (user, error) { return user{ID: id, Name: fmt.Sprint("u", id)}, nil })
	ctx := context.Background()
	if _, err := get(ctx, 1); err != nil { // connected and stored while Redis answers
		t.Fatalf("with Redis up: %v", err)
	}
	srv.Pause()
	defer srv.Resume()

	callWhileStopped(t, 8, func(i int) error {
		id := int64(100 + i%4) // pairs of callers share a key: merged loads too
		for round := 0; round < 2; round++ {
			u, err := get(ctx, id)
			if err != nil || u.ID != id || u.Name != fmt.Sprint("u", id) {
				return fmt.Errorf("caller %d round %d: %#v, %v", id, round, u, err)
			}
		}
		return nil
	})
}

// GetOrLoad under the same outage: the loader's value, no error, in bounded
// time (the first caller's C call pays the command timeout; the other
// callers of its key wait for it in Go).
func TestGetOrLoadUnderFailOpenWhileRedisIsStopped(t *testing.T) {
	srv := startRedis(t)
	c := openCache(t, Options{BackendURL: srv.URL(), CommandTimeout: 100 * time.Millisecond,
		ConnectTimeout: 200 * time.Millisecond})
	ctx := context.Background()
	load := func(context.Context) ([]byte, error) { return msgStr("loaded"), nil }
	if _, err := c.GetOrLoad(ctx, "users", keyA, load); err != nil { // connected while Redis answers
		t.Fatalf("with Redis up: %v", err)
	}
	srv.Pause()
	defer srv.Resume()

	callWhileStopped(t, 8, func(i int) error {
		key := fmt.Sprintf("users:get_user:cold%d", i%4) // pairs share a key
		v, err := c.GetOrLoad(ctx, "users", key, load)
		if err != nil || string(v) != string(msgStr("loaded")) {
			return fmt.Errorf("caller %d: %q, %v", i, v, err)
		}
		return nil
	})
}

// callWhileStopped runs n callers at once (call(i) for i < n) while Redis is
// stopped: each error a caller returns fails the test, and so do callers that
// take longer than a bound far above the tests' 100 ms command timeout.
func callWhileStopped(t *testing.T, n int, call func(i int) error) {
	t.Helper()
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if err := call(i); err != nil {
				errs <- err
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if elapsed := time.Since(start); elapsed > 20*time.Second {
		t.Fatalf("callers took %v with Redis stopped; the command timeout is 100 ms", elapsed)
	}
}

// Close while goroutines call wrapped functions (hits, misses and loads in
// flight): every call returns a value or an error matching ErrClosed, never
// a crash, and after Close every call gets ErrClosed.
func TestWrapDuringCloseReturnsErrClosed(t *testing.T) {
	c, err := New(context.Background(), Options{BackendURL: "none"})
	if err != nil {
		t.Fatal(err)
	}
	get := Wrap2(c, Fn{Namespace: "users", Operation: "slow"}, func(_ context.Context, id int64, tags []string) (user, error) {
		time.Sleep(time.Duration(id%3) * time.Millisecond)
		return user{ID: id, Tags: tags}, nil
	})
	ctx := context.Background()
	callers := make([]func(stop <-chan struct{}) error, 8)
	for g := range callers {
		callers[g] = func(stop <-chan struct{}) error {
			for i := 0; ; i++ {
				u, err := get(ctx, int64(i%50), []string{"t"})
				switch {
				case err == nil && u.ID != int64(i%50):
					return fmt.Errorf("goroutine %d: wrong value %#v", g, u)
				case err != nil && !errors.Is(err, ErrClosed):
					return fmt.Errorf("goroutine %d: %v, want ErrClosed", g, err)
				}
				select {
				case <-stop:
					if _, err := get(ctx, 1, nil); !errors.Is(err, ErrClosed) {
						return fmt.Errorf("goroutine %d after Close: %v, want ErrClosed", g, err)
					}
					return nil
				default:
				}
			}
		}
	}
	closeWhileCalling(t, c, callers)
}

// Close while goroutines call every method of the cache (reads, writes,
// loads in flight, invalidation, stats, metrics) on L1 only and on Redis:
// each call succeeds, misses or gets ErrClosed, never another error nor a
// crash, and every call after Close gets ErrClosed.
func TestCloseWhileEveryMethodIsInUse(t *testing.T) {
	for _, backend := range []string{"none", "redis"} {
		t.Run(backend, func(t *testing.T) {
			url := backend
			if backend == "redis" {
				url = startRedis(t).URL()
			}
			c, err := New(context.Background(), Options{BackendURL: url})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			slowLoad := func(context.Context) ([]byte, error) {
				time.Sleep(time.Millisecond)
				return msgStr("loaded"), nil
			}
			calls := []func(i int) error{
				func(i int) error { return c.Set(ctx, "users", fmt.Sprint("users:k:", i%20), msgStr("v"), 0) },
				func(i int) error { _, err := c.Get(ctx, "users", fmt.Sprint("users:k:", i%20)); return err },
				func(i int) error { return c.Delete(ctx, "users", fmt.Sprint("users:k:", i%20)) },
				func(i int) error {
					_, err := c.GetOrLoad(ctx, "users", fmt.Sprint("users:load:", i%7), slowLoad)
					return err
				},
				func(i int) error { return c.InvalidateNamespace(ctx, "users") },
				func(i int) error { return c.Clear(ctx) },
				func(i int) error { _, err := c.Stats("users"); return err },
				func(i int) error { _, err := c.MetricsText(); return err },
			}
			var callers []func(stop <-chan struct{}) error
			for g, call := range calls {
				caller := func(stop <-chan struct{}) error {
					for i := 0; ; i++ {
						if err := call(i); err != nil && !errors.Is(err, ErrClosed) && !errors.Is(err, ErrNotFound) {
							return fmt.Errorf("call %d: %v", g, err)
						}
						select {
						case <-stop:
							if err := call(i); !errors.Is(err, ErrClosed) {
								return fmt.Errorf("call %d after Close: %v, want ErrClosed", g, err)
							}
							return nil
						default:
						}
					}
				}
				callers = append(callers, caller, caller) // two goroutines per method
			}
			closeWhileCalling(t, c, callers)
		})
	}
}

// closeWhileCalling runs each caller in a goroutine of its own, closes c once
// they are under way, then closes `stop` (a caller's cue to check a call after
// Close and return); every error a caller returns fails the test.
func closeWhileCalling(t *testing.T, c *Cache, callers []func(stop <-chan struct{}) error) {
	t.Helper()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	bad := make(chan error, len(callers))
	for _, caller := range callers {
		wg.Add(1)
		go func(caller func(<-chan struct{}) error) {
			defer wg.Done()
			if err := caller(stop); err != nil {
				bad <- err
			}
		}(caller)
	}
	time.Sleep(50 * time.Millisecond)
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	close(stop)
	wg.Wait()
	close(bad)
	for err := range bad {
		t.Error(err)
	}
}
