package cachekit

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync/atomic"
	"testing"
	"time"
)

type user struct {
	ID    int64             `msgpack:"id"`
	Name  string            `msgpack:"name"`
	Tags  []string          `msgpack:"tags"`
	Prefs map[string]string `msgpack:"prefs"`
}

type query struct {
	Region string   `msgpack:"region"`
	Limit  int      `msgpack:"limit"`
	Fields []string `msgpack:"fields"`
}

// calls counts a function's computes.
type calls struct{ n atomic.Int64 }

func (c *calls) count() int { return int(c.n.Load()) }

// twice calls f twice with the same arguments and checks that the second
// call returns the first's result without a compute.
func twice[R any](t *testing.T, cnt *calls, f func() (R, error)) R {
	t.Helper()
	first, err := f()
	if err != nil {
		t.Fatalf("first call: %v", err)
	}
	before := cnt.count()
	second, err := f()
	if err != nil {
		t.Fatalf("second call: %v", err)
	}
	if cnt.count() != before {
		t.Fatalf("second call computed again (%d computes)", cnt.count())
	}
	if !reflect.DeepEqual(first, second) {
		t.Fatalf("cached result differs: %#v vs %#v", second, first)
	}
	return second
}

func TestWrap0CachesTheResult(t *testing.T) {
	c := openCache(t, Options{})
	var cnt calls
	f := Wrap0(c, Fn{Namespace: "users", Operation: "count"}, func(context.Context) (int64, error) {
		cnt.n.Add(1)
		return 7, nil
	})
	if got := twice(t, &cnt, func() (int64, error) { return f(context.Background()) }); got != 7 {
		t.Fatalf("got %d", got)
	}
}

func TestWrap1StructArgumentAndResult(t *testing.T) {
	c := openCache(t, Options{})
	var cnt calls
	get := Wrap1(c, Fn{Namespace: "users", Operation: "find", TTL: time.Minute},
		func(_ context.Context, q query) (user, error) {
			cnt.n.Add(1)
			return user{ID: int64(q.Limit), Name: q.Region, Tags: q.Fields, Prefs: map[string]string{"lang": "en"}}, nil
		})
	q := query{Region: "eu", Limit: 3, Fields: []string{"a", "b"}}
	got := twice(t, &cnt, func() (user, error) { return get(context.Background(), q) })
	want := user{ID: 3, Name: "eu", Tags: []string{"a", "b"}, Prefs: map[string]string{"lang": "en"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v, want %#v", got, want)
	}
	// Another argument value is another key.
	if _, err := get(context.Background(), query{Region: "us", Limit: 3}); err != nil || cnt.count() != 2 {
		t.Fatalf("other argument: err %v, %d computes", err, cnt.count())
	}
}

func TestWrap2SliceAndMapArguments(t *testing.T) {
	c := openCache(t, Options{})
	var cnt calls
	sum := Wrap2(c, Fn{Namespace: "stats", Operation: "sum"},
		func(_ context.Context, xs []int, weights map[string]float64) ([]float64, error) {
			cnt.n.Add(1)
			out := make([]float64, len(xs))
			for i, x := range xs {
				out[i] = float64(x) * weights["w"]
			}
			return out, nil
		})
	got := twice(t, &cnt, func() ([]float64, error) {
		return sum(context.Background(), []int{1, 2}, map[string]float64{"w": 1.5, "z": 0})
	})
	if !reflect.DeepEqual(got, []float64{1.5, 3}) {
		t.Fatalf("got %v", got)
	}
	// A map built in another order is the same argument (the key sorts map keys).
	m := map[string]float64{}
	m["z"], m["w"] = 0, 1.5
	if _, err := sum(context.Background(), []int{1, 2}, m); err != nil || cnt.count() != 1 {
		t.Fatalf("same map: err %v, %d computes", err, cnt.count())
	}
}

func TestWrap3PointerArguments(t *testing.T) {
	c := openCache(t, Options{})
	var cnt calls
	f := Wrap3(c, Fn{Namespace: "users", Operation: "page"},
		func(_ context.Context, region *string, page *int, q *query) (*user, error) {
			cnt.n.Add(1)
			u := &user{Name: "none"}
			if region != nil {
				u.Name = *region
			}
			if page != nil {
				u.ID = int64(*page)
			}
			return u, nil
		})
	region, page := "eu", 2
	got := twice(t, &cnt, func() (*user, error) { return f(context.Background(), &region, &page, nil) })
	if got == nil || got.Name != "eu" || got.ID != 2 {
		t.Fatalf("got %#v", got)
	}
	// A pointer is keyed by what it points to, not by its address.
	region2, page2 := "eu", 2
	if _, err := f(context.Background(), &region2, &page2, nil); err != nil || cnt.count() != 1 {
		t.Fatalf("same pointees: err %v, %d computes", err, cnt.count())
	}
	// nil is an argument of its own.
	if _, err := f(context.Background(), nil, &page, nil); err != nil || cnt.count() != 2 {
		t.Fatalf("nil pointer: err %v, %d computes", err, cnt.count())
	}
}

func TestWrapErrorsAreNotCached(t *testing.T) {
	c := openCache(t, Options{})
	var cnt calls
	boom := errors.New("boom")
	f := Wrap1(c, Fn{Namespace: "users", Operation: "flaky"}, func(_ context.Context, id int64) (string, error) {
		if cnt.n.Add(1) == 1 {
			return "", boom
		}
		return "ok", nil
	})
	if _, err := f(context.Background(), 1); !errors.Is(err, boom) {
		t.Fatalf("first call: got %v, want the function's error", err)
	}
	got, err := f(context.Background(), 1)
	if err != nil || got != "ok" || cnt.count() != 2 {
		t.Fatalf("second call: %q, %v after %d computes; the error must not be cached", got, err, cnt.count())
	}
}

func TestWrapValueOfAnotherShapeIsRecomputedAndReplaced(t *testing.T) {
	c := openCache(t, Options{})
	fn := Fn{Namespace: "users", Operation: "get_user"}
	key, err := Key(fn.Namespace, fn.Operation, int64(42))
	if err != nil {
		t.Fatal(err)
	}
	// A string where a struct is expected (e.g. an older version of the function).
	old, _ := EncodeValue("not a user")
	if err := c.Set(context.Background(), fn.Namespace, key, old, 0); err != nil {
		t.Fatal(err)
	}
	var cnt calls
	get := Wrap1(c, fn, func(_ context.Context, id int64) (user, error) {
		cnt.n.Add(1)
		return user{ID: id}, nil
	})
	got := twice(t, &cnt, func() (user, error) { return get(context.Background(), 42) })
	if got.ID != 42 || cnt.count() != 1 {
		t.Fatalf("got %#v after %d computes", got, cnt.count())
	}
	stored, err := c.Get(context.Background(), fn.Namespace, key)
	if err != nil {
		t.Fatal(err)
	}
	var u user
	if err := DecodeValue(stored, &u); err != nil || u.ID != 42 {
		t.Fatalf("stored value not replaced: %v %#v", err, u)
	}
}

func TestWrapResultThatCannotBeStoredIsReturned(t *testing.T) {
	c := openCache(t, Options{})
	var cnt calls
	f := Wrap0(c, Fn{Namespace: "users", Operation: "chan"}, func(context.Context) (chan int, error) {
		cnt.n.Add(1)
		return make(chan int), nil
	})
	for i := 1; i <= 2; i++ {
		ch, err := f(context.Background())
		if err != nil || ch == nil || cnt.count() != i {
			t.Fatalf("call %d: %v %v after %d computes", i, ch, err, cnt.count())
		}
	}
}

func TestWrapRefusesArgumentsTheKeyCannotCarry(t *testing.T) {
	c := openCache(t, Options{})
	f := Wrap1(c, Fn{Namespace: "users", Operation: "get"}, func(_ context.Context, m map[int]string) (int, error) {
		t.Fatal("computed with an argument the key refuses")
		return 0, nil
	})
	if _, err := f(context.Background(), map[int]string{1: "a"}); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("got %v, want ErrUnsupported", err)
	}
	bad := Wrap0(c, Fn{Namespace: "Users", Operation: "get"}, func(context.Context) (int, error) { return 1, nil })
	if _, err := bad(context.Background()); !errors.Is(err, ErrInvalid) {
		t.Fatalf("bad namespace: got %v, want ErrInvalid", err)
	}
}

