package cachekit

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func constLoader(v []byte, calls *atomic.Int64) LoadFunc {
	return func(context.Context) ([]byte, error) {
		calls.Add(1)
		return v, nil
	}
}

func TestGetOrLoadLoadsOnceThenHits(t *testing.T) {
	ctx := context.Background()
	c := openCache(t, Options{})
	var calls atomic.Int64
	for i := 0; i < 3; i++ {
		v, err := c.GetOrLoad(ctx, "users", keyA, constLoader(msgStr("ann"), &calls), WithTTL(time.Minute))
		if err != nil || string(v) != string(msgStr("ann")) {
			t.Fatalf("GetOrLoad #%d: %q, %v", i, v, err)
		}
	}
	if calls.Load() != 1 {
		t.Fatalf("loader ran %d times, want 1", calls.Load())
	}
	if v, err := c.Get(ctx, "users", keyA); err != nil || string(v) != string(msgStr("ann")) {
		t.Fatalf("Get after the load: %q, %v", v, err)
	}
}

func TestLoaderErrorIsReturnedAsItIsAndNeverCached(t *testing.T) {
	ctx := context.Background()
	c := openCache(t, Options{})
	mine := errors.New("database down")
	_, err := c.GetOrLoad(ctx, "users", keyA, func(context.Context) ([]byte, error) { return nil, mine })
	if err != mine {
		t.Fatalf("GetOrLoad: %v (%T), want the loader's own error", err, err)
	}
	if _, err := c.Get(ctx, "users", keyA); !errors.Is(err, ErrNotFound) {
		t.Fatalf("the failure was cached: %v", err)
	}
	var calls atomic.Int64
	if v, err := c.GetOrLoad(ctx, "users", keyA, constLoader(msgStr("ok"), &calls)); err != nil || calls.Load() != 1 ||
		string(v) != string(msgStr("ok")) {
		t.Fatalf("the next GetOrLoad: %q, %v, %d loads", v, err, calls.Load())
	}
}

func TestLoaderValueThatIsNotMessagePackIsRefused(t *testing.T) {
	c := openCache(t, Options{})
	_, err := c.GetOrLoad(context.Background(), "users", keyA, func(context.Context) ([]byte, error) {
		return []byte{0xc1}, nil // a reserved byte: no MessagePack document
	})
	var e *Error
	if !errors.As(err, &e) || e.Message == "" {
		t.Fatalf("GetOrLoad of a bad value: %v, want an *Error with a message", err)
	}
}

func TestPanickingLoaderIsRepanickedInTheCaller(t *testing.T) {
	c := openCache(t, Options{})
	got := func() (r any) {
		defer func() { r = recover() }()
		c.GetOrLoad(context.Background(), "users", keyA, func(context.Context) ([]byte, error) { panic("boom") })
		return nil
	}()
	p, ok := got.(*PanicError)
	if !ok || p.Value != "boom" || !strings.Contains(string(p.Stack), "load_test.go") {
		t.Fatalf("recovered %#v, want a *PanicError carrying \"boom\" and the loader's stack", got)
	}
	// The key is not wedged and nothing was cached.
	var calls atomic.Int64
	if v, err := c.GetOrLoad(context.Background(), "users", keyA, constLoader(msgStr("ok"), &calls)); err != nil ||
		string(v) != string(msgStr("ok")) {
		t.Fatalf("GetOrLoad after the panic: %q, %v", v, err)
	}
}

func TestCancelledCallerStopsWaitingWhileTheLoadGoesOn(t *testing.T) {
	c := openCache(t, Options{})
	release := make(chan struct{})
	started := make(chan struct{})
	var loadCtxErr atomic.Value
	load := func(ctx context.Context) ([]byte, error) {
		close(started)
		<-release
		loadCtxErr.Store(ctx.Err() == nil)
		return msgStr("late"), nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	other := make(chan []byte)
	go func() { // a second caller of the same key, who keeps waiting
		<-started
		v, _ := c.GetOrLoad(context.Background(), "users", keyA, load)
		other <- v
	}()
	errc := make(chan error)
	go func() {
		_, err := c.GetOrLoad(ctx, "users", keyA, load)
		errc <- err
	}()
	<-started
	waitForWaiters(t, c, flightKey{ns: "users", key: keyA}, 2)
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("the cancelled caller got %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the cancelled caller was still waiting 5 s after its ctx ended")
	}
	close(release)
	if v := <-other; string(v) != string(msgStr("late")) {
		t.Fatalf("the other caller got %q", v)
	}
	if ok, _ := loadCtxErr.Load().(bool); !ok {
		t.Fatal("the load's ctx was cancelled while a caller still waited")
	}
}

// waitForWaiters returns once n callers wait on the key's flight.
func waitForWaiters(t *testing.T, c *Cache, fk flightKey, n int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		c.flights.mu.Lock()
		f := c.flights.m[fk]
		got := 0
		if f != nil {
			got = f.waiters
		}
		c.flights.mu.Unlock()
		if got >= n {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("%d callers never joined the flight", n)
}

func TestDeadlineExpiresWhileWaiting(t *testing.T) {
	c := openCache(t, Options{})
	release := make(chan struct{})
	defer close(release)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := c.GetOrLoad(ctx, "users", keyA, func(context.Context) ([]byte, error) {
		<-release
		return msgStr("x"), nil
	})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("GetOrLoad: %v, want context.DeadlineExceeded", err)
	}
}

