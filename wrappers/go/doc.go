// Package cachekit is the Go binding of libcachekit: an L1 (in-process) and
// L2 (Redis, a shared directory, process memory) cache with single-flight
// loads, stale-while-revalidate, integrity checks and encryption, behind
// the library's C API (cgo, `#cgo pkg-config: cachekit`).
//
// Values are MessagePack documents: the bytes Set stores and Get returns are
// one MessagePack document each, the interop/v1 value every CacheKit SDK
// (Python, Rust, Go) reads. Keys are the core's interop keys (InteropKey).
//
// A *Cache is safe for concurrent use. Close it when done: Close is
// idempotent, waits for calls in flight, and later calls get ErrClosed.
//
// Every failure is an *Error holding the status code, its stable name and
// the message of the same C call; use errors.Is with the sentinel errors
// (ErrNotFound, ErrBackend, ErrTimeout, ...). See docs/go.md.
package cachekit
