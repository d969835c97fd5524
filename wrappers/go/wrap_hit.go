package cachekit

/*
#include <cachekit/cachekit.h>
*/
import "C"

import (
	"context"
)

// wrapped is what one WrapN call prepares once for all calls of the wrapped
// function: the key memo, the namespace as a C string, the TTL in C form.
type wrapped struct {
	c    *Cache
	f    Fn
	memo *keyMemo
	cns  []byte
	secs C.double
	err  error // a bad namespace or TTL: every call returns it
}

func newWrapped(c *Cache, f Fn) *wrapped {
	w := &wrapped{c: c, f: f, memo: newKeyMemo()}
	w.cns, w.err = cString("namespace", f.Namespace)
	if w.err == nil {
		w.secs, w.err = ttlSeconds(f.TTL)
	}
	return w
}

type hitOutcome int

const (
	hitMiss     hitOutcome = iota // not in L1 (or not asked): the miss path reads L2 and loads
	hitDecoded                    // stored and decoded into the caller's value
	hitBadShape                   // stored but not of the caller's type
)

// tryHit looks key up in L1 with one C call (peek: never L2, whose one
// read is the miss path's get_or_load) and, on a hit, decodes the value
// straight from the library's buffer into *out: the value's bytes are not
// copied into Go memory first (the decoder reads through an io.Reader, so
// the result never aliases the C buffer; only its strings and byte slices
// are copied). claim != 0 hands this caller a stale-while-revalidate refresh.
func tryHit[R any](w *wrapped, key string, out *R) (res hitOutcome, claim uint64, err error) {
	c := w.c
	if !c.l1 {
		return hitMiss, 0, nil
	}
	s := getScratch()
	defer putScratch(s)
	h, err := c.acquire(s)
	if err != nil {
		return hitMiss, 0, err
	}
	rc := C.cachekit_cache_peek_ex(h, &s.buf, &s.info, charPtr(w.cns), stringPtr(key), C.size_t(len(key)), &s.err)
	c.release(s) // the buffer is the caller's memory: it outlives the handle
	switch rc {
	case C.CACHEKIT_OK:
	case C.CACHEKIT_ENOTFOUND:
		return hitMiss, 0, nil
	default:
		return hitMiss, 0, errorFrom(rc, &s.err)
	}
	if s.info.refresh != 0 {
		claim = uint64(s.info.refresh_claim)
	}
	if s.dec.decode(s.view(), out) != nil {
		return hitBadShape, claim, nil
	}
	return hitDecoded, claim, nil
}

// refresh lands a stale-while-revalidate refresh in the background with the
// cache's own refresh path.
func (w *wrapped) refresh(ctx context.Context, key string, load LoadFunc, claim uint64) {
	w.c.refresh(ctx, flightKey{ns: w.f.Namespace, key: key}, w.cns, load, w.secs, claim)
}
