// A user's test of the module fetched through the proxy: the L1, and a
// Redis round trip against a redis-server of its own on a free loopback port.
package main

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"testing"
	"time"

	cachekit "github.com/libcachekit/libcachekit/wrappers/go"
)

func TestL1(t *testing.T) {
	ctx := context.Background()
	c, err := cachekit.New(ctx, cachekit.Options{BackendURL: "none"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	roundTrip(t, c, "l1")
}

func TestRedis(t *testing.T) {
	server, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server is not installed")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(server, "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--dir", t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if conn, err := net.Dial("tcp", addr); err == nil {
			conn.Close()
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("redis-server on %s: %v", addr, err)
		}
	}
	ctx := context.Background()
	url := "redis://" + addr + "/0"
	// DisableL1: the read must come back from Redis.
	c, err := cachekit.New(ctx, cachekit.Options{BackendURL: url, DisableL1: true, FailClosed: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	roundTrip(t, c, "redis")
	// A second cache (another process would do the same) reads what the first stored.
	other, err := cachekit.New(ctx, cachekit.Options{BackendURL: url, DisableL1: true, FailClosed: true})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	got, err := other.Get(ctx, "consumer", "redis")
	var s string
	if err == nil {
		err = cachekit.DecodeValue(got, &s)
	}
	if err != nil || s != "value redis" {
		t.Fatalf("the second cache read %q, %v", s, err)
	}
}

func roundTrip(t *testing.T, c *cachekit.Cache, key string) {
	t.Helper()
	ctx := context.Background()
	value, err := cachekit.EncodeValue("value " + key)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Set(ctx, "consumer", key, value, time.Minute); err != nil {
		t.Fatal(err)
	}
	got, err := c.Get(ctx, "consumer", key)
	if err != nil {
		t.Fatal(err)
	}
	var s string
	if err := cachekit.DecodeValue(got, &s); err != nil || s != "value "+key {
		t.Fatalf("read back %q, %v", s, err)
	}
}