func TestLoaderAskingForItsOwnKeyGetsErrDeadlock(t *testing.T) {
	c := openCache(t, Options{})
	var inner error
	_, err := c.GetOrLoad(context.Background(), "users", keyA, func(ctx context.Context) ([]byte, error) {
		_, inner = c.GetOrLoad(ctx, "users", keyA, func(context.Context) ([]byte, error) { return msgStr("x"), nil })
		v, err := c.GetOrLoad(ctx, "users", keyB, func(context.Context) ([]byte, error) { return msgStr("b"), nil })
		if err != nil {
			return nil, err
		}
		return v, nil
	})
	if err != nil {
		t.Fatalf("outer GetOrLoad: %v", err)
	}
	if !errors.Is(inner, ErrDeadlock) {
		t.Fatalf("inner GetOrLoad of its own key: %v, want ErrDeadlock", inner)
	}
}

// osThreads is this process's OS thread count (Linux: /proc/self/status).
func osThreads(t *testing.T) int {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "Threads:") {
			n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "Threads:")))
			return n
		}
	}
	t.Skip("no Threads line in /proc/self/status")
	return 0
}

func TestStampedeOf10000GoroutinesLoadsOnceOnFewThreads(t *testing.T) {
	for _, backend := range []string{"none", "file", "redis"} {
		t.Run(backend, func(t *testing.T) {
			url := backend
			switch backend {
			case "file":
				url = "file://" + t.TempDir()
			case "redis": // slow L2 reads: the case where goroutines would pile up in C
				url = startRedis(t).URL()
			}
			c := openCache(t, Options{BackendURL: url})
			const callers = 10000
			var calls atomic.Int64
			release := make(chan struct{})
			load := func(context.Context) ([]byte, error) {
				calls.Add(1)
				<-release
				return msgStr("hot"), nil
			}
			var wg sync.WaitGroup
			var bad atomic.Int64
			for i := 0; i < callers; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					v, err := c.GetOrLoad(context.Background(), "hot", keyA, load)
					if err != nil || string(v) != string(msgStr("hot")) {
						bad.Add(1)
					}
				}()
			}
			// Every caller is parked, waiting for the one load, when the
			// threads are counted.
			waitForWaiters(t, c, flightKey{ns: "hot", key: keyA}, callers)
			threads := osThreads(t)
			close(release)
			wg.Wait()
			if calls.Load() != 1 {
				t.Errorf("%d computes for one cold key, want 1", calls.Load())
			}
			if bad.Load() != 0 {
				t.Errorf("%d callers got an error or a wrong value", bad.Load())
			}
			if threads >= 64 {
				t.Errorf("%d OS threads while %d goroutines waited, want < 64", threads, callers)
			}
			t.Logf("%d goroutines, %d compute, %d OS threads while they waited", callers, calls.Load(), threads)
		})
	}
}

func TestStaleWhileRevalidateRefreshesInTheBackground(t *testing.T) {
	ctx := context.Background()
	c := openCache(t, Options{SWR: true, SWRThresholdRatio: 0.05})
	var calls atomic.Int64
	gen := func(ctx context.Context) ([]byte, error) {
		n := calls.Add(1)
		return msgStr("v" + strconv.FormatInt(n, 10)), nil
	}
	if v, err := c.GetOrLoad(ctx, "users", keyA, gen, WithTTL(10*time.Second)); err != nil || string(v) != string(msgStr("v1")) {
		t.Fatalf("first load: %q, %v", v, err)
	}
	time.Sleep(700 * time.Millisecond) // past 10 s x 0.05 (+-10 %): stale, far from expired
	if v, err := c.GetOrLoad(ctx, "users", keyA, gen, WithTTL(10*time.Second)); err != nil || string(v) != string(msgStr("v1")) {
		t.Fatalf("stale hit: %q, %v (want the stale value at once)", v, err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if v, err := c.Get(ctx, "users", keyA); err == nil && string(v) == string(msgStr("v2")) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("the refresh never landed (%d loads)", calls.Load())
}

// The same stampede through a wrapped function: 10,000 goroutines call it
// with one cold argument; each asks L1 in one short C call, then all but one
// wait in Go for the one compute (Wrap joins GetOrLoad's single flight).
func TestWrapStampedeOf10000GoroutinesComputesOnceOnFewThreads(t *testing.T) {
	for _, backend := range []string{"none", "redis"} {
		t.Run(backend, func(t *testing.T) {
			url := backend
			if backend == "redis" {
				url = startRedis(t).URL()
			}
			c := openCache(t, Options{BackendURL: url})
			const callers = 10000
			var calls atomic.Int64
			release := make(chan struct{})
			f := Fn{Namespace: "hot", Operation: "get_user", TTL: time.Minute}
			get := Wrap1(c, f, func(_ context.Context, id int64) (user, error) {
				calls.Add(1)
				<-release
				return user{ID: id, Name: "hot"}, nil
			})
			var wg sync.WaitGroup
			var bad atomic.Int64
			for i := 0; i < callers; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if u, err := get(context.Background(), 7); err != nil || u.ID != 7 || u.Name != "hot" {
						bad.Add(1)
					}
				}()
			}
			key, err := Key(f.Namespace, f.Operation, int64(7))
			if err != nil {
				t.Fatal(err)
			}
			waitForWaiters(t, c, flightKey{ns: f.Namespace, key: key}, callers)
			threads := osThreads(t)
			close(release)
			wg.Wait()
			if calls.Load() != 1 || bad.Load() != 0 {
				t.Errorf("%d computes (want 1), %d callers with an error or a wrong value", calls.Load(), bad.Load())
			}
			if threads >= 64 {
				t.Errorf("%d OS threads while %d goroutines waited, want < 64", threads, callers)
			}
			t.Logf("%d goroutines, %d compute, %d OS threads while they waited", callers, calls.Load(), threads)
		})
	}
}
