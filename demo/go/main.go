// Command get_user is the demo's Go side: get_user(id) behind cachekit.Wrap1
// (interop keys, namespace "demo", operation "get_user"), so the C, Python
// and Rust sides of demo/ compute the same keys and read the same entries.
//
//	get_user ID...   calls get_user(ID) for every ID, then once more each;
//	                 one line per call: "go ID SOURCE MILLISECONDS"
//
// The L2 comes from the environment (REDIS_URL, else CACHEKIT_FILE_CACHE_DIR).
package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	cachekit "github.com/libcachekit/libcachekit/wrappers/go"
)

// User is the stored value: {"id": id, "name": "user-<id>"}, as every side writes it.
type User struct {
	ID   int64  `msgpack:"id"`
	Name string `msgpack:"name"`
}

var loads int

func load(_ context.Context, id int64) (User, error) {
	loads++
	time.Sleep(50 * time.Millisecond) // the "database"
	return User{ID: id, Name: fmt.Sprintf("user-%d", id)}, nil
}

func main() {
	var ids []int64
	for _, a := range os.Args[1:] {
		id, err := strconv.ParseInt(a, 10, 64)
		if err != nil {
			fail(fmt.Errorf("not an id: %s", a))
		}
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		fail(fmt.Errorf("usage: get_user ID..."))
	}
	ctx := context.Background()
	// Interop format (the default) and the environment's L2, fail-closed so a
	// backend that is down shows instead of looking like misses.
	c, err := cachekit.New(ctx, cachekit.Options{FailClosed: true})
	if err != nil {
		fail(err)
	}
	defer c.Close()
	getUser := cachekit.Wrap1(c, cachekit.Fn{Namespace: "demo", Operation: "get_user", TTL: 300 * time.Second}, load)
	for round := 0; round < 2; round++ {
		for _, id := range ids {
			call(ctx, c, getUser, id)
		}
	}
}

func call(ctx context.Context, c *cachekit.Cache, getUser func(context.Context, int64) (User, error), id int64) {
	before, beforeLoads := stats(c), loads
	start := time.Now()
	user, err := getUser(ctx, id)
	took := float64(time.Since(start).Nanoseconds()) / 1e6
	if err != nil {
		fail(err)
	}
	if user != (User{ID: id, Name: fmt.Sprintf("user-%d", id)}) {
		fail(fmt.Errorf("unexpected value %+v", user))
	}
	after, source := stats(c), "none"
	switch {
	case loads > beforeLoads:
		source = "miss"
	case after.L2Hits > before.L2Hits:
		source = "l2"
	case after.L1Hits > before.L1Hits:
		source = "l1"
	}
	fmt.Printf("go %d %s %.4f\n", id, source, took)
}

func stats(c *cachekit.Cache) cachekit.Stats {
	s, err := c.Stats("demo")
	if err != nil {
		fail(err)
	}
	return s
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "get_user(go):", err)
	os.Exit(1)
}
