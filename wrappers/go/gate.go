//go:build cgo

package cachekit

import (
	"sync"
	"sync/atomic"
)

// gate keeps a C handle alive while calls use it: each call enters and
// leaves (an atomic add each); close marks it closed, so later calls get
// ErrClosed, and waits until the calls inside have left. The count of calls
// inside is striped: a call counts on the stripe of its slot (its pooled
// scratch's, and the pool is per P), so goroutines on different cores do
// not write one shared cache line twice per call.
type gate struct {
	stripes [gateStripes]gateStripe
	closed  atomic.Bool // read by every call, written once
	closeMu sync.Mutex
	drained chan struct{} // gets a token whenever a call leaves a closed gate
}

const gateStripes = 32

// gateStripe is one count on cache lines of its own (128 bytes: two lines,
// as the adjacent-line prefetcher pairs them).
type gateStripe struct {
	n atomic.Int64
	_ [120]byte
}

func newGate() *gate { return &gate{drained: make(chan struct{}, 1)} }

// enter admits one call counted on slot's stripe, or returns ErrClosed. The
// call leaves with the same slot.
func (g *gate) enter(slot uint32) error {
	g.stripes[slot%gateStripes].n.Add(1)
	// Go's atomics are sequentially consistent: either close's scan sees the
	// add above, or this load sees closed.
	if g.closed.Load() {
		g.leave(slot)
		return ErrClosed
	}
	return nil
}

func (g *gate) leave(slot uint32) {
	g.stripes[slot%gateStripes].n.Add(-1)
	if g.closed.Load() {
		select {
		case g.drained <- struct{}{}:
		default:
		}
	}
}

// inside is how many calls are inside (a closed gate's count only falls).
func (g *gate) inside() int64 {
	var n int64
	for i := range g.stripes {
		n += g.stripes[i].n.Load()
	}
	return n
}

// close returns true to the one caller that must free the handle, once no
// call is inside; false when the gate was already closed.
func (g *gate) close() bool {
	g.closeMu.Lock()
	defer g.closeMu.Unlock()
	if g.closed.Load() {
		return false
	}
	g.closed.Store(true)
	// A call that leaves after this store sends a token, so a scan that
	// still counts it is followed by a wake-up.
	for g.inside() != 0 {
		<-g.drained
	}
	return true
}

func (g *gate) isClosed() bool { return g.closed.Load() }
