package cachekit

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// msgStr is the MessagePack str of s (fixstr: up to 31 bytes), a valid
// cache value.
func msgStr(s string) []byte { return append([]byte{0xa0 | byte(len(s))}, s...) }

const (
	keyA = "users:get_user:61598716255080080f6456eb065c2e51badfaa4320b0efe97469c29cffee8875"
	keyB = "users:get_user:0000000000000000000000000000000000000000000000000000000000000001"
	hexK = "6161616161616161616161616161616161616161616161616161616161616161"
	hexP = "6262626262626262626262626262626262626262626262626262626262626262"
)

// openCache opens a cache closed at the test's end; BackendURL "" means
// L1 only here (never the environment or the user's default directory).
func openCache(t *testing.T, opts Options) *Cache {
	t.Helper()
	if opts.BackendURL == "" && opts.Backend == nil {
		opts.BackendURL = "none"
	}
	c, err := New(context.Background(), opts)
	if err != nil {
		t.Fatalf("New(%+v): %v", opts, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// roundTrip checks Set, Get, Delete and the miss after it on one cache.
func roundTrip(t *testing.T, c *Cache) {
	t.Helper()
	ctx := context.Background()
	if _, err := c.Get(ctx, "users", keyA); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get of a missing key: %v, want ErrNotFound", err)
	}
	if err := c.Set(ctx, "users", keyA, msgStr("ann"), time.Minute); err != nil {
		t.Fatalf("Set: %v", err)
	}
	v, err := c.Get(ctx, "users", keyA)
	if err != nil || string(v) != string(msgStr("ann")) {
		t.Fatalf("Get: %q, %v", v, err)
	}
	if err := c.Delete(ctx, "users", keyA); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if _, err := c.Get(ctx, "users", keyA); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get after Delete: %v, want ErrNotFound", err)
	}
}

func TestRoundTripL1Only(t *testing.T) { roundTrip(t, openCache(t, Options{})) }

func TestRoundTripFileBackend(t *testing.T) {
	url := "file://" + t.TempDir()
	roundTrip(t, openCache(t, Options{BackendURL: url}))
	// The value reaches L2: a second cache on the same directory reads it.
	ctx := context.Background()
	w := openCache(t, Options{BackendURL: url})
	if err := w.Set(ctx, "users", keyB, msgStr("bob"), 0); err != nil {
		t.Fatal(err)
	}
	r := openCache(t, Options{BackendURL: url, DisableL1: true})
	if v, err := r.Get(ctx, "users", keyB); err != nil || string(v) != string(msgStr("bob")) {
		t.Fatalf("Get through a second cache: %q, %v", v, err)
	}
}

func TestRoundTripRedis(t *testing.T) {
	srv := startRedis(t)
	roundTrip(t, openCache(t, Options{BackendURL: srv.URL()}))
	ctx := context.Background()
	w := openCache(t, Options{BackendURL: srv.URL()})
	if err := w.Set(ctx, "users", keyB, msgStr("bob"), 0); err != nil {
		t.Fatal(err)
	}
	r := openCache(t, Options{BackendURL: srv.URL(), DisableL1: true})
	if v, err := r.Get(ctx, "users", keyB); err != nil || string(v) != string(msgStr("bob")) {
		t.Fatalf("Get through a second cache: %q, %v", v, err)
	}
	if err := r.InvalidateNamespace(ctx, "users"); err != nil {
		t.Fatalf("InvalidateNamespace: %v", err)
	}
	if _, err := r.Get(ctx, "users", keyB); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get after InvalidateNamespace: %v", err)
	}
	if err := w.Set(ctx, "users", keyB, msgStr("bob"), 0); err != nil {
		t.Fatal(err)
	}
	if err := r.Clear(ctx); err != nil {
		t.Fatalf("Clear: %v", err)
	}
	if _, err := r.Get(ctx, "users", keyB); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get after Clear: %v", err)
	}
}

func TestEncryptionWithPreviousKey(t *testing.T) {
	ctx := context.Background()
	url := "file://" + t.TempDir()
	old := openCache(t, Options{BackendURL: url, Encryption: true, MasterKeyHex: hexP, Tenant: "acme"})
	if err := old.Set(ctx, "users", keyA, msgStr("sealed"), 0); err != nil {
		t.Fatalf("Set under the old key: %v", err)
	}
	// After rotation: the new key reads what the old one sealed.
	rotated := openCache(t, Options{BackendURL: url, DisableL1: true, Encryption: true, MasterKeyHex: hexK,
		PreviousKeysHex: []string{hexP}, Tenant: "acme"})
	if v, err := rotated.Get(ctx, "users", keyA); err != nil || string(v) != string(msgStr("sealed")) {
		t.Fatalf("Get with the previous key: %q, %v", v, err)
	}
	// Without the previous key the entry does not open: fail-closed says why.
	strict := openCache(t, Options{BackendURL: url, DisableL1: true, Encryption: true, MasterKeyHex: hexK,
		Tenant: "acme", FailClosed: true})
	_, err := strict.Get(ctx, "users", keyA)
	if !errors.Is(err, ErrCrypto) {
		t.Fatalf("Get without the previous key: %v, want an encryption error", err)
	}
	// A plaintext reader never sees the sealed bytes as a value.
	plain := openCache(t, Options{BackendURL: url, DisableL1: true})
	if v, err := plain.Get(ctx, "users", keyA); err == nil {
		t.Fatalf("a plaintext cache read a sealed entry as %q", v)
	}
}

