package cachekit

/*
#include <cachekit/cachekit.h>
*/
import "C"

// InteropKey is the interop/v1 key "{ns}:{op}:{blake2b256 of the canonical
// args}" that every CacheKit SDK computes for the same call. args is the
// MessagePack array of the call's bound arguments in any valid encoding;
// the core canonicalises it (sorted map keys, shortest widths, integral
// floats as ints). Bad segments are ErrInvalid (InvalidSegment); values the
// protocol refuses are ErrUnsupported.
func InteropKey(ns, op string, args []byte) (string, error) {
	cns, err := cString("namespace", ns)
	if err != nil {
		return "", err
	}
	cop, err := cString("operation", op)
	if err != nil {
		return "", err
	}
	s := getScratch()
	defer putScratch(s)
	rc := C.cachekit_key_interop_ex(&s.buf, nil, charPtr(cns), charPtr(cop), bytesPtr(args), C.size_t(len(args)), &s.err)
	if err := errorFrom(rc, &s.err); err != nil {
		return "", err
	}
	return s.string(), nil
}

// CanonicalValue re-encodes one MessagePack value canonically (the
// interop/v1 value profile: sorted map keys, shortest widths, floats kept).
func CanonicalValue(doc []byte) ([]byte, error) {
	return canonical(doc, C.CACHEKIT_PROFILE_VALUE)
}

// CanonicalArgs re-encodes an argument array as InteropKey hashes it.
func CanonicalArgs(args []byte) ([]byte, error) {
	return canonical(args, C.CACHEKIT_PROFILE_ARGS)
}

func canonical(doc []byte, profile C.int) ([]byte, error) {
	s := getScratch()
	defer putScratch(s)
	if err := s.canonical(doc, profile); err != nil {
		return nil, err
	}
	return s.bytes(), nil
}

// canonical writes doc's canonical form into the scratch's buffer.
func (s *scratch) canonical(doc []byte, profile C.int) error {
	rc := C.cachekit_msgpack_canonical_ex(&s.buf, bytesPtr(doc), C.size_t(len(doc)), profile, &s.err)
	return errorFrom(rc, &s.err)
}
