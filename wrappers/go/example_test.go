package cachekit_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	cachekit "github.com/libcachekit/libcachekit/wrappers/go"
	"github.com/vmihailenco/msgpack/v5"
)

// A cache with L1 only ("none"); BackendURL "redis://127.0.0.1:6379/0" or
// "file:///var/cache/app" adds the shared L2.
func ExampleNew() {
	ctx := context.Background()
	c, err := cachekit.New(ctx, cachekit.Options{BackendURL: "none", DefaultTTL: 10 * time.Minute})
	if err != nil {
		panic(err)
	}
	defer c.Close()

	// Keys are interop keys: namespace, operation, hash of the arguments.
	args, _ := msgpack.Marshal([]any{42})
	key, _ := cachekit.InteropKey("users", "get_user", args)
	value, _ := msgpack.Marshal(map[string]any{"name": "alice", "age": 30})
	if err := c.Set(ctx, "users", key, value, 0); err != nil { // 0: DefaultTTL
		panic(err)
	}
	got, _ := c.Get(ctx, "users", key)
	var user map[string]any
	msgpack.Unmarshal(got, &user)
	fmt.Println(key)
	fmt.Println(user["name"])
	// Output:
	// users:get_user:61598716255080080f6456eb065c2e51badfaa4320b0efe97469c29cffee8875
	// alice
}

// GetOrLoad runs the loader once per key however many goroutines ask.
func ExampleCache_GetOrLoad() {
	ctx := context.Background()
	c, _ := cachekit.New(ctx, cachekit.Options{BackendURL: "none"})
	defer c.Close()

	load := func(ctx context.Context) ([]byte, error) {
		fmt.Println("loading")
		return msgpack.Marshal("alice")
	}
	for i := 0; i < 2; i++ {
		v, err := c.GetOrLoad(ctx, "users", "users:get_user:1", load, cachekit.WithTTL(time.Minute))
		if err != nil {
			panic(err)
		}
		var name string
		msgpack.Unmarshal(v, &name)
		fmt.Println(name)
	}
	// A loader's error comes back as it is, and nothing is cached.
	_, err := c.GetOrLoad(ctx, "users", "users:get_user:2", func(context.Context) ([]byte, error) {
		return nil, errors.New("db down")
	})
	fmt.Println(err)
	// Output:
	// loading
	// alice
	// alice
	// db down
}

// Errors carry the C status's name and the message of the same call; the
// sentinels group them for errors.Is.
func ExampleError() {
	ctx := context.Background()
	c, _ := cachekit.New(ctx, cachekit.Options{BackendURL: "none", MaxValueBytes: 16})
	defer c.Close()

	_, err := c.Get(ctx, "users", "users:get_user:404")
	fmt.Println(errors.Is(err, cachekit.ErrNotFound))

	big, _ := msgpack.Marshal("a value longer than sixteen bytes")
	err = c.Set(ctx, "users", "users:get_user:1", big, 0)
	var e *cachekit.Error
	if errors.As(err, &e) {
		fmt.Println(errors.Is(err, cachekit.ErrTooBig), e.Name)
		fmt.Println(e.Message)
	}
	// Output:
	// true
	// true InputTooLarge
	// value of 35 bytes is over max_value_bytes (16): not stored
}

// Close waits for calls in flight, is idempotent, and later calls get
// ErrClosed (never a crash).
func ExampleCache_Close() {
	ctx := context.Background()
	c, _ := cachekit.New(ctx, cachekit.Options{BackendURL: "none"})
	fmt.Println(c.Close(), c.Close())
	_, err := c.Get(ctx, "users", "users:get_user:1")
	fmt.Println(errors.Is(err, cachekit.ErrClosed))
	// Output:
	// <nil> <nil>
	// true
}
