package cachekit

import (
	"bytes"
	"strings"
	"testing"
)

// A scratch keeps its C buffer between calls: the next call writes over
// the same memory (no free and malloc per call), the copy handed out does
// not alias it, and a buffer grown past bufKeep is freed on the way back to
// the pool.
func TestScratchReusesItsCBuffer(t *testing.T) {
	first, _ := EncodeValue(map[string]any{"b": 2, "a": 1})
	second, _ := EncodeValue("hi")
	want1, _ := CanonicalValue(first)
	s := getScratch()
	if err := s.canonical(first, profileValue); err != nil {
		t.Fatal(err)
	}
	out := s.bytes()
	mem := &s.view()[0]
	if !bytes.Equal(out, want1) {
		t.Fatalf("first call gave %x, want %x", out, want1)
	}
	if err := s.canonical(second, profileValue); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(s.view(), second) {
		t.Fatalf("second call gave %x, want %x", s.view(), second)
	}
	if &s.view()[0] != mem {
		t.Fatal("the second call got new C memory instead of reusing the buffer")
	}
	if !bytes.Equal(out, want1) {
		t.Fatal("the copy handed out changed with the buffer")
	}
	s.trim()
	if s.view() == nil {
		t.Fatal("trim freed a small buffer")
	}

	big, _ := EncodeValue(strings.Repeat("x", bufKeep+1))
	if err := s.canonical(big, profileValue); err != nil {
		t.Fatal(err)
	}
	s.trim()
	if s.view() != nil || s.buf.capacity != 0 {
		t.Fatal("trim kept a buffer grown past bufKeep")
	}
	putScratch(s)
}
