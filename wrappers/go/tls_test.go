package cachekit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// makeTLSCerts makes throwaway CAs "ca" and "other-ca", a server certificate
// for 127.0.0.1 and localhost and a client certificate from "ca" in dir with
// the openssl CLI (as tests/redis/tls_certs.hpp does), or skips the test.
func makeTLSCerts(t *testing.T, dir string) {
	t.Helper()
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("the openssl CLI is not installed: skipping the TLS tests")
	}
	key := []string{"-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"}
	run := func(args ...string) {
		cmd := exec.Command("openssl", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Skipf("openssl %s: %v\n%s", args[0], err, out)
		}
	}
	for _, ca := range []string{"ca", "other-ca"} {
		run(append(append([]string{"req", "-x509"}, key...), "-keyout", ca+".key", "-out", ca+".crt", "-days", "2",
			"-subj", "/CN="+ca)...)
	}
	leaf := func(name, ext string) {
		if err := os.WriteFile(filepath.Join(dir, name+".ext"), []byte(ext+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		run(append(append([]string{"req"}, key...), "-keyout", name+".key", "-out", name+".csr", "-subj", "/CN="+name)...)
		run("x509", "-req", "-in", name+".csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-days", "2",
			"-out", name+".crt", "-extfile", name+".ext")
	}
	leaf("server", "subjectAltName=DNS:localhost,IP:127.0.0.1")
	leaf("client", "extendedKeyUsage=clientAuth")
}

// tlsRedis is a redis-server whose TLS port wants client certificates.
type tlsRedis struct {
	certs   string
	tlsPort int
	server  *redisServer // its plain port, for raw commands
}

func startTLSRedis(t *testing.T) *tlsRedis {
	t.Helper()
	if findRedisServer() == "" {
		t.Skip("redis-server is not installed: skipping the TLS tests")
	}
	certs := t.TempDir()
	makeTLSCerts(t, certs)
	port := freePort(t)
	f := func(n string) string { return filepath.Join(certs, n) }
	server := startRedisWith(t, "--tls-port", fmt.Sprint(port), "--tls-cert-file", f("server.crt"), "--tls-key-file",
		f("server.key"), "--tls-ca-cert-file", f("ca.crt"), "--tls-auth-clients", "yes")
	return &tlsRedis{certs: certs, tlsPort: port, server: server}
}

func (s *tlsRedis) file(n string) string { return filepath.Join(s.certs, n) }
func (s *tlsRedis) url() string          { return fmt.Sprintf("redis://127.0.0.1:%d", s.tlsPort) }

// client: TLS on a redis:// URL with the client certificate and the CA ca.
func (s *tlsRedis) client(ca string) TLSOptions {
	return TLSOptions{SSL: true, CACerts: s.file(ca), Certfile: s.file("client.crt"), Keyfile: s.file("client.key")}
}

func tlsRoundTrip(ctx context.Context, b *Backend) error {
	if err := b.Set(ctx, []byte("tls:k"), []byte("v"), 0); err != nil {
		return err
	}
	v, err := b.Get(ctx, []byte("tls:k"))
	if err == nil && string(v) != "v" {
		err = fmt.Errorf("got %q", v)
	}
	return err
}

func TestTLSOptionsBackend(t *testing.T) {
	s := startTLSRedis(t)
	ctx := context.Background()
	b, err := OpenBackend(ctx, s.url(), BackendOptions{FailClosed: true, TLS: s.client("ca.crt")})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := tlsRoundTrip(ctx, b); err != nil {
		t.Fatalf("over TLS: %v", err)
	}

	wrong, err := OpenBackend(ctx, s.url(), BackendOptions{FailClosed: true, TLS: s.client("other-ca.crt")})
	if err != nil {
		t.Fatal(err)
	}
	defer wrong.Close()
	if err := tlsRoundTrip(ctx, wrong); err == nil || !strings.Contains(err.Error(), "certificate verify failed") {
		t.Fatalf("a wrong CA: %v, want certificate verify failed", err)
	}

	// The URL's ssl_ca_certs wins over the option's (wrong) CA, as in redis-py.
	rediss := fmt.Sprintf("rediss://127.0.0.1:%d?ssl_ca_certs=%s", s.tlsPort, s.file("ca.crt"))
	won, err := OpenBackend(ctx, rediss, BackendOptions{FailClosed: true, TLS: s.client("other-ca.crt")})
	if err != nil {
		t.Fatal(err)
	}
	defer won.Close()
	if err := tlsRoundTrip(ctx, won); err != nil {
		t.Fatalf("URL parameter over the option: %v", err)
	}

	no := false
	loose, err := OpenBackend(ctx, s.url(), BackendOptions{FailClosed: true, TLS: TLSOptions{SSL: true,
		CertReqs: "none", CheckHostname: &no, Certfile: s.file("client.crt"), Keyfile: s.file("client.key")}})
	if err != nil {
		t.Fatal(err)
	}
	defer loose.Close()
	if err := tlsRoundTrip(ctx, loose); err != nil {
		t.Fatalf("CertReqs none: %v", err)
	}
}

func TestTLSOptionsCache(t *testing.T) {
	s := startTLSRedis(t)
	ctx := context.Background()
	c, err := New(ctx, Options{BackendURL: s.url(), DisableL1: true, FailClosed: true, TLS: s.client("ca.crt")})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	value := []byte{0xa2, 'h', 'i'} // MessagePack "hi"
	if err := c.Set(ctx, "tls", "k", value, 0); err != nil {
		t.Fatalf("Set over TLS: %v", err)
	}
	got, err := c.Get(ctx, "tls", "k")
	if err != nil || string(got) != string(value) {
		t.Fatalf("Get over TLS: %q %v", got, err)
	}
}

func TestTLSOptionsRefused(t *testing.T) {
	ctx := context.Background()
	invalid := func(what string, err error, part string) {
		t.Helper()
		var e *Error
		if !errors.As(err, &e) || e.Code != StatusInvalidArgument || !strings.Contains(e.Message, part) {
			t.Errorf("%s: %v, want ErrInvalid with %q", what, err, part)
		}
	}
	_, err := OpenBackend(ctx, "memory://", BackendOptions{TLS: TLSOptions{SSL: true}})
	invalid("memory://", err, "apply to Redis URLs only")
	_, err = OpenBackend(ctx, "file://"+t.TempDir(), BackendOptions{TLS: TLSOptions{CACerts: "/x.pem"}})
	invalid("file://", err, "apply to Redis URLs only")
	_, err = OpenBackend(ctx, "redis://127.0.0.1:1", BackendOptions{TLS: TLSOptions{CACerts: "/x.pem"}})
	invalid("redis:// without SSL", err, "set tls = 1 or use rediss://")
	_, err = OpenBackend(ctx, "redis-cluster://127.0.0.1:7000", BackendOptions{TLS: TLSOptions{CACerts: "/x.pem"}})
	invalid("cluster without SSL", err, "set tls = 1 or use rediss-cluster://")
	_, err = OpenBackend(ctx, "redis://127.0.0.1:1", BackendOptions{TLS: TLSOptions{SSL: true, CACerts: "/no/such/ca.pem"}})
	invalid("missing CA", err, "/no/such/ca.pem")
	_, err = OpenBackend(ctx, "redis://127.0.0.1:1", BackendOptions{TLS: TLSOptions{SSL: true, CertReqs: "sometimes"}})
	invalid("CertReqs", err, "CertReqs")
	_, err = New(ctx, Options{BackendURL: "memory://", TLS: TLSOptions{SSL: true}})
	invalid("cache on memory://", err, "apply to Redis URLs only")
	b, err := OpenBackend(ctx, "memory://", BackendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	_, err = New(ctx, Options{Backend: b, TLS: TLSOptions{SSL: true}})
	invalid("borrowed backend", err, "borrowed")
}
