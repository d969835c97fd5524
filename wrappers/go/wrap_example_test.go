package cachekit_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	cachekit "github.com/libcachekit/libcachekit/wrappers/go"
)

type User struct {
	ID   int64  `msgpack:"id"`
	Name string `msgpack:"name"`
}

// A cached function: the first call computes, the second reads the entry
// that a Python or Rust service calling users/get_user(42) would read too.
func ExampleWrap1() {
	ctx := context.Background()
	c, err := cachekit.New(ctx, cachekit.Options{BackendURL: "none"})
	if err != nil {
		panic(err)
	}
	defer c.Close()

	computes := 0
	getUser := cachekit.Wrap1(c, cachekit.Fn{Namespace: "users", Operation: "get_user", TTL: time.Minute},
		func(ctx context.Context, id int64) (User, error) {
			computes++ // e.g. a database query
			return User{ID: id, Name: "alice"}, nil
		})

	u, _ := getUser(ctx, 42)
	u, _ = getUser(ctx, 42)
	fmt.Println(u.Name, computes)
	// Output: alice 1
}

// Errors are returned and never stored: the next call computes again.
func ExampleWrap2() {
	ctx := context.Background()
	c, _ := cachekit.New(ctx, cachekit.Options{BackendURL: "none"})
	defer c.Close()

	type Query struct {
		Region string   `msgpack:"region"`
		Tags   []string `msgpack:"tags"`
	}
	down := true
	search := cachekit.Wrap2(c, cachekit.Fn{Namespace: "search", Operation: "users"},
		func(ctx context.Context, q Query, page int) ([]string, error) {
			if down {
				return nil, errors.New("database unavailable")
			}
			return []string{q.Region + "-1", q.Region + "-2"}, nil
		})

	q := Query{Region: "eu", Tags: []string{"admin"}}
	_, err := search(ctx, q, 1)
	fmt.Println(err)
	down = false
	names, err := search(ctx, q, 1)
	fmt.Println(names, err)
	// Output:
	// database unavailable
	// [eu-1 eu-2] <nil>
}

// The key a call gets in every SDK: namespace, operation and the BLAKE2b-256
// of the canonical argument array ([42] here, as interop-mode.json's row
// single_int).
func ExampleKey() {
	key, err := cachekit.Key("users", "get_user", 42)
	fmt.Println(key, err)
	// Output: users:get_user:61598716255080080f6456eb065c2e51badfaa4320b0efe97469c29cffee8875 <nil>
}

// The stored form of a value: canonical MessagePack, struct fields as a map
// with sorted keys, and back into a Go type.
func ExampleEncodeValue() {
	type Person struct {
		Name string `msgpack:"name"`
		Age  int    `msgpack:"age"`
	}
	data, _ := cachekit.EncodeValue(Person{Name: "alice", Age: 30})
	fmt.Printf("%x\n", data)

	var back Person
	err := cachekit.DecodeValue(data, &back)
	fmt.Println(back, err)
	// Output:
	// 82a36167651ea46e616d65a5616c696365
	// {alice 30} <nil>
}
