package cachekit

/*
#include <stdlib.h>
#include <cachekit/cachekit.h>
*/
import "C"

import "strings"

// TLSOptions are redis-py's ssl* settings for a Redis backend
// (cachekit_backend_options' tls_* fields); the zero value asks for nothing.
// They apply to redis:// and rediss:// only: set for any other backend they
// are ErrInvalid, and on a redis:// URL they need SSL. A rediss:// URL's own
// ssl_* parameters win over them, as in redis-py's from_url.
type TLSOptions struct {
	// SSL: TLS even for a redis:// URL (rediss:// always is).
	SSL bool
	// CertReqs is redis-py's ssl_cert_reqs: "required" (also ""), "optional"
	// (verifies too) or "none" (accepts any certificate).
	CertReqs string
	// CheckHostname: the certificate must name the URL's host (nil: when
	// CertReqs is "required").
	CheckHostname *bool
	// CACerts is a PEM file of the CAs to trust ("" with CAPath "": the system's).
	CACerts string
	// CAPath is a hashed (c_rehash) directory of CAs to trust.
	CAPath string
	// Certfile is the client certificate chain (PEM), for mutual TLS.
	Certfile string
	// Keyfile is its key ("": in Certfile).
	Keyfile string
}

// apply writes t into bo; str makes a C string that lives until the open.
func (t *TLSOptions) apply(what string, bo *C.cachekit_backend_options, str func(string) *C.char) error {
	for name, s := range map[string]string{"CertReqs": t.CertReqs, "CACerts": t.CACerts, "CAPath": t.CAPath,
		"Certfile": t.Certfile, "Keyfile": t.Keyfile} {
		if strings.IndexByte(s, 0) >= 0 {
			return invalidf("%s.TLS.%s holds a NUL byte", what, name)
		}
	}
	if t.SSL {
		bo.tls = 1
	}
	switch strings.ToLower(t.CertReqs) {
	case "", "required":
		bo.tls_cert_reqs = C.CACHEKIT_TLS_CERT_REQUIRED
	case "optional":
		bo.tls_cert_reqs = C.CACHEKIT_TLS_CERT_OPTIONAL
	case "none":
		bo.tls_cert_reqs = C.CACHEKIT_TLS_CERT_NONE
	default:
		return invalidf("%s.TLS.CertReqs %q is not \"required\", \"optional\" or \"none\"", what, t.CertReqs)
	}
	if t.CheckHostname != nil {
		if *t.CheckHostname {
			bo.tls_check_hostname = C.CACHEKIT_TLS_CHECK_HOSTNAME_YES
		} else {
			bo.tls_check_hostname = C.CACHEKIT_TLS_CHECK_HOSTNAME_NO
		}
	}
	path := func(s string) *C.char {
		if s == "" {
			return nil
		}
		return str(s)
	}
	bo.tls_ca_certs = path(t.CACerts)
	bo.tls_ca_path = path(t.CAPath)
	bo.tls_certfile = path(t.Certfile)
	bo.tls_keyfile = path(t.Keyfile)
	return nil
}
