package cachekit

/*
#include <stdlib.h>
#include <string.h>
#include <cachekit/cachekit.h>
*/
import "C"

import (
	"math"
	"strings"
	"time"
	"unsafe"
)

// Format is how a cache stores its values in L2.
type Format int

const (
	// FormatInterop (the default for Go): interop/v1, plain MessagePack (or
	// its ciphertext) that every CacheKit SDK reads.
	FormatInterop Format = iota
	// FormatAuto: the reference Python SDK's stored form (CK v3 frame).
	FormatAuto
	// FormatPlain: FormatInterop's plain MessagePack under any key, KeyPrefix
	// allowed: cachekit-rs's get/set under a client .namespace(ns) is
	// FormatPlain with KeyPrefix ns + ":" (for Get/Set; Wrap's interop keys
	// want FormatInterop).
	FormatPlain
)

// L1Admission is what the L1 keeps when its budget is full.
type L1Admission int

const (
	// L1AdmissionLRU evicts the least recently used entry: the default, where
	// CACHEKIT_L1_ADMISSION=lru|tinylfu may choose instead.
	L1AdmissionLRU L1Admission = C.CACHEKIT_L1_ADMISSION_LRU
	// L1AdmissionTinyLFU (W-TinyLFU): an entry leaving a small window replaces
	// the least recently used one only if it was read more often, so a hot
	// set survives scans.
	L1AdmissionTinyLFU L1Admission = C.CACHEKIT_L1_ADMISSION_TINYLFU
)

// NoExpiry as a TTL stores a value that never expires; a TTL of 0 means the
// cache's DefaultTTL.
const NoExpiry time.Duration = -1

// Options configure New. The zero value is an interop cache with L1 and the
// L2 taken from the environment (CACHEKIT_REDIS_URL, REDIS_URL,
// CACHEKIT_FILE_CACHE_DIR) or else the embedded default, a per-user
// directory (see docs/cache.md).
type Options struct {
	// BackendURL: "" = the environment or the embedded default; "none" = L1
	// only; redis://host:port/db, unix:///path.sock?db=N, file:///dir,
	// memory://.
	BackendURL string
	// Backend, when set, is used instead of BackendURL. It is borrowed: keep
	// it open until the cache is closed.
	Backend *Backend
	// DisableL1 turns the in-process tier off.
	DisableL1 bool
	// L1MaxBytes is the L1 byte budget (0: CACHEKIT_L1_MAX_SIZE_MB or 100 MiB).
	L1MaxBytes uint64
	// L1Admission is the L1's eviction policy (L1AdmissionLRU by default).
	L1Admission L1Admission
	// DefaultTTL is the TTL of writes that pass 0 (0 here: no expiry).
	DefaultTTL time.Duration
	// SWR serves stale L1 hits while one caller refreshes them (GetOrLoad).
	SWR bool
	// SWRThresholdRatio: a hit older than TTL x ratio is stale (0: 0.5).
	SWRThresholdRatio float64
	// Format is the stored form; FormatInterop by default.
	Format Format
	// Integrity: the auto-mode envelope checksum (FormatAuto only); nil = on.
	Integrity *bool
	// Encryption seals every stored value (AES-256-GCM). It needs a master
	// key: MasterKeyHex, or CACHEKIT_MASTER_KEY when MasterKeyHex is "".
	Encryption bool
	// MasterKeyHex is 64 hex digits.
	MasterKeyHex string
	// PreviousKeysHex are up to 3 decrypt-only keys (rotation).
	PreviousKeysHex []string
	// Tenant names the derived keys ("" = "default").
	Tenant string
	// KeyPrefix is prepended to every L2 key, e.g. "t:default:" (FormatAuto
	// only: with FormatInterop, New refuses it with ErrInvalid, since interop
	// keys carry no prefix).
	KeyPrefix string
	// FailClosed returns backend errors and refused entries as errors
	// instead of degrading to misses (false: the library default, fail-open).
	FailClosed bool
	// MaxValueBytes bounds stored values (0: CACHEKIT_MAX_VALUE_SIZE or 100 MiB).
	MaxValueBytes uint64
	// LoadTimeout bounds how long a C-level single-flight waiter waits (0: 30 s).
	LoadTimeout time.Duration
	// CrossProcessLock makes one process compute a key, through the backend's lock.
	CrossProcessLock bool
	// CommandTimeout is every backend call's deadline (0: 250 ms).
	CommandTimeout time.Duration
	// ConnectTimeout bounds a Redis connect (0: 500 ms).
	ConnectTimeout time.Duration
	// BreakerDisabled turns the backend's circuit breaker off.
	BreakerDisabled bool
	// TLS: Redis over TLS for the backend opened from BackendURL (redis-py's
	// ssl* settings; see TLSOptions). Not for a borrowed Backend.
	TLS TLSOptions
}

