package cachekit

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// Every status of the C header, its stable name (codec-tool.md) and a
// sentinel it matches.
var statusTable = []struct {
	code     Status
	name     string
	sentinel error
}{
	{StatusNotFound, "NotFound", ErrNotFound},
	{StatusInvalidArgument, "InvalidArgument", ErrInvalid},
	{StatusOutOfMemory, "OutOfMemory", ErrNoMemory},
	{StatusCorrupt, "Corrupt", ErrCorrupt},
	{StatusInputTooLarge, "InputTooLarge", ErrTooBig},
	{StatusBackendError, "BackendError", ErrBackend},
	{StatusTimeout, "Timeout", ErrTimeout},
	{StatusUserError, "UserError", ErrLoadFailed},
	{StatusDeserialization, "DeserializationFailed", ErrDecode},
	{StatusDecompressionBomb, "DecompressionBomb", ErrCorrupt},
	{StatusDecompression, "DecompressionFailed", ErrCorrupt},
	{StatusChecksumMismatch, "ChecksumMismatch", ErrCorrupt},
	{StatusSizeValidation, "SizeValidationFailed", ErrCorrupt},
	{StatusDepthExceeded, "DepthExceeded", ErrDecode},
	{StatusOverclaim, "Overclaim", ErrDecode},
	{StatusTruncated, "Truncated", ErrDecode},
	{StatusTrailingBytes, "TrailingBytes", ErrDecode},
	{StatusUnsupportedType, "UnsupportedType", ErrUnsupported},
	{StatusInvalidSegment, "InvalidSegment", ErrInvalid},
	{StatusInvalidKey, "InvalidKey", ErrInvalid},
	{StatusInvalidCiphertext, "InvalidCiphertext", ErrCrypto},
	{StatusAuthentication, "AuthenticationFailed", ErrAuthentication},
	{StatusKeyNotFound, "KeyNotFound", ErrCrypto},
	{StatusInvalidFrame, "InvalidFrame", ErrCorrupt},
	{StatusCryptoUnavailable, "CryptoUnavailable", ErrCrypto},
	{StatusNonceExhausted, "NonceExhausted", ErrCrypto},
	{StatusInternal, "Internal", ErrInternal},
	{StatusBusy, "Busy", ErrBusy},
	{StatusDeadlock, "Deadlock", ErrDeadlock},
	{StatusCircuitOpen, "CircuitOpen", ErrCircuitOpen},
}

func TestEveryStatusHasItsNameAndASentinel(t *testing.T) {
	if len(statusTable) != 30 {
		t.Fatalf("the table has %d statuses; the header has 30 failures", len(statusTable))
	}
	for _, row := range statusTable {
		if got := row.code.Name(); got != row.name {
			t.Errorf("Status(%d).Name() = %q, want %q", row.code, got, row.name)
		}
		e := &Error{Code: row.code, Name: row.name, Message: "m"}
		if !errors.Is(e, row.sentinel) {
			t.Errorf("%s does not match its sentinel %v", row.name, row.sentinel)
		}
		if errors.Is(e, ErrClosed) {
			t.Errorf("%s matches ErrClosed", row.name)
		}
		if want := "cachekit: " + row.name + ": m"; e.Error() != want {
			t.Errorf("Error() = %q, want %q", e.Error(), want)
		}
	}
	// Families: circuit-open and busy are backend failures too.
	for _, code := range []Status{StatusBackendError, StatusCircuitOpen, StatusBusy} {
		if !errors.Is(&Error{Code: code}, ErrBackend) {
			t.Errorf("%s is not ErrBackend", code.Name())
		}
	}
	if errors.Is(&Error{Code: StatusTimeout}, ErrBackend) || errors.Is(&Error{Code: StatusNotFound}, ErrInvalid) {
		t.Error("a status matched a family it is not in")
	}
}

// checkErr asserts err is an *Error with that name and a message holding part.
func checkErr(t *testing.T, what string, err error, name, part string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Errorf("%s: %v (%T), want an *Error", what, err, err)
		return
	}
	if e.Name != name || e.Code.Name() != name || !strings.Contains(e.Message, part) {
		t.Errorf("%s: %s %q, want %s with %q in the message", what, e.Name, e.Message, name, part)
	}
}

