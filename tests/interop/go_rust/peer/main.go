// Command peer is the Go side of the Go <-> Rust interop test
// (tests/interop/go_rust): the functions of cachekit-rs's side
// (tests/interop/rust/src/py_side.rs) through cachekit.Wrap1 and Wrap3.
//
//	peer '<json job>'
//
// The job is the one py_side.rs takes: backend.redis or backend.file (a
// directory), namespace, function ("one": one argument of any interop
// kind; "three": int64, string, float64; "kv": each case a key behind
// KeyPrefix "{namespace}:", cachekit-rs's client .namespace() layout, got and
// on a miss computed and set), options.encryption, options.master_key,
// options.tenant, cases. It prints one JSON line: per case, whether this
// process ran the function body and the value it got.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"time"

	cachekit "github.com/libcachekit/libcachekit/wrappers/go"
)

// Answer is every function's value; py_side.rs's Answer has the same fields.
type Answer struct {
	Writer string             `msgpack:"writer" json:"writer"`
	Op     string             `msgpack:"op" json:"op"`
	Tags   []string           `msgpack:"tags" json:"tags"`
	Score  float64            `msgpack:"score" json:"score"`
	Big    uint64             `msgpack:"big" json:"big"`
	Neg    int64              `msgpack:"neg" json:"neg"`
	None   *int64             `msgpack:"none" json:"none"`
	Nested map[string][]int64 `msgpack:"nested" json:"nested"`
}

var ran int

func answer(op string) Answer {
	ran++
	return Answer{Writer: "rs", Op: op, Tags: []string{"a", "b"}, Score: 1.5, Big: math.MaxUint64,
		Neg: math.MinInt64, Nested: map[string][]int64{"k": {1, 2}}}
}

// oneArg is py_side.rs's one_arg(case) as Go values.
func oneArg(c string) (any, bool) {
	a, ok := map[string]any{
		"int":     int64(42),
		"bigint":  uint64(math.MaxUint64 - 1),
		"negint":  int64(math.MinInt64),
		"float":   3.25,
		"negzero": math.Copysign(0, -1),
		"str":     "h\u00e9llo w\u00f6rld",
		"bytes":   []byte{0, 1, 0xfe},
		"none":    nil,
		"bool":    true,
		"list":    []any{int64(1), "a", nil},
		"tuple":   []any{int64(1), int64(2), "b"},
		"dict":    map[string]any{"b": int64(1), "a": []any{int64(2), int64(3)}},
		"nested": map[string]any{
			"x": []any{int64(1), map[string]any{"y": []any{int64(2), 3.5}}},
			"a": map[string]any{"c": []byte("z")},
		},
		"datetime": time.Date(2026, 3, 4, 5, 6, 7, 890000, time.UTC),
		"set":      cachekit.Set{int64(1), int64(2), int64(3)},
		"uuid":     "12345678-1234-5678-1234-567812345678", // the interop model keys a UUID as this string
	}[c]
	return a, ok
}

type job struct {
	Backend   struct{ Redis, File string }
	Namespace string
	Function  string
	Options   struct {
		Encryption bool
		MasterKey  string `json:"master_key"`
		Tenant     string
	}
	Cases []string
}

func main() {
	if len(os.Args) != 2 {
		fail(fmt.Errorf("usage: peer '<json job>'"))
	}
	var j job
	if err := json.Unmarshal([]byte(os.Args[1]), &j); err != nil {
		fail(fmt.Errorf("job: %w", err))
	}
	opts := cachekit.Options{BackendURL: j.Backend.Redis, DisableL1: true, FailClosed: true}
	if j.Backend.File != "" {
		opts.BackendURL = "file://" + j.Backend.File
	}
	if j.Options.Encryption {
		opts.Encryption, opts.MasterKeyHex, opts.Tenant = true, j.Options.MasterKey, j.Options.Tenant
	}
	if j.Function == "kv" {
		opts.Format, opts.KeyPrefix = cachekit.FormatPlain, j.Namespace+":"
	}
	ctx := context.Background()
	c, err := cachekit.New(ctx, opts)
	if err != nil {
		fail(err)
	}
	defer c.Close()
	fn := cachekit.Fn{Namespace: j.Namespace, Operation: j.Function, TTL: 10 * time.Minute}
	one := cachekit.Wrap1(c, fn, func(context.Context, any) (Answer, error) { return answer("one"), nil })
	three := cachekit.Wrap3(c, fn, func(context.Context, int64, string, float64) (Answer, error) {
		return answer("three"), nil
	})

	var results []map[string]any
	for _, cs := range j.Cases {
		before := ran
		var v Answer
		var err error
		switch j.Function {
		case "one":
			a, ok := oneArg(cs)
			if !ok {
				fail(fmt.Errorf("unknown case %q", cs))
			}
			v, err = one(ctx, a)
		case "three": // "defaults": Python binds c=2.5; "all": passed explicitly
			v, err = three(ctx, 1, "x", map[string]float64{"defaults": 2.5, "all": 0.25}[cs])
		case "kv":
			v, err = getOrSet(ctx, c, j.Namespace, cs)
		default:
			fail(fmt.Errorf("unknown function %q", j.Function))
		}
		if err != nil {
			results = append(results, map[string]any{"case": cs, "error": err.Error()})
			continue
		}
		results = append(results, map[string]any{"case": cs, "ran": ran > before, "value": v})
	}
	line, _ := json.Marshal(map[string]any{"side": "go", "results": results})
	fmt.Println(string(line))
}

// getOrSet is the namespaced entry under key, or (a miss) the computed one, set.
func getOrSet(ctx context.Context, c *cachekit.Cache, ns, key string) (Answer, error) {
	var v Answer
	found, err := c.Get(ctx, ns, key)
	if err == nil {
		return v, cachekit.DecodeValue(found, &v)
	}
	if !errors.Is(err, cachekit.ErrNotFound) {
		return v, err
	}
	v = answer("kv")
	stored, err := cachekit.EncodeValue(v)
	if err != nil {
		return v, err
	}
	return v, c.Set(ctx, ns, key, stored, 10*time.Minute)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "peer:", err)
	os.Exit(2)
}
