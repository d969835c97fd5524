package cachekit

import (
	"context"
	"errors"
	"sync/atomic"
	"time"
)

// Fn names a cached function: its entries live under the interop key
// {Namespace}:{Operation}:{hash of the arguments}, the key a Python, Rust or
// TypeScript SDK computes for the same call, so they share the entries.
type Fn struct {
	Namespace string        // the key's first segment: ^[a-z0-9][a-z0-9._-]{0,63}$, not "ns"/"nsapi"
	Operation string        // the key's second segment, same pattern
	TTL       time.Duration // time to live of the entries; 0 is the cache's DefaultTTL
}

// Wrap0 returns fn cached in c under f: the first call computes and stores
// the result, later ones read it until it expires. Concurrent callers of one
// key share one compute. fn's errors are returned and never stored. The
// result is stored as an interop value (EncodeValue); a stored value that
// does not decode into R is treated as a miss: fn computes it again and the
// new value replaces it. A result that cannot be encoded is returned, not
// stored. Errors of the cache itself (a closed cache, a fail-closed backend
// failure, bad segments, an argument the key cannot carry) are returned.
func Wrap0[R any](c *Cache, f Fn, fn func(context.Context) (R, error)) func(context.Context) (R, error) {
	w := newWrapped(c, f)
	return func(ctx context.Context) (R, error) {
		key, h := lookup[R](ctx, w)
		if h.done() {
			return h.r, h.err
		}
		return cached(ctx, w, key, h, fn)
	}
}

// Wrap1 is Wrap0 for a function of one argument, which the key hashes (see
// Key for how Go values become interop arguments).
func Wrap1[A, R any](c *Cache, f Fn, fn func(context.Context, A) (R, error)) func(context.Context, A) (R, error) {
	w := newWrapped(c, f)
	return func(ctx context.Context, a A) (R, error) {
		key, h := lookup[R](ctx, w, a)
		if h.done() {
			return h.r, h.err
		}
		return cached(ctx, w, key, h, func(ctx context.Context) (R, error) { return fn(ctx, a) })
	}
}

// Wrap2 is Wrap0 for a function of two arguments.
func Wrap2[A, B, R any](c *Cache, f Fn, fn func(context.Context, A, B) (R, error)) func(context.Context, A, B) (R, error) {
	w := newWrapped(c, f)
	return func(ctx context.Context, a A, b B) (R, error) {
		key, h := lookup[R](ctx, w, a, b)
		if h.done() {
			return h.r, h.err
		}
		return cached(ctx, w, key, h, func(ctx context.Context) (R, error) { return fn(ctx, a, b) })
	}
}

// Wrap3 is Wrap0 for a function of three arguments.
func Wrap3[A, B, C, R any](c *Cache, f Fn, fn func(context.Context, A, B, C) (R, error)) func(context.Context, A, B, C) (R, error) {
	w := newWrapped(c, f)
	return func(ctx context.Context, a A, b B, c3 C) (R, error) {
		key, h := lookup[R](ctx, w, a, b, c3)
		if h.done() {
			return h.r, h.err
		}
		return cached(ctx, w, key, h, func(ctx context.Context) (R, error) { return fn(ctx, a, b, c3) })
	}
}

// notStorable carries a result that EncodeValue refused out of the loader:
// the caller whose compute made it still gets its value.
type notStorable struct{ err error }

func (e *notStorable) Error() string { return "cachekit: result not stored: " + e.err.Error() }
func (e *notStorable) Unwrap() error { return e.err }

// hit is what lookup found for a call: a decoded value, a miss, a value of
// another shape, a refresh claim, or an error.
type hit[R any] struct {
	r     R
	res   hitOutcome
	claim uint64
	err   error
}

// done: the call is answered without computing (no closure is made for it).
func (h *hit[R]) done() bool { return h.err != nil || (h.res == hitDecoded && h.claim == 0) }

// lookup computes the call's key and looks it up in L1 with one C call.
func lookup[R any](ctx context.Context, w *wrapped, args ...any) (string, hit[R]) {
	var h hit[R]
	if h.err = w.err; h.err != nil {
		return "", h
	}
	if h.err = ctx.Err(); h.err != nil {
		return "", h
	}
	key, err := w.memo.key(&w.f, args...)
	if err != nil {
		h.err = err
		return "", h
	}
	h.res, h.claim, h.err = tryHit(w, key, &h.r)
	return key, h
}

// cached finishes a call that lookup did not answer: it hands a refresh
// claim to the background, recomputes a value of another shape, and on a
// miss joins the key's single flight (GetOrLoad's miss path), whose result
// is decoded into R (or taken as computed, when this caller's compute ran).
func cached[R any](ctx context.Context, w *wrapped, key string, h hit[R], compute func(context.Context) (R, error)) (R, error) {
	var zero R
	if h.claim != 0 {
		w.refresh(ctx, key, storingLoader(compute, nil), h.claim)
	}
	switch h.res {
	case hitDecoded:
		return h.r, nil
	case hitBadShape:
		return recompute(ctx, w, key, compute)
	}
	// Not in L1: one load for all the callers of the key in this process,
	// whose get_or_load makes the one L2 read (tryHit asked L1 already).
	fk := flightKey{ns: w.f.Namespace, key: key}
	if err := w.c.selfLoad(ctx, fk); err != nil {
		return zero, err
	}
	var computed atomic.Pointer[R] // the loader may outlive a cancelled caller: atomic
	var r R
	tried, decoded := false, false
	// A hit this caller's flight read: decoded straight from the library's
	// buffer (use runs in this goroutine, before loadMiss returns).
	use := func(view []byte) bool {
		if computed.Load() != nil {
			return true // this caller's own compute: nothing to decode
		}
		tried = true
		decoded = DecodeValue(view, &r) == nil
		return decoded
	}
	data, err := w.c.loadMiss(ctx, fk, w.cns, storingLoader(compute, &computed), w.secs, use)
	var ns *notStorable
	if p := computed.Load(); p != nil && (err == nil || errors.As(err, &ns)) {
		return *p, nil // this caller's own compute: no need to decode what it encoded
	}
	if errors.As(err, &ns) { // another caller's result could not be stored: compute ours
		return compute(ctx)
	}
	if err != nil {
		return zero, err
	}
	if decoded || (!tried && DecodeValue(data, &r) == nil) {
		return r, nil
	}
	return recompute(ctx, w, key, compute)
}

// storingLoader is compute as a GetOrLoad loader: the result is encoded as
// an interop value, and kept in *computed for the caller that ran it.
func storingLoader[R any](compute func(context.Context) (R, error), computed *atomic.Pointer[R]) LoadFunc {
	return func(ctx context.Context) ([]byte, error) {
		r, err := compute(ctx)
		if err != nil {
			return nil, err
		}
		if computed != nil {
			computed.Store(&r)
		}
		data, err := EncodeValue(r)
		if err != nil {
			return nil, &notStorable{err: err}
		}
		return data, nil
	}
}

// recompute handles a stored value of another shape (an older version of R,
// another SDK's type) as a miss: compute, and replace it when the result can
// be stored (the value is right even when the store fails).
func recompute[R any](ctx context.Context, w *wrapped, key string, compute func(context.Context) (R, error)) (R, error) {
	r, err := compute(ctx)
	if err != nil {
		var zero R
		return zero, err
	}
	if fresh, eerr := EncodeValue(r); eerr == nil {
		_ = w.c.Set(ctx, w.f.Namespace, key, fresh, w.f.TTL)
	}
	return r, nil
}