func TestErrorsCarryTheirCallsNameAndMessage(t *testing.T) {
	ctx := context.Background()
	_, err := New(ctx, Options{BackendURL: "none", Encryption: true, MasterKeyHex: "zz"})
	checkErr(t, "New with a short master key", err, "InvalidArgument", "64 hex digits")
	_, err = New(ctx, Options{BackendURL: "rediss://127.0.0.1:1?ssl_ca_certs=/nonexistent/ca.pem"})
	checkErr(t, "New with rediss:// and a missing CA file", err, "InvalidArgument", "TLS")
	_, err = New(ctx, Options{BackendURL: "none\x00x"})
	checkErr(t, "New with a NUL in the URL", err, "InvalidArgument", "NUL")

	c := openCache(t, Options{MaxValueBytes: 16})
	checkErr(t, "Set with a long namespace", c.Set(ctx, strings.Repeat("n", 1025), keyA, msgStr("x"), 0),
		"InvalidArgument", "CACHEKIT_MAX_NAMESPACE_SIZE")
	checkErr(t, "Set with a NUL in the namespace", c.Set(ctx, "a\x00b", keyA, msgStr("x"), 0), "InvalidArgument", "NUL")
	checkErr(t, "Set of a too big value", c.Set(ctx, "n", keyA, msgStr(strings.Repeat("x", 30)), 0),
		"InputTooLarge", "max_value_bytes")
	checkErr(t, "Set of a value that is not MessagePack", c.Set(ctx, "n", keyA, []byte{0xc1}, 0),
		"InvalidArgument", "one MessagePack document")
	checkErr(t, "Set with a negative TTL", c.Set(ctx, "n", keyA, msgStr("x"), -5), "InvalidArgument", "negative")

	_, err = InteropKey("Bad", "op", []byte{0x90})
	checkErr(t, "InteropKey with an upper-case namespace", err, "InvalidSegment", "namespace")
	_, err = InteropKey("abc", "op", []byte{0x91, 0xcb, 0x7f, 0xf8, 0, 0, 0, 0, 0, 0})
	checkErr(t, "InteropKey of NaN", err, "UnsupportedType", "NaN")
	_, err = InteropKey("abc", "op", []byte{0x92, 0x01})
	checkErr(t, "InteropKey of an overclaiming array", err, "Overclaim", "declared")

	f := openCache(t, Options{BackendURL: "file://" + t.TempDir()})
	checkErr(t, "InvalidateNamespace on the file backend", f.InvalidateNamespace(ctx, "n"), "InvalidArgument", "file backend")

	down := openCache(t, Options{BackendURL: fmt.Sprintf("redis://127.0.0.1:%d", freePort(t)), FailClosed: true})
	_, err = down.Get(ctx, "n", keyA)
	checkErr(t, "fail-closed Get with Redis down", err, "BackendError", "connect")
	if !errors.Is(err, ErrBackend) {
		t.Errorf("%v is not ErrBackend", err)
	}
	open := openCache(t, Options{BackendURL: fmt.Sprintf("redis://127.0.0.1:%d", freePort(t)), DisableL1: true})
	if _, err := open.Get(ctx, "n", keyA); !errors.Is(err, ErrNotFound) {
		t.Errorf("fail-open Get with Redis down: %v, want a miss", err)
	}

	url := "file://" + t.TempDir()
	w := openCache(t, Options{BackendURL: url, Encryption: true, MasterKeyHex: hexK})
	if err := w.Set(ctx, "n", keyA, msgStr("s"), 0); err != nil {
		t.Fatal(err)
	}
	r := openCache(t, Options{BackendURL: url, Encryption: true, MasterKeyHex: hexP, FailClosed: true})
	_, err = r.Get(ctx, "n", keyA)
	if !errors.Is(err, ErrAuthentication) && !errors.Is(err, ErrCrypto) {
		t.Errorf("Get sealed under another key: %v, want an encryption error", err)
	}
	var e *Error
	if errors.As(err, &e) && e.Message == "" {
		t.Errorf("Get sealed under another key: no message")
	}
}

// Goroutines move between OS threads; each error must still be its own
// call's (the _ex form), never another goroutine's.
func TestErrorsOfConcurrentCallsAreTheirOwn(t *testing.T) {
	ctx := context.Background()
	c := openCache(t, Options{MaxValueBytes: 16})
	var wg sync.WaitGroup
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 300; i++ {
				size := 17 + (g*7+i)%15 // a fixstr of 16..30 characters: 17..31 bytes, all too big
				err := c.Set(ctx, "n", keyA, msgStr(strings.Repeat("x", size-1)), 0)
				want := fmt.Sprintf("value of %d bytes", size)
				var e *Error
				if !errors.As(err, &e) || !strings.Contains(e.Message, want) {
					t.Errorf("goroutine %d: %v, want %q", g, err, want)
					return
				}
				if _, err := InteropKey("Bad", "op", []byte{0x90}); !errors.Is(err, ErrInvalid) {
					t.Errorf("goroutine %d: InteropKey: %v", g, err)
					return
				}
			}
		}(g)
	}
	wg.Wait()
}
