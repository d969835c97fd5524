package main

import "testing"

// go test -bench . -cpuprofile cpu.out: the cases under the profiler.
func BenchmarkG1Wrap(b *testing.B)   { wrapHit(b) }
func BenchmarkG1Direct(b *testing.B) { directHit(b) }
func BenchmarkG4LRU(b *testing.B)    { lruHit(b) }