// With SWR a stale hit answers at once with the stored value, and one
// refresh through the wrapped function lands in the background.
func TestWrapStaleHitRefreshesInTheBackground(t *testing.T) {
	ctx := context.Background()
	c := openCache(t, Options{SWR: true, SWRThresholdRatio: 0.05})
	var cnt calls
	get := Wrap1(c, Fn{Namespace: "users", Operation: "gen", TTL: 10 * time.Second},
		func(_ context.Context, id int64) (int64, error) { return id*100 + int64(cnt.n.Add(1)), nil })
	if v, err := get(ctx, 1); err != nil || v != 101 {
		t.Fatalf("first call: %d, %v", v, err)
	}
	time.Sleep(700 * time.Millisecond) // past 10 s x 0.05 (+-10 %): stale, far from expired
	if v, err := get(ctx, 1); err != nil || v != 101 {
		t.Fatalf("stale hit: %d, %v (want the stored value at once)", v, err)
	}
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if v, err := get(ctx, 1); err == nil && v == 102 {
			return
		}
	}
	t.Fatalf("the refresh never landed (%d computes)", cnt.count())
}

// A wrapped function may call another wrapped function of the same cache
// (the loads are separate keys).
func TestWrapNestedCalls(t *testing.T) {
	c := openCache(t, Options{})
	inner := Wrap1(c, Fn{Namespace: "users", Operation: "name"}, func(_ context.Context, id int64) (string, error) {
		return fmt.Sprint("user", id), nil
	})
	outer := Wrap1(c, Fn{Namespace: "users", Operation: "card"}, func(ctx context.Context, id int64) (string, error) {
		n, err := inner(ctx, id)
		return "card of " + n, err
	})
	for i := 0; i < 2; i++ {
		if got, err := outer(context.Background(), 7); err != nil || got != "card of user7" {
			t.Fatalf("call %d: %q, %v", i, got, err)
		}
	}
}

// A caller whose ctx ends while another caller computes the key stops
// waiting at once with the ctx's error; the compute goes on for the other.
func TestWrapCancelledWhileWaitingForAnotherCallersCompute(t *testing.T) {
	c := openCache(t, Options{})
	release := make(chan struct{})
	started := make(chan struct{})
	get := Wrap1(c, Fn{Namespace: "users", Operation: "slow"}, func(_ context.Context, id int64) (int64, error) {
		close(started)
		<-release
		return id, nil
	})
	first := make(chan error, 1)
	go func() {
		_, err := get(context.Background(), 5)
		first <- err
	}()
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := get(ctx, 5); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("waiting caller: %v, want context.DeadlineExceeded", err)
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatalf("computing caller: %v", err)
	}
	if v, err := get(context.Background(), 5); err != nil || v != 5 {
		t.Fatalf("after the compute: %d, %v", v, err)
	}
}
