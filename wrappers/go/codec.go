package cachekit

/*
#include <cachekit/cachekit.h>
*/
import "C"

import (
	"runtime"
	"strings"
	"unsafe"
)

// CheckValue checks that data is exactly one MessagePack document within
// the decode bounds (depth 1024, no overclaim, no trailing bytes): what
// every reader checks before decoding a stored value.
func CheckValue(data []byte) error {
	s := getScratch()
	defer putScratch(s)
	return errorFrom(C.cachekit_msgpack_check_ex(bytesPtr(data), C.size_t(len(data)), 0, &s.err), &s.err)
}

// UnwrapEnvelope opens a ByteStorage envelope (auto mode's stored form)
// and gives its payload and format string, checking it in the protocol's
// retrieve order (InputTooLarge, DeserializationFailed, DecompressionBomb,
// DecompressionFailed, ChecksumMismatch, SizeValidationFailed).
func UnwrapEnvelope(envelope []byte) (data []byte, format string, err error) {
	s := getScratch()
	defer putScratch(s)
	f := getScratch() // for the format string
	defer putScratch(f)
	rc := C.cachekit_envelope_unwrap_ex(&s.buf, &f.buf, bytesPtr(envelope), C.size_t(len(envelope)), &s.err)
	if err := errorFrom(rc, &s.err); err != nil {
		return nil, "", err
	}
	return s.bytes(), f.string(), nil
}

// DecryptWithKey opens nonce || ciphertext || tag with a derived 32-byte
// AES-256-GCM key and the AAD it was sealed with.
func DecryptWithKey(key, aad, ciphertext []byte) ([]byte, error) {
	if len(key) != C.CACHEKIT_KEY_SIZE {
		return nil, invalidf("a derived key is %d bytes, not %d", C.CACHEKIT_KEY_SIZE, len(key))
	}
	s := getScratch()
	defer putScratch(s)
	rc := C.cachekit_crypto_decrypt_ex(&s.buf, (*C.uchar)(unsafe.Pointer(&key[0])), bytesPtr(aad), C.size_t(len(aad)),
		bytesPtr(ciphertext), C.size_t(len(ciphertext)), &s.err)
	if err := errorFrom(rc, &s.err); err != nil {
		return nil, err
	}
	return s.bytes(), nil
}

// Keyring is a current master key plus up to 3 decrypt-only previous keys,
// for opening values sealed by any SDK. Safe for concurrent use.
type Keyring struct {
	gate *gate
	h    *C.cachekit_keyring
}

// NewKeyring makes a keyring from hex master keys (64 hex digits each).
func NewKeyring(currentHex string, previousHex ...string) (*Keyring, error) {
	cur, err := cString("master key", currentHex)
	if err != nil {
		return nil, err
	}
	for _, p := range previousHex {
		if strings.Contains(p, ",") {
			return nil, invalidf("a previous key holds a comma")
		}
	}
	prev, err := cString("previous keys", strings.Join(previousHex, ","))
	if err != nil {
		return nil, err
	}
	defer wipe(cur)
	defer wipe(prev)
	var h *C.cachekit_keyring
	cerr := newCError()
	if err := errorFrom(C.cachekit_keyring_new_ex(&h, charPtr(cur), charPtr(prev), &cerr), &cerr); err != nil {
		return nil, err
	}
	k := &Keyring{gate: newGate(), h: h}
	runtime.SetFinalizer(k, func(*Keyring) { reportLeakOf("Keyring") })
	return k, nil
}

func wipe(b []byte) {
	for i := range b {
		b[i] = 0
	}
}

// Close frees the keyring (idempotent).
func (k *Keyring) Close() error {
	if k.gate.close() {
		C.cachekit_keyring_free(k.h)
		runtime.SetFinalizer(k, nil)
	}
	return nil
}

// Decrypt opens nonce || ciphertext || tag for tenant ("" = "default").
// With a 16-byte fingerprint only the key whose derived fingerprint
// matches is tried; without one the current key, then each previous key.
// keyIndex is the key that opened it (0 = current).
func (k *Keyring) Decrypt(tenant string, fingerprint, aad, ciphertext []byte) (plaintext []byte, keyIndex int, err error) {
	if fingerprint != nil && len(fingerprint) != C.CACHEKIT_FINGERPRINT_SIZE {
		return nil, 0, invalidf("a fingerprint is %d bytes, not %d", C.CACHEKIT_FINGERPRINT_SIZE, len(fingerprint))
	}
	var ct []byte
	if tenant != "" {
		if ct, err = cString("tenant", tenant); err != nil {
			return nil, 0, err
		}
	}
	var idx C.int
	var fp *C.uchar
	if fingerprint != nil {
		fp = (*C.uchar)(unsafe.Pointer(&fingerprint[0]))
	}
	err = withScratch(k.gate, func(s *scratch) error {
		rc := C.cachekit_keyring_decrypt_ex(k.h, &s.buf, &idx, charPtr(ct), fp, bytesPtr(aad), C.size_t(len(aad)),
			bytesPtr(ciphertext), C.size_t(len(ciphertext)), &s.err)
		if err := errorFrom(rc, &s.err); err != nil {
			return err
		}
		plaintext = s.bytes()
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	return plaintext, int(idx), nil
}
