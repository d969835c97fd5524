package cachekit

/*
#include <cachekit/cachekit.h>
int ck_get_or_load(cachekit_cache *cache, cachekit_buf *out, cachekit_lookup *info,
                   const char *ns, const void *key, size_t key_len, double ttl,
                   uintptr_t handle, cachekit_error *err);
*/
import "C"

import (
	"context"
	"fmt"
	"log"
	"runtime/cgo"
	"sync"
	"time"
)

// LoadFunc computes a missing value: one MessagePack document.
type LoadFunc func(ctx context.Context) ([]byte, error)

// LoadOption tunes one GetOrLoad call.
type LoadOption func(*loadOptions)

type loadOptions struct {
	ttl time.Duration
}

// WithTTL stores the loaded value for d (0: the cache's DefaultTTL,
// NoExpiry: no expiry).
func WithTTL(d time.Duration) LoadOption { return func(o *loadOptions) { o.ttl = d } }

// PanicError is what GetOrLoad re-panics with when the loader panicked: the
// loader's panic value and its stack, carried back to every waiting caller.
type PanicError struct {
	Value any
	Stack []byte
}

func (p *PanicError) Error() string { return fmt.Sprintf("cachekit: the loader panicked: %v", p.Value) }

// Unwrap gives the panic value when it was an error.
func (p *PanicError) Unwrap() error {
	if err, ok := p.Value.(error); ok {
		return err
	}
	return nil
}

// GetOrLoad returns the value of key, computing it with load on a miss.
// Concurrent callers of one key in this process share one load (merged in
// Go before entering C); each stops waiting when its own ctx ends while the
// load goes on for the others (its ctx is cancelled only when every caller
// left). The loader's error is returned as it is and never cached; a panic
// in it is re-panicked in every waiting caller as a *PanicError. With SWR a
// stale hit is returned at once and one caller refreshes it in the
// background with load. A miss reads L2 once. The returned slice is the
// caller's own.
func (c *Cache) GetOrLoad(ctx context.Context, ns, key string, load LoadFunc, opts ...LoadOption) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if load == nil {
		return nil, invalidf("GetOrLoad: nil loader")
	}
	var lo loadOptions
	for _, o := range opts {
		o(&lo)
	}
	secs, err := ttlSeconds(lo.ttl)
	if err != nil {
		return nil, err
	}
	cns, err := cString("namespace", ns)
	if err != nil {
		return nil, err
	}
	fk := flightKey{ns: ns, key: key}
	if err := c.selfLoad(ctx, fk); err != nil {
		return nil, err
	}

	// Fast path: an L1 hit needs one C call and no bookkeeping. It asks L1
	// alone (peek), which never waits on L2 or a load, so even a stampede
	// holds an OS thread only briefly here; L2 is read once, by the
	// flight's get_or_load below.
	if c.l1 {
		s := getScratch()
		h, err := c.acquire(s)
		if err != nil {
			putScratch(s)
			return nil, err
		}
		rc := C.cachekit_cache_peek_ex(h, &s.buf, &s.info, charPtr(cns), stringPtr(key), C.size_t(len(key)), &s.err)
		c.release(s)
		if rc == C.CACHEKIT_OK {
			if s.info.refresh != 0 {
				c.refresh(ctx, fk, cns, load, secs, uint64(s.info.refresh_claim))
			}
			v := s.bytes()
			putScratch(s)
			return v, nil
		}
		err = errorFrom(rc, &s.err)
		putScratch(s)
		if rc != C.CACHEKIT_ENOTFOUND {
			return nil, err
		}
	}
	return c.loadMiss(ctx, fk, cns, load, secs, nil)
}

// selfLoad is ErrDeadlock for a loader that asks its own cache for its own
// key (the single flight would wait for itself).
func (c *Cache) selfLoad(ctx context.Context, fk flightKey) error {
	if loading, _ := ctx.Value(loadingKey{c, fk}).(bool); loading {
		return &Error{Code: StatusDeadlock, Name: StatusDeadlock.Name(),
			Message: fmt.Sprintf("the loader of %q in namespace %q asked for its own key", fk.key, fk.ns)}
	}
	return nil
}

