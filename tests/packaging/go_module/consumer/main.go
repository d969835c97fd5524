// A user's program: the cache on L1 only, one value set and read back.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	cachekit "github.com/libcachekit/libcachekit/wrappers/go"
)

func main() {
	ctx := context.Background()
	c, err := cachekit.New(ctx, cachekit.Options{BackendURL: "none"})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer c.Close()
	value, _ := cachekit.EncodeValue("hello")
	if err := c.Set(ctx, "consumer", "k", value, time.Minute); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	got, err := c.Get(ctx, "consumer", "k")
	var s string
	if err == nil {
		err = cachekit.DecodeValue(got, &s)
	}
	if err != nil || s != "hello" {
		fmt.Fprintln(os.Stderr, "read back:", s, err)
		os.Exit(1)
	}
	fmt.Println("consumer: L1 round trip ok")
}
