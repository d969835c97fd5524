package cachekit

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// redis-sentinel:// and rediss-sentinel:// from Go: one private primary and
// one sentinel monitoring it as "m" (quorum 1); what goes through the
// sentinel URL is read back on the primary with a plain client.

func TestSentinelBackendLandsOnThePrimary(t *testing.T) {
	primary := startRedis(t)
	sentinel := startSentinel(t, primary.port, "")
	ctx := context.Background()
	b, err := OpenBackend(ctx, fmt.Sprintf("redis-sentinel://127.0.0.1:%d/m", sentinel.port),
		BackendOptions{FailClosed: true})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.Set(ctx, []byte("sentinel:k"), []byte("through-sentinel"), 0); err != nil {
		t.Fatalf("Set through the sentinel: %v", err)
	}
	if v, err := b.Get(ctx, []byte("sentinel:k")); err != nil || string(v) != "through-sentinel" {
		t.Fatalf("Get through the sentinel: %q, %v", v, err)
	}
	if got := primary.Command(t, "GET", "sentinel:k"); got != "through-sentinel" {
		t.Fatalf("GET on the primary: %q", got)
	}
	if err := b.Delete(ctx, []byte("sentinel:k")); err != nil {
		t.Fatalf("Delete through the sentinel: %v", err)
	}
	if got := primary.Command(t, "EXISTS", "sentinel:k"); got != ":0" {
		t.Fatalf("EXISTS on the primary after Delete: %q", got)
	}

	// A Cache too, L1 off: its value comes back from the primary.
	c, err := New(ctx, Options{BackendURL: fmt.Sprintf("redis-sentinel://127.0.0.1:%d/m", sentinel.port),
		DisableL1: true, FailClosed: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	value := []byte{0xa2, 'h', 'i'} // MessagePack "hi"
	if err := c.Set(ctx, "sentinel", "k", value, 0); err != nil {
		t.Fatalf("Cache.Set through the sentinel: %v", err)
	}
	if got := primary.Command(t, "DBSIZE"); got != ":1" {
		t.Fatalf("DBSIZE on the primary after Cache.Set: %q", got)
	}

	unknown, err := OpenBackend(ctx, fmt.Sprintf("redis-sentinel://127.0.0.1:%d/no-such-master", sentinel.port),
		BackendOptions{FailClosed: true})
	if err != nil {
		t.Fatal(err)
	}
	defer unknown.Close()
	if _, err := unknown.Get(ctx, []byte("k")); err == nil || !strings.Contains(err.Error(), "no-such-master") {
		t.Fatalf("an unknown master: %v, want an error naming it", err)
	}
}

// rediss-sentinel://: TLS to the sentinel (its tls-port) naming the primary's
// TLS port (tls-replication yes); one CA and client certificate for both.
func TestSentinelOverTLS(t *testing.T) {
	s := startTLSRedis(t)
	tlsPort := freePort(t)
	startSentinel(t, s.tlsPort, fmt.Sprintf("tls-port %d\ntls-cert-file %s\ntls-key-file %s\ntls-ca-cert-file %s\n"+
		"tls-auth-clients no\ntls-replication yes\n", tlsPort, s.file("server.crt"), s.file("server.key"),
		s.file("ca.crt")))
	url := func(ca string) string {
		return fmt.Sprintf("rediss-sentinel://127.0.0.1:%d/m?ssl_ca_certs=%s&ssl_certfile=%s&ssl_keyfile=%s",
			tlsPort, s.file(ca), s.file("client.crt"), s.file("client.key"))
	}
	ctx := context.Background()
	b, err := OpenBackend(ctx, url("ca.crt"), BackendOptions{FailClosed: true})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := tlsRoundTrip(ctx, b); err != nil {
		t.Fatalf("through a TLS sentinel: %v", err)
	}
	if got := s.server.Command(t, "GET", "tls:k"); got != "v" {
		t.Fatalf("GET on the primary: %q", got)
	}
	wrong, err := OpenBackend(ctx, url("other-ca.crt"), BackendOptions{FailClosed: true})
	if err != nil {
		t.Fatal(err)
	}
	defer wrong.Close()
	if err := tlsRoundTrip(ctx, wrong); err == nil || !strings.Contains(err.Error(), "certificate verify failed") {
		t.Fatalf("a wrong CA: %v, want certificate verify failed", err)
	}
}