// loadMiss is the rest of a get-or-load after L1 had nothing: the callers of
// the key join one flight, whose C get_or_load makes the call's one L2 read
// and runs load on a miss there. use, when not nil, may take a found value
// in place (see flightGroup.takeInPlace): then the result is nil.
func (c *Cache) loadMiss(ctx context.Context, fk flightKey, cns []byte, load LoadFunc, secs C.double, use func([]byte) bool) ([]byte, error) {
	return c.flights.wait(ctx, fk, use, func(f *flight) { c.runFlight(f, fk, cns, load, secs) })
}

// refresh lands a stale-while-revalidate refresh in the background (this
// caller holds the key's one claim). A failed or panicking refresh gives
// the claim up, so a later stale hit tries again.
func (c *Cache) refresh(ctx context.Context, fk flightKey, cns []byte, load LoadFunc, secs C.double, claim uint64) {
	lctx := context.WithValue(context.WithoutCancel(ctx), loadingKey{c, fk}, true)
	go func() {
		v, err, p := callLoader(lctx, load)
		s := getScratch()
		defer putScratch(s)
		h, gerr := c.acquire(s)
		if gerr != nil {
			return
		}
		defer c.release(s)
		if p != nil || err != nil {
			if p != nil {
				log.Printf("cachekit: the refresh of %q panicked: %v\n%s", fk.key, p.Value, p.Stack)
			}
			C.cachekit_cache_abandon_refresh_ex(h, stringPtr(fk.key), C.size_t(len(fk.key)), C.uint64_t(claim), &s.err)
			return
		}
		C.cachekit_cache_put_refresh_ex(h, charPtr(cns), stringPtr(fk.key), C.size_t(len(fk.key)),
			bytesPtr(v), C.size_t(len(v)), secs, C.uint64_t(claim), &s.err)
	}()
}

// runFlight is the one C get_or_load of a key's flight.
func (c *Cache) runFlight(f *flight, fk flightKey, cns []byte, load LoadFunc, secs C.double) {
	defer c.flights.finish(fk, f)
	s := getScratch()
	defer putScratch(s)
	h, err := c.acquire(s)
	if err != nil {
		f.err = err
		return
	}
	defer c.release(s)
	lc := &loadCall{ctx: context.WithValue(f.ctx, loadingKey{c, fk}, true), load: load}
	handle := cgo.NewHandle(lc)
	defer handle.Delete()
	rc := C.ck_get_or_load(h, &s.buf, &s.info, charPtr(cns), stringPtr(fk.key), C.size_t(len(fk.key)), secs,
		C.uintptr_t(handle), &s.err)
	switch {
	case lc.panic != nil:
		f.panic = lc.panic
	case rc == C.CACHEKIT_OK:
		if !c.flights.takeInPlace(fk, f, s.view()) {
			f.val = s.bytes()
		}
		if s.info.refresh != 0 {
			c.refresh(f.ctx, fk, cns, load, secs, uint64(s.info.refresh_claim))
		}
	case lc.err != nil:
		f.err = lc.err
	default:
		f.err = errorFrom(rc, &s.err)
	}
}

// loadingKey marks a loader's context, so a loader that asks its own cache
// for its own key gets ErrDeadlock instead of waiting for itself.
type loadingKey struct {
	c  *Cache
	fk flightKey
}

// loadCall is what the C loader callback reaches through its cgo.Handle.
type loadCall struct {
	ctx   context.Context
	load  LoadFunc
	err   error       // the loader's own error, returned as it is
	panic *PanicError // a recovered panic, re-panicked in the callers
}

