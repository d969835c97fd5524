package cachekit

import (
	"fmt"
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
