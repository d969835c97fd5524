package cachekit

/*
#include <stdlib.h>
#include <cachekit/cachekit.h>
*/
import "C"

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"
)

// Backend is a raw L2 handle (Redis, a directory of files, process memory):
// bytes under byte keys, no codec. A Cache may borrow one (Options.Backend).
// Safe for concurrent use; Close releases it.
type Backend struct {
	gate    *gate
	h       *C.cachekit_backend
	borrows atomic.Int64 // open caches using it
}

// BackendOptions tune OpenBackend; zero values take the library defaults.
type BackendOptions struct {
	CommandTimeout  time.Duration // every call's deadline: 250 ms
	ConnectTimeout  time.Duration // Redis connect: 500 ms
	PoolSize        uint32        // Redis connections: 10
	BreakerDisabled bool
	FailClosed      bool       // return errors instead of degrading to misses / skipped writes
	TLS             TLSOptions // Redis over TLS (redis-py's ssl* settings)
}

// OpenBackend opens redis://, rediss://, redis-cluster://, rediss-cluster://,
// redis-sentinel://, rediss-sentinel://, unix://, file:/// or memory:// (""
// takes CACHEKIT_REDIS_URL, then REDIS_URL). Redis connects lazily.
func OpenBackend(ctx context.Context, url string, opts BackendOptions) (*Backend, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var curl []byte
	if url != "" {
		var err error
		if curl, err = cString("backend URL", url); err != nil {
			return nil, err
		}
	}
	cmdMs, err := millis("BackendOptions.CommandTimeout", opts.CommandTimeout)
	if err != nil {
		return nil, err
	}
	connMs, err := millis("BackendOptions.ConnectTimeout", opts.ConnectTimeout)
	if err != nil {
		return nil, err
	}
	bo := (*C.cachekit_backend_options)(C.calloc(1, C.sizeof_cachekit_backend_options))
	defer C.free(unsafe.Pointer(bo))
	cerr := newCError()
	if err := errorFrom(C.cachekit_backend_options_init_ex(bo, C.sizeof_cachekit_backend_options, &cerr), &cerr); err != nil {
		return nil, err
	}
	bo.command_timeout_ms = cmdMs
	bo.connect_timeout_ms = connMs
	bo.pool_size = C.uint32_t(opts.PoolSize)
	if opts.BreakerDisabled {
		bo.breaker_disabled = 1
	}
	if opts.FailClosed {
		bo.fail_closed = 1
	}
	var strs []*C.char // copied by the open
	defer func() {
		for _, p := range strs {
			C.free(unsafe.Pointer(p))
		}
	}()
	if err := opts.TLS.apply("BackendOptions", bo, func(s string) *C.char {
		p := C.CString(s)
		strs = append(strs, p)
		return p
	}); err != nil {
		return nil, err
	}
	var h *C.cachekit_backend
	if err := errorFrom(C.cachekit_backend_open_ex(&h, charPtr(curl), bo, &cerr), &cerr); err != nil {
		return nil, err
	}
	b := &Backend{gate: newGate(), h: h}
	runtime.SetFinalizer(b, func(b *Backend) {
		if !b.gate.isClosed() {
			reportLeakOf("Backend")
		}
	})
	return b, nil
}

func (b *Backend) borrow() error {
	if err := b.gate.enter(0); err != nil {
		return err
	}
	defer b.gate.leave(0)
	b.borrows.Add(1)
	return nil
}

func (b *Backend) unborrow() { b.borrows.Add(-1) }

// Close frees the backend once its calls in flight returned. It refuses
// (ErrBusy) while an open Cache borrows it. Closing twice is a no-op.
func (b *Backend) Close() error {
	if n := b.borrows.Load(); n > 0 {
		return &Error{Code: StatusBusy, Name: StatusBusy.Name(),
			Message: fmt.Sprintf("the backend is used by %d open Cache(s): close them first", n)}
	}
	if !b.gate.close() {
		return nil
	}
	C.cachekit_backend_free(b.h)
	runtime.SetFinalizer(b, nil)
	return nil
}

// Kind is "redis", "file" or "memory" ("" once closed).
func (b *Backend) Kind() string {
	if err := b.gate.enter(0); err != nil {
		return ""
	}
	defer b.gate.leave(0)
	return C.GoString(C.cachekit_backend_kind(b.h))
}

