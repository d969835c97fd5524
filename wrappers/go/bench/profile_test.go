package main

import (
	"context"
	"testing"

	cachekit "github.com/libcachekit/libcachekit/wrappers/go"
)

// go test -bench . -cpuprofile cpu.out: the cases under the profiler.
func BenchmarkG1Wrap(b *testing.B)         { wrapHit(b) }
func BenchmarkG1Direct(b *testing.B)       { directHit(b) }
func BenchmarkG4LRU(b *testing.B)          { lruHit(b) }
func BenchmarkG3Parallel(b *testing.B)     { parallelWrapHit(b) }
func BenchmarkG3Serial(b *testing.B)       { serialWrapHit(b) }
func BenchmarkG3CoreParallel(b *testing.B) { parallelCoreHits(b) }
func BenchmarkG3CoreSerial(b *testing.B)   { serialCoreHits(b) }

// G2 under the profiler: each starts its own redis-server (the figure's
// first call stores the value the anchor reads).
func BenchmarkG2Wrap(b *testing.B) { withG2Redis(b, func(s *redisServer) { redisWrapHit(s.url())(b) }) }
func BenchmarkG2GoRedis(b *testing.B) {
	withG2Redis(b, func(s *redisServer) {
		c, err := cachekit.New(ctx, cachekit.Options{BackendURL: s.url(), DisableL1: true})
		must(err)
		page := usersPayload(100)
		_, err = cachekit.Wrap1(c, g2Fn, func(context.Context, int64) (usersPage, error) { return page, nil })(ctx, 1)
		must(err)
		c.Close()
		key, err := cachekit.Key(g2Fn.Namespace, g2Fn.Operation, int64(1))
		must(err)
		goRedisHit(s.addr(), key)(b)
	})
}

func withG2Redis(b *testing.B, run func(*redisServer)) {
	s, err := startRedis()
	if err != nil {
		b.Skip(err)
	}
	defer s.stop()
	run(s)
}