// onOff maps a Go bool to the C three-way switch: false keeps the default.
func onOff(b bool, offExplicit bool) C.int {
	switch {
	case b:
		return C.CACHEKIT_ON
	case offExplicit:
		return C.CACHEKIT_OFF
	default:
		return C.CACHEKIT_DEFAULT
	}
}

func millis(what string, d time.Duration) (C.uint32_t, error) {
	if d < 0 {
		return 0, invalidf("%s is negative", what)
	}
	ms := (d + time.Millisecond - 1) / time.Millisecond
	if ms > math.MaxUint32 {
		return 0, invalidf("%s is too long", what)
	}
	return C.uint32_t(ms), nil
}

// ttlSeconds maps a Go TTL to the C one: 0 = the cache's default,
// NoExpiry = none, > 0 = seconds.
func ttlSeconds(d time.Duration) (C.double, error) {
	switch {
	case d == 0:
		return C.CACHEKIT_TTL_DEFAULT, nil
	case d == NoExpiry:
		return 0, nil
	case d < 0:
		return 0, invalidf("TTL %v is negative (use 0 for the default, NoExpiry for none)", d)
	}
	return C.double(d.Seconds()), nil
}

// cOptions is the C form of Options, in C memory (it points to the backend
// options and to strings, and Go memory must not hold Go pointers passed to C).
type cOptions struct {
	opts    *C.cachekit_cache_options
	backend *C.cachekit_backend_options
	strs    []*C.char
}

func (o *cOptions) str(s string) *C.char {
	p := C.CString(s)
	o.strs = append(o.strs, p)
	return p
}

// free wipes the strings (a master key is among them) and frees them.
func (o *cOptions) free() {
	for _, p := range o.strs {
		C.memset(unsafe.Pointer(p), 0, C.strlen(p))
		C.free(unsafe.Pointer(p))
	}
	C.free(unsafe.Pointer(o.opts))
	C.free(unsafe.Pointer(o.backend))
}

