package cachekit

/*
#include <cachekit/cachekit.h>
*/
import "C"

import (
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
)

// scratch is what one C call writes: its error (1 KiB, hence pooled), its
// output buffer, its lookup report, and a decoder for a hit. The buffer
// keeps its C memory between calls: the library writes each output over it
// (reusing its capacity), so a call needs neither a malloc nor a free nor a
// second cgo call to dispose. A finalizer frees the buffer when the pool
// drops the scratch; a buffer grown past bufKeep is freed when it goes back.
type scratch struct {
	err  C.cachekit_error
	buf  C.cachekit_buf
	info C.cachekit_lookup
	dec  valueDecoder
	slot uint32 // the gate stripe its calls count on (see gate)
}

// bufKeep is the largest buffer a pooled scratch keeps.
const bufKeep = 64 << 10

// nextSlot numbers new scratches, so scratches made on different Ps count
// on different gate stripes.
var nextSlot atomic.Uint32

var scratchPool = sync.Pool{New: func() any {
	s := &scratch{slot: nextSlot.Add(1)}
	runtime.SetFinalizer(s, func(s *scratch) { C.cachekit_buf_dispose(&s.buf) })
	return s
}}

func getScratch() *scratch {
	s := scratchPool.Get().(*scratch)
	s.err.struct_size = C.size_t(unsafe.Sizeof(s.err))
	s.info = C.cachekit_lookup{struct_size: C.size_t(unsafe.Sizeof(s.info)), age_seconds: -1, temporal_keys: -1}
	s.buf.size = 0
	return s
}

// withScratch runs fn with a pooled scratch (its C buffer and error, read by
// fn before the scratch goes back) and g held open for the call, so fn may
// use the handle g guards.
func withScratch(g *gate, fn func(s *scratch) error) error {
	s := getScratch()
	defer putScratch(s)
	if err := g.enter(s.slot); err != nil {
		return err
	}
	defer g.leave(s.slot)
	return fn(s)
}

func putScratch(s *scratch) {
	s.trim()
	scratchPool.Put(s)
}

// trim frees a buffer grown past bufKeep (one large value must not pin its
// memory in the pool).
func (s *scratch) trim() {
	if s.buf.capacity > bufKeep {
		C.cachekit_buf_dispose(&s.buf)
	}
}

// view is the buffer's bytes in C memory: valid until the scratch goes back
// to the pool or its next call.
func (s *scratch) view() []byte {
	if s.buf.ptr == nil || s.buf.size == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(s.buf.ptr)), int(s.buf.size))
}

// bytes is a copy of the buffer's bytes in Go memory (never nil).
func (s *scratch) bytes() []byte { return append([]byte{}, s.view()...) }

func (s *scratch) string() string { return string(s.view()) }

// profileValue is the canonical form of stored values (for the tests'
// calls of scratch.canonical, which cannot name C's constants).
const profileValue = C.CACHEKIT_PROFILE_VALUE
