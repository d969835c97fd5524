package main

import "testing"

// go test -bench . -cpuprofile cpu.out: the cases under the profiler.
func BenchmarkG1Wrap(b *testing.B)         { wrapHit(b) }
func BenchmarkG1Direct(b *testing.B)       { directHit(b) }
func BenchmarkG4LRU(b *testing.B)          { lruHit(b) }
func BenchmarkG3Parallel(b *testing.B)     { parallelWrapHit(b) }
func BenchmarkG3Serial(b *testing.B)       { serialWrapHit(b) }
func BenchmarkG3CoreParallel(b *testing.B) { parallelCoreHits(b) }
func BenchmarkG3CoreSerial(b *testing.B)   { serialCoreHits(b) }