// Get reads key's bytes, or an error matching ErrNotFound.
func (b *Backend) Get(ctx context.Context, key []byte) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []byte
	err := withScratch(b.gate, func(s *scratch) error {
		rc := C.cachekit_backend_get_ex(b.h, &s.buf, bytesPtr(key), C.size_t(len(key)), &s.err)
		if err := errorFrom(rc, &s.err); err != nil {
			return err
		}
		out = s.bytes()
		return nil
	})
	return out, err
}

// backendTTL maps a Go TTL to the backend's: 0 or NoExpiry = none.
func backendTTL(ttl time.Duration) (C.double, error) {
	if ttl == 0 || ttl == NoExpiry {
		return 0, nil
	}
	if ttl < 0 {
		return 0, invalidf("TTL %v is negative", ttl)
	}
	return C.double(ttl.Seconds()), nil
}

// Set writes value under key; ttl 0 or NoExpiry = no expiry.
func (b *Backend) Set(ctx context.Context, key, value []byte, ttl time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	secs, err := backendTTL(ttl)
	if err != nil {
		return err
	}
	return withScratch(b.gate, func(s *scratch) error {
		rc := C.cachekit_backend_set_ex(b.h, bytesPtr(key), C.size_t(len(key)), bytesPtr(value),
			C.size_t(len(value)), secs, &s.err)
		return errorFrom(rc, &s.err)
	})
}

// Delete removes key; an error matching ErrNotFound when it did not exist.
func (b *Backend) Delete(ctx context.Context, key []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return withScratch(b.gate, func(s *scratch) error {
		return errorFrom(C.cachekit_backend_delete_ex(b.h, bytesPtr(key), C.size_t(len(key)), &s.err), &s.err)
	})
}

// pack lays byte strings end to end with count+1 offsets: the packed batch
// form, which passes no array of pointers to C.
func pack(items [][]byte) ([]byte, []C.size_t) {
	total := 0
	for _, it := range items {
		total += len(it)
	}
	buf := make([]byte, 0, total)
	offs := make([]C.size_t, len(items)+1)
	for i, it := range items {
		buf = append(buf, it...)
		offs[i+1] = C.size_t(len(buf))
	}
	return buf, offs
}

// GetMany reads keys in one round trip (MGET on Redis). values[i] is nil
// for a miss (a stored empty value is a non-nil empty slice).
func (b *Backend) GetMany(ctx context.Context, keys [][]byte) ([][]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(keys) == 0 {
		return [][]byte{}, nil
	}
	kbuf, koffs := pack(keys)
	voffs := make([]C.size_t, len(keys)+1)
	results := make([]C.int, len(keys))
	var all []byte // one copy of every value; the results share it
	err := withScratch(b.gate, func(s *scratch) error {
		rc := C.cachekit_backend_get_many_packed_ex(b.h, &s.buf, &voffs[0], &results[0], bytesPtr(kbuf),
			&koffs[0], C.size_t(len(keys)), &s.err)
		if err := errorFrom(rc, &s.err); err != nil {
			return err
		}
		all = s.bytes()
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([][]byte, len(keys))
	for i := range keys {
		if results[i] == C.CACHEKIT_OK {
			out[i] = all[voffs[i]:voffs[i+1]:voffs[i+1]]
		}
	}
	return out, nil
}

// SetMany writes keys[i] = values[i] in one round trip, all with one TTL
// (0 or NoExpiry = none).
func (b *Backend) SetMany(ctx context.Context, keys, values [][]byte, ttl time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(keys) != len(values) {
		return invalidf("SetMany: %d keys but %d values", len(keys), len(values))
	}
	if len(keys) == 0 {
		return nil
	}
	secs, err := backendTTL(ttl)
	if err != nil {
		return err
	}
	kbuf, koffs := pack(keys)
	vbuf, voffs := pack(values)
	return withScratch(b.gate, func(s *scratch) error {
		rc := C.cachekit_backend_set_many_packed_ex(b.h, bytesPtr(kbuf), &koffs[0], bytesPtr(vbuf), &voffs[0],
			C.size_t(len(keys)), secs, &s.err)
		return errorFrom(rc, &s.err)
	})
}
