// Package cachekit is the Go binding of libcachekit: an L1 (in-process) and
// L2 (Redis, a shared directory, process memory) cache with single-flight
// loads, stale-while-revalidate, integrity checks and encryption, behind
// the library's C API (cgo). Its entries are
// the ones the Python and Rust bindings read and write: a Go service and a
// Python one calling users/get_user(42) share one cached result.
//
// It builds with cgo (CGO_ENABLED=1, a C and a C++20 compiler). By default
// it compiles the library's core itself (internal/core; the core's -dev
// packages: lz4, xxhash, libsodium, hiredis, openssl, msgpack-cxx) and links
// it statically; with the build tag cachekit_system it links an installed
// libcachekit that pkg-config finds (`pkg-config --modversion cachekit`).
//
// # A cached function
//
// New opens a cache; Wrap0 to Wrap3 turn a function of up to three
// arguments into its cached form, keyed by its namespace, operation and
// arguments:
//
//	c, err := cachekit.New(ctx, cachekit.Options{BackendURL: "redis://127.0.0.1:6379/0"})
//	if err != nil {
//		return err
//	}
//	defer c.Close()
//
//	getUser := cachekit.Wrap1(c, cachekit.Fn{Namespace: "users", Operation: "get_user", TTL: time.Minute},
//		func(ctx context.Context, id int64) (User, error) {
//			return db.LoadUser(ctx, id) // runs on a miss only
//		})
//	u, err := getUser(ctx, 42) // computed once, then read from L1 or Redis
//
// Errors of the function are returned and never stored. For bytes in and
// bytes out, Cache.Get, Cache.Set, Cache.Delete and Cache.GetOrLoad (one
// loader per key however many goroutines ask; WithTTL) take a namespace and
// a key made by Key or InteropKey; EncodeValue and DecodeValue convert Go
// values.
//
// # Options
//
// Every setting of a cache is a field of Options, passed to New; each
// field's comment gives its default, and the zero value is a working
// interop cache. The fields choose the L2 (BackendURL: "" takes the
// environment's CACHEKIT_REDIS_URL, REDIS_URL or CACHEKIT_FILE_CACHE_DIR,
// "none" keeps L1 only; redis://, rediss:// (TLS; or TLS for redis:// with
// redis-py's ssl* settings), unix://, file:///dir, memory://; or
// Backend, a handle from OpenBackend shared by several caches, tuned by
// BackendOptions), the L1 (DisableL1, L1MaxBytes, L1Admission), DefaultTTL,
// stale-while-revalidate (SWR, SWRThresholdRatio), the stored Format and
// Integrity, Encryption (MasterKeyHex, PreviousKeysHex, Tenant), FailClosed,
// size and time bounds (MaxValueBytes, LoadTimeout, CommandTimeout,
// ConnectTimeout), the circuit breaker (BreakerDisabled) and TLS to Redis
// (TLSOptions). Per cached
// function: Fn; per GetOrLoad call: LoadOption.
//
// # Values, keys, concurrency
//
// Values are MessagePack documents: the bytes Set stores and Get returns are
// one MessagePack document each, the interop/v1 value every CacheKit SDK
// (Python, Rust, Go) reads. Keys are the core's interop keys (InteropKey).
//
// A *Cache is safe for concurrent use. Close it when done: Close is
// idempotent, waits for calls in flight, and later calls get ErrClosed.
//
// # Errors
//
// Every failure is an *Error holding the status code, its stable name and
// the message of the same C call; use errors.Is with the sentinel errors
// (ErrNotFound, ErrBackend, ErrTimeout, ...). By default a backend failure
// degrades to a miss (fail-open); Options.FailClosed returns it instead.
//
// The repository's docs/go.md has the rest: building the library,
// environment variables, metrics (Cache.MetricsText, Cache.Stats) and
// the interop guarantees.
package cachekit
