package main

import (
	"context"
	"sync/atomic"
	"testing"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/redis/go-redis/v9"
	"github.com/vmihailenco/msgpack/v5"

	cachekit "github.com/libcachekit/libcachekit/wrappers/go"
)

// A case pairs a figure with its anchor, both measured in this process.
type benchCase struct {
	id         string
	figure     func(b *testing.B)
	anchor     func(b *testing.B)
	throughput bool    // compare ops/s (higher is better) instead of ns/op
	target     float64 // the ratio to meet; 0 = report only
	calibrated bool    // also measure G3cal beside each pair (parallel cases)
	anchorDesc string
}

var ctx = context.Background()

var g1Fn = cachekit.Fn{Namespace: "bench", Operation: "get_user"}

func loadSmallUser(_ context.Context, id int64) (smallUser, error) {
	return smallUser{ID: id, Name: "Ann Example", Email: "ann@example.com", Active: true}, nil
}

// l1Setup is a warm L1-only cache with the G1 function wrapped.
func l1Setup() (*cachekit.Cache, func(context.Context, int64) (smallUser, error)) {
	c, err := cachekit.New(ctx, cachekit.Options{BackendURL: "none"})
	must(err)
	get := cachekit.Wrap1(c, g1Fn, loadSmallUser)
	_, err = get(ctx, 42)
	must(err)
	return c, get
}

func wrapHit(b *testing.B) {
	c, get := l1Setup()
	defer c.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if u, err := get(ctx, 42); err != nil || u.ID != 42 {
			b.Fatal(u, err)
		}
	}
}

// directHit: the same entry through one cgo call per hit (the key's bytes
// prepared once) and the same decode into the same type.
func directHit(b *testing.B) {
	key, err := cachekit.Key(g1Fn.Namespace, g1Fn.Operation, int64(42))
	must(err)
	value, err := cachekit.EncodeValue(smallUser{ID: 42, Name: "Ann Example", Email: "ann@example.com", Active: true})
	must(err)
	d := newDirectCache(g1Fn.Namespace)
	defer d.close()
	d.put(key, value)
	ck := cKey(key)
	defer freeC(ck)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var u smallUser
		if err := msgpack.Unmarshal(d.get(ck, len(key)), &u); err != nil || u.ID != 42 {
			b.Fatal(u, err)
		}
	}
}

// g3Keys is how many arguments (keys) G3's callers cycle through: hits
// spread over the L1 as a service's are, rather than all on one entry.
const g3Keys = 64

func warmKeys(get func(context.Context, int64) (smallUser, error)) {
	for id := int64(0); id < g3Keys; id++ {
		_, err := get(ctx, id)
		must(err)
	}
}

// parallelWrapHit: G3's figure, 2 goroutines per GOMAXPROCS.
func parallelWrapHit(b *testing.B) {
	c, get := l1Setup()
	defer c.Close()
	warmKeys(get)
	b.SetParallelism(2)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for id := int64(0); pb.Next(); id = (id + 1) % g3Keys {
			if _, err := get(ctx, id); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// serialWrapHit: G3's anchor, the same hits from one goroutine.
func serialWrapHit(b *testing.B) {
	c, get := l1Setup()
	defer c.Close()
	warmKeys(get)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := get(ctx, int64(i%g3Keys)); err != nil {
			b.Fatal(err)
		}
	}
}

// lruHit: golang-lru/v2 keyed by the argument, holding the same encoded
// bytes, plus the same decode.
func lruHit(b *testing.B) {
	value, err := cachekit.EncodeValue(smallUser{ID: 42, Name: "Ann Example", Email: "ann@example.com", Active: true})
	must(err)
	l, err := lru.New[int64, []byte](1024)
	must(err)
	l.Add(42, value)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		v, ok := l.Get(42)
		var u smallUser
		if !ok || msgpack.Unmarshal(v, &u) != nil || u.ID != 42 {
			b.Fatal("lru miss")
		}
	}
}

var g2Fn = cachekit.Fn{Namespace: "bench", Operation: "users_page"}

// redisWrapHit: G2's figure, a Wrap1 hit from Redis with L1 off.
func redisWrapHit(url string) func(b *testing.B) {
	return func(b *testing.B) {
		c, err := cachekit.New(ctx, cachekit.Options{BackendURL: url, DisableL1: true})
		must(err)
		defer c.Close()
		page := usersPayload(100)
		get := cachekit.Wrap1(c, g2Fn, func(context.Context, int64) (usersPage, error) { return page, nil })
		_, err = get(ctx, 1)
		must(err)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if p, err := get(ctx, 1); err != nil || len(p.Users) != 100 {
				b.Fatal(err)
			}
		}
	}
}

// goRedisHit: go-redis GET of the same stored bytes + msgpack Unmarshal into
// the same type.
func goRedisHit(addr, key string) func(b *testing.B) {
	return func(b *testing.B) {
		rdb := redis.NewClient(&redis.Options{Addr: addr})
		defer rdb.Close()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			raw, err := rdb.Get(ctx, key).Bytes()
			if err != nil {
				b.Fatal(err)
			}
			var p usersPage
			if err := msgpack.Unmarshal(raw, &p); err != nil || len(p.Users) != 100 {
				b.Fatal(err)
			}
		}
	}
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// cpuWork is G3's calibration: pure Go work touching no shared state, the
// most that 2 goroutines per P can gain over 1 on this machine at this load.
func cpuWork(n int) uint64 {
	x := uint64(n)
	for i := 0; i < 200; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

var sink atomic.Uint64

func parallelCPU(b *testing.B) {
	b.SetParallelism(2)
	b.RunParallel(func(pb *testing.PB) {
		var acc uint64
		for i := 0; pb.Next(); i++ {
			acc += cpuWork(i)
		}
		sink.Add(acc)
	})
}

func serialCPU(b *testing.B) {
	var acc uint64
	for i := 0; i < b.N; i++ {
		acc += cpuWork(i)
	}
	sink.Add(acc)
}

// g3Values: G3's 64 stored values, encoded, in a Go map only read.
func g3Values() map[int64][]byte {
	m := map[int64][]byte{}
	for id := int64(0); id < g3Keys; id++ {
		v, err := cachekit.EncodeValue(smallUser{ID: id, Name: "Ann Example", Email: "ann@example.com", Active: true})
		must(err)
		m[id] = v
	}
	return m
}

// parallelDecode / serialDecode: G3dec, the hit's Go work alone (the same
// values decoded into the same type, from a read-only map: no cgo, nothing
// shared written), with G3's goroutines. Its ratio is what Go code that
// allocates as a hit does can gain here: the garbage collector's work takes
// the idle P for free in the serial run and a busy one in the parallel run.
func parallelDecode(b *testing.B) {
	m := g3Values()
	b.SetParallelism(2)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for id := int64(0); pb.Next(); id = (id + 1) % g3Keys {
			var u smallUser
			if err := msgpack.Unmarshal(m[id], &u); err != nil || u.ID != id {
				b.Fatal(u, err)
			}
		}
	})
}

func serialDecode(b *testing.B) {
	m := g3Values()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		id := int64(i % g3Keys)
		var u smallUser
		if err := msgpack.Unmarshal(m[id], &u); err != nil || u.ID != id {
			b.Fatal(u, err)
		}
	}
}