func (opts *Options) toC() (*cOptions, error) {
	for what, s := range map[string]string{"BackendURL": opts.BackendURL, "MasterKeyHex": opts.MasterKeyHex,
		"Tenant": opts.Tenant, "KeyPrefix": opts.KeyPrefix} {
		if strings.IndexByte(s, 0) >= 0 {
			return nil, invalidf("Options.%s holds a NUL byte", what)
		}
	}
	for _, k := range opts.PreviousKeysHex {
		if strings.ContainsAny(k, ",\x00") {
			return nil, invalidf("Options.PreviousKeysHex holds a comma or NUL byte inside a key")
		}
	}
	if opts.Format != FormatInterop && opts.Format != FormatAuto && opts.Format != FormatPlain {
		return nil, invalidf("Options.Format %d is not FormatInterop, FormatAuto or FormatPlain", opts.Format)
	}
	// The protocol's interop keys carry no prefix: a prefixed key is one no
	// other SDK reads, so the configuration is refused (as the reference
	// SDK refuses it) rather than silently sharing nothing.
	if opts.Format == FormatInterop && opts.KeyPrefix != "" {
		return nil, invalidf("Options.KeyPrefix %q with FormatInterop: interop keys carry no prefix, so no other SDK would read these entries; drop KeyPrefix, or use FormatPlain (or FormatAuto)", opts.KeyPrefix)
	}
	if opts.DefaultTTL < 0 {
		return nil, invalidf("Options.DefaultTTL is negative")
	}
	// A borrowed handle keeps the options it was opened with: these would be ignored.
	if opts.Backend != nil && opts.TLS != (TLSOptions{}) {
		return nil, invalidf("Options.TLS with a borrowed Options.Backend: set BackendOptions.TLS when opening it")
	}
	loadMs, err := millis("Options.LoadTimeout", opts.LoadTimeout)
	if err != nil {
		return nil, err
	}
	cmdMs, err := millis("Options.CommandTimeout", opts.CommandTimeout)
	if err != nil {
		return nil, err
	}
	connMs, err := millis("Options.ConnectTimeout", opts.ConnectTimeout)
	if err != nil {
		return nil, err
	}

	o := &cOptions{
		opts:    (*C.cachekit_cache_options)(C.calloc(1, C.sizeof_cachekit_cache_options)),
		backend: (*C.cachekit_backend_options)(C.calloc(1, C.sizeof_cachekit_backend_options)),
	}
	cerr := newCError()
	if err := errorFrom(C.cachekit_cache_options_init_ex(o.opts, C.sizeof_cachekit_cache_options, &cerr), &cerr); err != nil {
		o.free()
		return nil, err
	}
	if err := errorFrom(C.cachekit_backend_options_init_ex(o.backend, C.sizeof_cachekit_backend_options, &cerr), &cerr); err != nil {
		o.free()
		return nil, err
	}
	c := o.opts
	switch {
	case opts.Backend != nil:
		c.backend = opts.Backend.h
	case opts.BackendURL != "":
		c.backend_url = o.str(opts.BackendURL)
	}
	switch opts.Format {
	case FormatInterop:
		c.format = C.CACHEKIT_FORMAT_INTEROP
	case FormatPlain:
		c.format = C.CACHEKIT_FORMAT_PLAIN
	default:
		c.format = C.CACHEKIT_FORMAT_AUTO
	}
	if opts.Integrity != nil {
		c.integrity = onOff(*opts.Integrity, true)
	}
	c.encryption = onOff(opts.Encryption, true)
	if opts.MasterKeyHex != "" {
		c.master_key_hex = o.str(opts.MasterKeyHex)
	}
	if len(opts.PreviousKeysHex) > 0 {
		c.previous_keys_hex = o.str(strings.Join(opts.PreviousKeysHex, ","))
	}
	if opts.Tenant != "" {
		c.tenant = o.str(opts.Tenant)
	}
	if opts.KeyPrefix != "" {
		c.key_prefix = o.str(opts.KeyPrefix)
	}
	c.default_ttl_seconds = C.double(opts.DefaultTTL.Seconds())
	c.l1 = onOff(!opts.DisableL1, true)
	c.l1_max_bytes = C.uint64_t(opts.L1MaxBytes)
	c.l1_admission = C.int(opts.L1Admission) // the core refuses unknown values
	c.swr = onOff(opts.SWR, true)
	c.swr_threshold_ratio = C.double(opts.SWRThresholdRatio)
	c.fail_closed = onOff(opts.FailClosed, false)
	c.max_value_bytes = C.uint64_t(opts.MaxValueBytes)
	c.load_timeout_ms = loadMs
	c.cross_process_lock = onOff(opts.CrossProcessLock, false)
	o.backend.command_timeout_ms = cmdMs
	o.backend.connect_timeout_ms = connMs
	if opts.BreakerDisabled {
		o.backend.breaker_disabled = 1
	}
	if err := opts.TLS.apply("Options", o.backend, o.str); err != nil {
		o.free()
		return nil, err
	}
	c.backend_options = o.backend
	return o, nil
}
