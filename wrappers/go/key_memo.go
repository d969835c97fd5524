package cachekit

import (
	"hash/maphash"
	"sync/atomic"
	"unsafe"
)

// keyMemo remembers the keys of one wrapped function's recent argument
// encodings, so a repeated call computes its key without the cgo call to
// the core's canonicaliser and hash. The key is a pure function of the
// argument bytes (namespace and operation are fixed per wrapped function),
// so a remembered key is always right. It is a small direct-mapped table of
// immutable entries: lock-free reads (callers on every core hit it at once),
// a colliding or new encoding replaces the slot, and memory stays bounded
// (memoSlots entries of at most memoMaxArgs bytes of arguments).
type keyMemo struct {
	seed  maphash.Seed
	slots [memoSlots]atomic.Pointer[memoEntry]
}

const (
	memoSlots   = 128
	memoMaxArgs = 128 // longer argument encodings are not remembered
)

type memoEntry struct {
	args string // the MessagePack argument array as Key encodes it
	key  string
}

func newKeyMemo() *keyMemo { return &keyMemo{seed: maphash.MakeSeed()} }

// key is Key(f.Namespace, f.Operation, args...), remembered.
func (m *keyMemo) key(f *Fn, args ...any) (string, error) {
	var stack [64]byte
	b, ok := appendScalarArgs(stack[:0], args)
	if !ok {
		e := getArgsEncoder()
		defer putArgsEncoder(e)
		if err := e.array(args); err != nil {
			return "", err
		}
		b = e.buf.Bytes()
	}
	if len(b) > memoMaxArgs {
		return interopKeyOf(f, string(b))
	}
	slot := &m.slots[maphash.Bytes(m.seed, b)%memoSlots]
	if ent := slot.Load(); ent != nil && ent.args == string(b) {
		return ent.key, nil
	}
	ent := &memoEntry{args: string(b)}
	key, err := interopKeyOf(f, ent.args)
	if err != nil {
		return "", err
	}
	ent.key = key
	slot.Store(ent)
	return key, nil
}

// interopKeyOf is InteropKey of arguments held in a string. b itself is never
// handed to cgo, so the caller's stack buffer stays on the stack (a slice
// passed to a C call escapes to the heap); C only reads the bytes.
func interopKeyOf(f *Fn, args string) (string, error) {
	return InteropKey(f.Namespace, f.Operation, unsafe.Slice(unsafe.StringData(args), len(args)))
}