func TestCloseIsIdempotentAndLaterCallsGetErrClosed(t *testing.T) {
	ctx := context.Background()
	c, err := New(ctx, Options{BackendURL: "none"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	checks := map[string]error{}
	_, checks["Get"] = c.Get(ctx, "ns", keyA)
	checks["Set"] = c.Set(ctx, "ns", keyA, msgStr("x"), 0)
	checks["Delete"] = c.Delete(ctx, "ns", keyA)
	checks["InvalidateNamespace"] = c.InvalidateNamespace(ctx, "ns")
	checks["Clear"] = c.Clear(ctx)
	_, checks["Stats"] = c.Stats("")
	_, checks["MetricsText"] = c.MetricsText()
	_, checks["GetOrLoad"] = c.GetOrLoad(ctx, "ns", keyA, func(context.Context) ([]byte, error) { return msgStr("x"), nil })
	for name, err := range checks {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("%s after Close: %v, want ErrClosed", name, err)
		}
	}
}

func TestStatsAndMetrics(t *testing.T) {
	ctx := context.Background()
	c := openCache(t, Options{})
	c.Set(ctx, "users", keyA, msgStr("ann"), 0)
	c.Get(ctx, "users", keyA)
	c.Get(ctx, "users", keyB)
	st, err := c.Stats("users")
	if err != nil {
		t.Fatal(err)
	}
	if st.L1Hits != 1 || st.Misses != 1 || st.Stores != 1 || st.L1Entries != 1 {
		t.Fatalf("Stats(users) = %+v", st)
	}
	all, err := c.Stats("")
	if err != nil || all.L1Hits != 1 {
		t.Fatalf("Stats(all) = %+v, %v", all, err)
	}
	text, err := c.MetricsText()
	if err != nil || !strings.Contains(text, `namespace="users"`) {
		t.Fatalf("MetricsText: %v\n%s", err, text)
	}
}

func TestContextAlreadyCancelled(t *testing.T) {
	c := openCache(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Get(ctx, "ns", keyA); !errors.Is(err, context.Canceled) {
		t.Fatalf("Get: %v", err)
	}
	if err := c.Set(ctx, "ns", keyA, msgStr("x"), 0); !errors.Is(err, context.Canceled) {
		t.Fatalf("Set: %v", err)
	}
}

func TestL1AdmissionReachesTheCore(t *testing.T) {
	// TinyLFU's counters show in the metrics text only when the core's L1 runs it.
	c := openCache(t, Options{L1Admission: L1AdmissionTinyLFU})
	text, err := c.MetricsText()
	if err != nil || !strings.Contains(text, "cachekit_l1_admitted_total") {
		t.Fatalf("tinylfu metrics: %v\n%s", err, text)
	}
	if _, err := New(context.Background(), Options{BackendURL: "none", L1Admission: 9}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("L1Admission 9: %v, want ErrInvalid", err)
	}
}

// Interop keys carry no prefix (protocol: interop mode uses no key prefix):
// a KeyPrefix with FormatInterop would store keys no other SDK reads, so New
// refuses it itself, whatever the core says, before a cache exists. With
// FormatAuto the prefix stays an ordinary option.
func TestKeyPrefixInInteropModeIsRefusedByNew(t *testing.T) {
	ctx := context.Background()
	for _, url := range []string{"none", "memory://"} {
		c, err := New(ctx, Options{BackendURL: url, KeyPrefix: "app:"})
		var e *Error
		if !errors.Is(err, ErrInvalid) || !errors.As(err, &e) || e.Code != StatusInvalidArgument ||
			!strings.Contains(e.Message, "Options.KeyPrefix") || !strings.Contains(e.Message, "interop") {
			if c != nil {
				c.Close()
			}
			t.Fatalf("New(%s, KeyPrefix, FormatInterop) = %v; want the binding's InvalidArgument naming Options.KeyPrefix", url, err)
		}
	}
	roundTrip(t, openCache(t, Options{BackendURL: "memory://", Format: FormatAuto, KeyPrefix: "app:"}))
	// FormatPlain: interop's bytes under a client namespace (cachekit-rs's layout).
	roundTrip(t, openCache(t, Options{BackendURL: "memory://", Format: FormatPlain, KeyPrefix: "rsapp:"}))
}