// callLoader runs load, turning a panic into a *PanicError.
func callLoader(ctx context.Context, load LoadFunc) (v []byte, err error, p *PanicError) {
	defer func() {
		if r := recover(); r != nil {
			p = &PanicError{Value: r, Stack: stack()}
		}
	}()
	v, err = load(ctx)
	return v, err, nil
}

// flightKey names one key of one cache.
type flightKey struct{ ns, key string }

// flight is one load shared by the callers of a key.
type flight struct {
	ctx     context.Context // the load's: not cancelled by any one caller
	cancel  context.CancelFunc
	done    chan struct{}
	waiters int  // guarded by flightGroup.mu
	given   bool // the value was handed out once (later callers get copies); guarded by mu
	val     []byte
	use     func([]byte) bool // the inline caller's in-place reader (see takeInPlace)
	err     error
	panic   *PanicError
}

// flightGroup merges the concurrent callers of a key in Go.
type flightGroup struct {
	mu sync.Mutex
	m  map[flightKey]*flight
}

// wait joins the key's flight (starting run when there is none) and waits
// for its outcome or ctx's end. run goes in a goroutine of its own, so that
// callers can stop waiting while it goes on, unless the caller's ctx can
// never end: that caller would wait for it anyway, so it runs it itself
// (an L2 hit then costs no goroutine and no hand-over).
func (g *flightGroup) wait(ctx context.Context, fk flightKey, use func([]byte) bool, run func(*flight)) ([]byte, error) {
	g.mu.Lock()
	if g.m == nil {
		g.m = make(map[flightKey]*flight)
	}
	f, ok := g.m[fk]
	if !ok || f.ctx.Err() != nil { // none, or one every caller left (its load was cancelled)
		lctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		f = &flight{ctx: lctx, cancel: cancel, done: make(chan struct{})}
		g.m[fk] = f
		if ctx.Done() == nil {
			f.use = use
			f.waiters++
			g.mu.Unlock()
			run(f)
			return g.outcome(f)
		}
		go run(f)
	}
	f.waiters++
	g.mu.Unlock()

	select {
	case <-f.done:
	case <-ctx.Done():
		g.leave(f)
		return nil, ctx.Err()
	}
	return g.outcome(f)
}

// outcome hands a finished flight's result to one of its callers.
func (g *flightGroup) outcome(f *flight) ([]byte, error) {
	g.mu.Lock()
	f.waiters--
	own := f.given
	f.given = true
	g.mu.Unlock()
	if f.panic != nil {
		panic(f.panic)
	}
	if f.err != nil {
		return nil, f.err
	}
	if own { // another caller has the original: this one gets its own copy
		return append([]byte{}, f.val...), nil
	}
	return f.val, nil
}

// takeInPlace hands a found value, still in the library's buffer, to the
// flight's inline caller's use (it decodes from there: no Go copy of the
// bytes) when that caller is the flight's only one; the flight leaves the
// map first, so no caller joins later and wants the bytes. False when the
// bytes must be copied for the callers (use refused them, or others wait).
func (g *flightGroup) takeInPlace(fk flightKey, f *flight, view []byte) bool {
	if f.use == nil {
		return false
	}
	g.mu.Lock()
	alone := f.waiters == 1
	if alone && g.m[fk] == f {
		delete(g.m, fk)
	}
	g.mu.Unlock()
	return alone && f.use(view)
}

// leave drops a caller that stopped waiting; the last one cancels the load.
func (g *flightGroup) leave(f *flight) {
	g.mu.Lock()
	defer g.mu.Unlock()
	f.waiters--
	if f.waiters == 0 {
		select {
		case <-f.done:
		default:
			f.cancel()
		}
	}
}

// finish publishes the flight's outcome and forgets it.
func (g *flightGroup) finish(fk flightKey, f *flight) {
	g.mu.Lock()
	if g.m[fk] == f {
		delete(g.m, fk)
	}
	g.mu.Unlock()
	close(f.done)
	f.cancel()
}
