package cachekit

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"
)

// Calls with different slots count on stripes at least 128 bytes apart, so
// goroutines on two cores never write one cache line per call.
func TestGateStripesOfDifferentSlotsAreApart(t *testing.T) {
	g := newGate()
	for slot := uint32(0); slot+1 < gateStripes; slot++ {
		a := uintptr(unsafe.Pointer(&g.stripes[slot].n))
		b := uintptr(unsafe.Pointer(&g.stripes[slot+1].n))
		if b-a < 128 {
			t.Fatalf("stripes %d and %d are %d bytes apart", slot, slot+1, b-a)
		}
	}
}

// Close waits for the calls inside on every stripe, and later calls get
// ErrClosed.
func TestGateCloseWaitsForCallsOnEveryStripe(t *testing.T) {
	g := newGate()
	for _, slot := range []uint32{1, 7} {
		if err := g.enter(slot); err != nil {
			t.Fatal(err)
		}
	}
	closed := make(chan bool)
	go func() { closed <- g.close() }()
	for _, slot := range []uint32{1, 7} {
		select {
		case <-closed:
			t.Fatalf("close returned while a call on slot %d was inside", slot)
		case <-time.After(50 * time.Millisecond):
		}
		g.leave(slot)
	}
	select {
	case ok := <-closed:
		if !ok {
			t.Fatal("the first close returned false")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("close did not return once the calls left")
	}
	if err := g.enter(3); !errors.Is(err, ErrClosed) {
		t.Fatalf("enter after close: %v", err)
	}
	if g.close() {
		t.Fatal("a second close returned true")
	}
}

// Goroutines entering and leaving on many slots while the gate closes:
// when close returns no call is inside, and none gets in afterwards.
func TestGateCloseUnderConcurrentCalls(t *testing.T) {
	g := newGate()
	var inside, afterClose atomic.Int64
	var done atomic.Bool
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func(slot uint32) {
			defer wg.Done()
			for {
				if err := g.enter(slot); err != nil {
					return
				}
				inside.Add(1)
				if done.Load() {
					afterClose.Add(1)
				}
				slot += 5
				inside.Add(-1)
				g.leave(slot - 5)
			}
		}(uint32(i))
	}
	time.Sleep(20 * time.Millisecond)
	g.close()
	done.Store(true)
	if n := inside.Load(); n != 0 {
		t.Fatalf("%d calls inside after close returned", n)
	}
	wg.Wait()
	if n := afterClose.Load(); n != 0 {
		t.Fatalf("%d calls got in after close returned", n)
	}
}
