package cachekit

/*
#include <cachekit/cachekit.h>
*/
import "C"

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"time"
)

// Cache is one libcachekit cache handle (L1 -> L2 with single-flight, SWR
// and verification). It is safe for concurrent use. Close releases it.
type Cache struct {
	// gate keeps h alive: every C call enters it, Close closes it (waiting
	// for the calls inside), so no call sees a freed handle.
	gate    *gate
	h       *C.cachekit_cache
	backend *Backend // borrowed by the C cache: kept reachable while open
	flights flightGroup
	l1      bool // false when Options turned L1 off: the fast paths then skip their L1 peek
}

// New creates a cache. The context bounds nothing inside the C call (it
// opens no connection: Redis connects lazily) but a cancelled one fails at once.
func New(ctx context.Context, opts Options) (*Cache, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	o, err := opts.toC()
	if err != nil {
		return nil, err
	}
	defer o.free()
	if opts.Backend != nil {
		// The C cache borrows the backend: it stays open until Close.
		if err := opts.Backend.borrow(); err != nil {
			return nil, err
		}
	}
	var h *C.cachekit_cache
	cerr := newCError()
	if err := errorFrom(C.cachekit_cache_new_ex(&h, o.opts, &cerr), &cerr); err != nil {
		if opts.Backend != nil {
			opts.Backend.unborrow()
		}
		return nil, err
	}
	c := &Cache{gate: newGate(), h: h, backend: opts.Backend, l1: !opts.DisableL1}
	runtime.SetFinalizer(c, reportLeak)
	return c, nil
}

// reportLeak runs when an unclosed Cache is collected: it only says so (it
// does not free: a finalizer must not race with the user's own Close).
func reportLeak(c *Cache) {
	if !c.gate.isClosed() {
		reportLeakOf("Cache")
	}
}

func reportLeakOf(what string) {
	fmt.Fprintf(os.Stderr, "cachekit: a %s was garbage-collected without Close; its C handle leaked\n", what)
}

// Close frees the handle once the calls in flight have returned. Calls
// after Close return ErrClosed. Closing twice is a no-op. A loader must not
// close its own cache (Close would wait for the loader).
func (c *Cache) Close() error {
	if !c.gate.close() {
		return nil
	}
	C.cachekit_cache_free(c.h)
	runtime.SetFinalizer(c, nil)
	if c.backend != nil {
		c.backend.unborrow()
	}
	return nil
}

// acquire holds the handle open for one call, counted on s's gate slot;
// release with c.release(s).
func (c *Cache) acquire(s *scratch) (*C.cachekit_cache, error) {
	if err := c.gate.enter(s.slot); err != nil {
		return nil, err
	}
	return c.h, nil
}

func (c *Cache) release(s *scratch) { c.gate.leave(s.slot) }

// checkNamespace is every keyed call's prologue: a cancelled context fails
// first, then a namespace C cannot hold; it returns the namespace as a C string.
func checkNamespace(ctx context.Context, ns string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return cString("namespace", ns)
}

// Get returns the value (one MessagePack document) stored under key in
// namespace ns, or an error matching ErrNotFound on a miss.
func (c *Cache) Get(ctx context.Context, ns, key string) ([]byte, error) {
	cns, err := checkNamespace(ctx, ns)
	if err != nil {
		return nil, err
	}
	var out []byte
	err = withScratch(c.gate, func(s *scratch) error {
		rc := C.cachekit_cache_get_ex(c.h, &s.buf, nil, charPtr(cns), stringPtr(key), C.size_t(len(key)), &s.err)
		if err := errorFrom(rc, &s.err); err != nil {
			return err
		}
		out = s.bytes()
		return nil
	})
	return out, err
}

// Set stores value (one MessagePack document) under key in both tiers.
// ttl: 0 = the cache's DefaultTTL, NoExpiry = none, > 0 = that long.
func (c *Cache) Set(ctx context.Context, ns, key string, value []byte, ttl time.Duration) error {
	cns, err := checkNamespace(ctx, ns)
	if err != nil {
		return err
	}
	secs, err := ttlSeconds(ttl)
	if err != nil {
		return err
	}
	return withScratch(c.gate, func(s *scratch) error {
		rc := C.cachekit_cache_put_ex(c.h, charPtr(cns), stringPtr(key), C.size_t(len(key)),
			bytesPtr(value), C.size_t(len(value)), secs, &s.err)
		return errorFrom(rc, &s.err)
	})
}

// Delete invalidates key in both tiers (no error when it was absent).
func (c *Cache) Delete(ctx context.Context, ns, key string) error {
	cns, err := checkNamespace(ctx, ns)
	if err != nil {
		return err
	}
	return withScratch(c.gate, func(s *scratch) error {
		rc := C.cachekit_cache_invalidate_ex(c.h, charPtr(cns), stringPtr(key), C.size_t(len(key)), &s.err)
		return errorFrom(rc, &s.err)
	})
}

// InvalidateNamespace invalidates every key of namespace ns in both tiers
// (the file backend: L1 only, and an error matching ErrInvalid; see
// docs/cache.md "Invalidation").
func (c *Cache) InvalidateNamespace(ctx context.Context, ns string) error {
	cns, err := checkNamespace(ctx, ns)
	if err != nil {
		return err
	}
	return withScratch(c.gate, func(s *scratch) error {
		return errorFrom(C.cachekit_cache_invalidate_namespace_ex(c.h, charPtr(cns), &s.err), &s.err)
	})
}

// Clear deletes every key of this cache's own key space in both tiers
// (other applications' keys in the same database stay).
func (c *Cache) Clear(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return withScratch(c.gate, func(s *scratch) error {
		return errorFrom(C.cachekit_cache_clear_ex(c.h, &s.err), &s.err)
	})
}

// MetricsText is the cache's metrics in the Prometheus text format.
func (c *Cache) MetricsText() (string, error) {
	var out string
	err := withScratch(c.gate, func(s *scratch) error {
		if err := errorFrom(C.cachekit_cache_metrics_text_ex(c.h, &s.buf, &s.err), &s.err); err != nil {
			return err
		}
		out = s.string()
		return nil
	})
	return out, err
}
