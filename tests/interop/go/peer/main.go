// Command peer is the Go side of the Go <-> Python interop test
// (tests/interop/go): it writes or reads values through cachekit.Wrap1/Wrap2
// on a shared backend and prints what it read as JSON lines.
//
//	peer write|read BACKEND_URL NAMESPACE [MASTER_KEY_HEX TENANT]
//
// write computes and stores NAMESPACE/go_profile(1), go_profile(2) and
// go_search("eu", {"b": 2, "a": 1}); read reads NAMESPACE/py_profile(1),
// (2) and py_search("eu", {"b": 2, "a": 1}), which the Python side
// stored, with functions that fail when called: a read that had to compute is
// an error line.
package main

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	cachekit "github.com/libcachekit/libcachekit/wrappers/go"
)

// Profile is the value both languages store: struct fields as a map.
type Profile struct {
	ID    int64             `msgpack:"id"`
	Name  string            `msgpack:"name"`
	Tags  []string          `msgpack:"tags"`
	Score float64           `msgpack:"score"`
	Raw   []byte            `msgpack:"raw"`
	Prefs map[string]string `msgpack:"prefs"`
	At    cachekit.DateTime `msgpack:"at"`
}

// profile is the value of profile(id) in both languages (see test_go_python.py).
func profile(id int64) Profile {
	return Profile{ID: id, Name: fmt.Sprint("user", id), Tags: []string{"a", "b"}, Score: float64(id) + 0.5,
		Raw: []byte{byte(id), 0xff}, Prefs: map[string]string{"lang": "en"},
		At: cachekit.DateTime{Time: time.Date(2024, 1, int(id), 12, 30, 45, 123456000, time.UTC)}}
}

var errMustNotCompute = errors.New("computed: the entry written by the other language was not read")

func main() {
	if len(os.Args) != 4 && len(os.Args) != 6 {
		fmt.Fprintln(os.Stderr, "usage: peer write|read BACKEND_URL NAMESPACE [MASTER_KEY_HEX TENANT]")
		os.Exit(2)
	}
	mode, url, ns := os.Args[1], os.Args[2], os.Args[3]
	opts := cachekit.Options{BackendURL: url, FailClosed: true}
	if len(os.Args) == 6 {
		opts.Encryption, opts.MasterKeyHex, opts.Tenant = true, os.Args[4], os.Args[5]
	}
	ctx := context.Background()
	c, err := cachekit.New(ctx, opts)
	if err != nil {
		fail(err)
	}
	defer c.Close()

	prefix := map[string]string{"write": "go", "read": "py"}[mode]
	if prefix == "" {
		fail(fmt.Errorf("unknown mode %q", mode))
	}
	getProfile := cachekit.Wrap1(c, cachekit.Fn{Namespace: ns, Operation: prefix + "_profile", TTL: 10 * time.Minute},
		func(_ context.Context, id int64) (Profile, error) {
			if mode == "read" {
				return Profile{}, errMustNotCompute
			}
			return profile(id), nil
		})
	search := cachekit.Wrap2(c, cachekit.Fn{Namespace: ns, Operation: prefix + "_search", TTL: 10 * time.Minute},
		func(_ context.Context, region string, weights map[string]int64) ([]string, error) {
			if mode == "read" {
				return nil, errMustNotCompute
			}
			return []string{region, fmt.Sprint(weights["a"] + weights["b"])}, nil
		})

	out := json.NewEncoder(os.Stdout)
	for _, id := range []int64{1, 2} {
		p, err := getProfile(ctx, id)
		if err != nil {
			fail(err)
		}
		out.Encode(map[string]any{"id": p.ID, "name": p.Name, "tags": p.Tags, "score": p.Score,
			"raw": hex.EncodeToString(p.Raw), "prefs": p.Prefs, "at": p.At.UTC().Format("2006-01-02T15:04:05.000000Z07:00")})
	}
	names, err := search(ctx, "eu", map[string]int64{"b": 2, "a": 1})
	if err != nil {
		fail(err)
	}
	out.Encode(map[string]any{"search": names})
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "peer:", err)
	os.Exit(1)
}
