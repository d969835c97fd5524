package cachekit

import (
	"fmt"
	"hash/maphash"
	"testing"
)

// The memo gives Key's answer for every argument, also when more distinct
// arguments than slots evict each other.
func TestKeyMemoAgreesWithKey(t *testing.T) {
	m := newKeyMemo()
	f := Fn{Namespace: "users", Operation: "get"}
	for round := 0; round < 2; round++ {
		for i := 0; i < 3*memoSlots; i++ {
			arg := fmt.Sprint("user-", i)
			got, err := m.key(&f, arg, int64(i))
			want, kerr := Key(f.Namespace, f.Operation, arg, int64(i))
			if err != nil || kerr != nil || got != want {
				t.Fatalf("round %d, arg %d: memo %q (%v), Key %q (%v)", round, i, got, err, want, kerr)
			}
		}
	}

	// A map's entries come in another order on every encoding (Go's map
	// iteration): each order may take a slot, and every one gives the map's key.
	mp := map[string]int{}
	for j := 0; j < 8; j++ {
		mp[fmt.Sprint("k", j)] = j
	}
	want, _ := Key(f.Namespace, f.Operation, mp)
	for i := 0; i < 20; i++ {
		if got, err := m.key(&f, mp); err != nil || got != want {
			t.Fatalf("map, call %d: %q, %v; want %q", i, got, err, want)
		}
	}

	// Long argument encodings are not remembered, and still right.
	long := string(make([]byte, memoMaxArgs+1))
	got, err := m.key(&f, long)
	want, _ = Key(f.Namespace, f.Operation, long)
	if err != nil || got != want {
		t.Fatalf("long argument: %q, %v; want %q", got, err, want)
	}
}

// Hot arguments fewer than the memo's ways times its sets stay remembered:
// after one round, no call of G3's 64 arguments recomputes its key (before
// the memo had ways, a few dozen arguments already evicted each other).
func TestKeyMemoKeepsHotArguments(t *testing.T) {
	m := newKeyMemo()
	f := Fn{Namespace: "users", Operation: "get"}
	// 64 arguments that fit their sets (the seed is random: 64 arbitrary ids
	// overflow one of the 128 four-way sets in about one run in twenty).
	var ids []int64
	perSet := map[uint64]int{}
	for id := int64(0); len(ids) < 64; id++ {
		b, ok := appendScalarArgs(nil, []any{id})
		if !ok {
			t.Fatal("an int64 is a scalar argument")
		}
		if set := maphash.Bytes(m.seed, b) % memoSets; perSet[set] < memoWays {
			perSet[set]++
			ids = append(ids, id)
		}
	}
	for _, id := range ids {
		if _, err := m.key(&f, id); err != nil {
			t.Fatal(err)
		}
	}
	remembered := map[*memoEntry]bool{}
	for i := range m.slots {
		if ent := m.slots[i].Load(); ent != nil {
			remembered[ent] = true
		}
	}
	for _, id := range ids {
		if _, err := m.key(&f, id); err != nil {
			t.Fatal(err)
		}
	}
	for i := range m.slots {
		if ent := m.slots[i].Load(); ent != nil && !remembered[ent] {
			t.Fatalf("slot %d was replaced by a second round of the same 64 arguments", i)
		}
	}
	if len(remembered) != 64 {
		t.Fatalf("%d entries remembered for 64 arguments", len(remembered))
	}
}
