//go:build cgo

package cachekit

import (
	"sync"
	"sync/atomic"
)

// gate keeps a C handle alive while calls use it: each call enters (one
// atomic add) and leaves (another); close marks it closed, so later calls
// get ErrClosed, and waits until the calls inside have left. The count of
// calls inside also tells GetOrLoad how many goroutines are in C right now.
type gate struct {
	state   atomic.Int64 // calls inside, plus closedBit once closed
	closeMu sync.Mutex
	closed  bool
	drained chan struct{} // gets a token whenever the last call leaves a closed gate
}

const closedBit = int64(1) << 62

func newGate() *gate { return &gate{drained: make(chan struct{}, 1)} }

// enter admits one call and returns how many calls are inside (itself
// included), or ErrClosed.
func (g *gate) enter() (int64, error) {
	v := g.state.Add(1)
	if v&closedBit != 0 {
		g.leave()
		return 0, ErrClosed
	}
	return v, nil
}

func (g *gate) leave() {
	if g.state.Add(-1) == closedBit {
		select {
		case g.drained <- struct{}{}:
		default:
		}
	}
}

// close returns true to the one caller that must free the handle, once no
// call is inside; false when the gate was already closed.
func (g *gate) close() bool {
	g.closeMu.Lock()
	defer g.closeMu.Unlock()
	if g.closed {
		return false
	}
	g.closed = true
	if g.state.Add(closedBit) != closedBit {
		<-g.drained
	}
	return true
}

func (g *gate) isClosed() bool { return g.state.Load()&closedBit != 0 }
