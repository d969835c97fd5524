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
// so a remembered key is always right. It is a set-associative table of
// immutable entries: lock-free reads (callers on every core hit it at once),
// a new encoding takes a free way of its set or replaces one, and memory
// stays bounded (memoSlots entries of at most memoMaxArgs bytes of
// arguments). Ways matter: with one entry per set, a few dozen hot
// arguments already collide, and two colliding arguments called in turn
// evict each other on every call, each eviction a cgo call, an allocation
// and a store to a line the other cores read (measured in G3, see
// docs/performance.md).
type keyMemo struct {
	seed  maphash.Seed
	slots [memoSlots]atomic.Pointer[memoEntry]
}

const (
	memoWays    = 4
	memoSets    = 128
	memoSlots   = memoWays * memoSets
	memoMaxArgs = 128 // longer argument encodings are not remembered
)

type memoEntry struct {
	hash uint64
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
	h := maphash.Bytes(m.seed, b)
	set := m.slots[(h%memoSets)*memoWays:][:memoWays]
	free := -1
	for i := range set {
		ent := set[i].Load()
		if ent == nil {
			if free < 0 {
				free = i
			}
			continue
		}
		if ent.hash == h && ent.args == string(b) {
			return ent.key, nil
		}
	}
	ent := &memoEntry{hash: h, args: string(b)}
	key, err := interopKeyOf(f, ent.args)
	if err != nil {
		return "", err
	}
	ent.key = key
	if free < 0 { // a full set: replace a way picked by other bits of the hash
		free = int((h / memoSets) % memoWays)
	}
	set[free].Store(ent)
	return key, nil
}

// interopKeyOf is InteropKey of arguments held in a string. b itself is never
// handed to cgo, so the caller's stack buffer stays on the stack (a slice
// passed to a C call escapes to the heap); C only reads the bytes.
func interopKeyOf(f *Fn, args string) (string, error) {
	return InteropKey(f.Namespace, f.Operation, unsafe.Slice(unsafe.StringData(args), len(args)))
}
