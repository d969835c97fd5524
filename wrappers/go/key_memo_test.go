package cachekit

import (
	"fmt"
	"testing"
)

// The memo gives Key's answer for every argument, also when more distinct
// arguments than slots evict each other, and a map built in any order is one
// encoding (one slot).
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

	m = newKeyMemo()
	for i := 0; i < 20; i++ {
		mp := map[string]int{}
		for j := 0; j < 8; j++ {
			k := (i + j) % 8 // another insertion order each time
			mp[fmt.Sprint("k", k)] = k
		}
		if _, err := m.key(&f, mp); err != nil {
			t.Fatal(err)
		}
	}
	used := 0
	for i := range m.slots {
		if m.slots[i].Load() != nil {
			used++
		}
	}
	if used != 1 {
		t.Fatalf("one map in 20 insertion orders took %d slots, want 1", used)
	}

	// Long argument encodings are not remembered, and still right.
	long := string(make([]byte, memoMaxArgs+1))
	got, err := m.key(&f, long)
	want, _ := Key(f.Namespace, f.Operation, long)
	if err != nil || got != want {
		t.Fatalf("long argument: %q, %v; want %q", got, err, want)
	}
}
