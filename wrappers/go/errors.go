package cachekit

/*
#include <cachekit/cachekit.h>
*/
import "C"

import (
	"fmt"
)

// Status is a libcachekit status code (cachekit_status in the C header:
// pinned, negative, append-only).
type Status int

// The status codes of the C header, by name.
const (
	StatusOK                = Status(C.CACHEKIT_OK)
	StatusNotFound          = Status(C.CACHEKIT_ENOTFOUND)
	StatusInvalidArgument   = Status(C.CACHEKIT_EINVAL)
	StatusOutOfMemory       = Status(C.CACHEKIT_ENOMEM)
	StatusCorrupt           = Status(C.CACHEKIT_ECORRUPT)
	StatusInputTooLarge     = Status(C.CACHEKIT_ETOOBIG)
	StatusBackendError      = Status(C.CACHEKIT_EBACKEND)
	StatusTimeout           = Status(C.CACHEKIT_ETIMEOUT)
	StatusUserError         = Status(C.CACHEKIT_EUSER)
	StatusDeserialization   = Status(C.CACHEKIT_EDESERIALIZE)
	StatusDecompressionBomb = Status(C.CACHEKIT_EBOMB)
	StatusDecompression     = Status(C.CACHEKIT_EDECOMPRESS)
	StatusChecksumMismatch  = Status(C.CACHEKIT_ECHECKSUM)
	StatusSizeValidation    = Status(C.CACHEKIT_ESIZE)
	StatusDepthExceeded     = Status(C.CACHEKIT_EDEPTH)
	StatusOverclaim         = Status(C.CACHEKIT_EOVERCLAIM)
	StatusTruncated         = Status(C.CACHEKIT_ETRUNCATED)
	StatusTrailingBytes     = Status(C.CACHEKIT_ETRAILING)
	StatusUnsupportedType   = Status(C.CACHEKIT_EUNSUPPORTED)
	StatusInvalidSegment    = Status(C.CACHEKIT_ESEGMENT)
	StatusInvalidKey        = Status(C.CACHEKIT_EKEY)
	StatusInvalidCiphertext = Status(C.CACHEKIT_ECIPHERTEXT)
	StatusAuthentication    = Status(C.CACHEKIT_EAUTH)
	StatusKeyNotFound       = Status(C.CACHEKIT_EKEYNOTFOUND)
	StatusInvalidFrame      = Status(C.CACHEKIT_EFRAME)
	StatusCryptoUnavailable = Status(C.CACHEKIT_ECRYPTO_UNAVAILABLE)
	StatusNonceExhausted    = Status(C.CACHEKIT_ENONCE)
	StatusInternal          = Status(C.CACHEKIT_EINTERNAL)
	StatusBusy              = Status(C.CACHEKIT_EBUSY)
	StatusDeadlock          = Status(C.CACHEKIT_EDEADLOCK)
	StatusCircuitOpen       = Status(C.CACHEKIT_ECIRCUIT_OPEN)
)

// Name is the status's stable name ("InvalidArgument", "Overclaim", ...),
// the one `cachekit codec` and every wrapper report.
func (s Status) Name() string { return C.GoString(C.cachekit_error_name(C.int(s))) }

// Error is a failure of one libcachekit call: its status, the status's
// name and the message of that same call (never another goroutine's).
type Error struct {
	Code    Status
	Name    string
	Message string
}

func (e *Error) Error() string {
	if e.Message == "" {
		return "cachekit: " + e.Name
	}
	return "cachekit: " + e.Name + ": " + e.Message
}

// Is makes errors.Is(err, ErrBackend) and the like true for every status of
// the sentinel's family.
func (e *Error) Is(target error) bool {
	f, ok := target.(*familyError)
	if !ok {
		return false
	}
	for _, c := range f.codes {
		if c == e.Code {
			return true
		}
	}
	return false
}

// familyError is a sentinel: a group of statuses, for errors.Is.
type familyError struct {
	text  string
	codes []Status
}

func (f *familyError) Error() string { return "cachekit: " + f.text }

func family(text string, codes ...Status) error { return &familyError{text: text, codes: codes} }

// Sentinel errors for errors.Is. Every status of the C header belongs to at
// least one; some to two (a broader family and their own).
var (
	// ErrNotFound: a miss (Get) or a key/lock that does not exist.
	ErrNotFound = family("not found", StatusNotFound)
	// ErrInvalid: a bad argument, option, key or key segment.
	ErrInvalid = family("invalid argument", StatusInvalidArgument, StatusInvalidKey, StatusInvalidSegment)
	// ErrNoMemory: an allocation failed.
	ErrNoMemory = family("out of memory", StatusOutOfMemory)
	// ErrTooBig: a value or input past its limit (not stored).
	ErrTooBig = family("input too large", StatusInputTooLarge)
	// ErrBackend: the L2 backend failed, refused the call (busy) or its
	// circuit breaker is open.
	ErrBackend = family("backend error", StatusBackendError, StatusCircuitOpen, StatusBusy)
	// ErrCircuitOpen: the backend's breaker is open (also ErrBackend).
	ErrCircuitOpen = family("circuit open", StatusCircuitOpen)
	// ErrBusy: backpressure or a lock held by someone else (also ErrBackend).
	ErrBusy = family("busy", StatusBusy)
	// ErrTimeout: a deadline passed (backend call, single-flight wait).
	ErrTimeout = family("timeout", StatusTimeout)
	// ErrLoadFailed: a loader failed inside the C library (UserError). The
	// Go loader's own error is returned as it is, not as this.
	ErrLoadFailed = family("load failed", StatusUserError)
	// ErrDeadlock: a loader asked its own cache for its own key.
	ErrDeadlock = family("deadlock", StatusDeadlock)
	// ErrCorrupt: stored bytes failed a check (envelope, checksum, size,
	// frame, MessagePack bounds). ErrDecode is the MessagePack subset.
	ErrCorrupt = family("corrupt entry", StatusCorrupt, StatusChecksumMismatch, StatusSizeValidation,
		StatusDecompressionBomb, StatusDecompression, StatusInvalidFrame, StatusDeserialization,
		StatusDepthExceeded, StatusOverclaim, StatusTruncated, StatusTrailingBytes)
	// ErrDecode: MessagePack that is malformed or past the decode bounds.
	ErrDecode = family("malformed MessagePack", StatusDeserialization, StatusDepthExceeded,
		StatusOverclaim, StatusTruncated, StatusTrailingBytes)
	// ErrUnsupported: a value the protocol cannot carry (NaN, non-string
	// map key, ext type, invalid UTF-8).
	ErrUnsupported = family("unsupported type", StatusUnsupportedType)
	// ErrAuthentication: ciphertext that no key opens (tampered or foreign).
	ErrAuthentication = family("authentication failed", StatusAuthentication)
	// ErrCrypto: any encryption failure (ErrAuthentication included).
	ErrCrypto = family("encryption error", StatusAuthentication, StatusInvalidCiphertext,
		StatusKeyNotFound, StatusCryptoUnavailable, StatusNonceExhausted)
	// ErrInternal: a bug in libcachekit; please report it.
	ErrInternal = family("internal error", StatusInternal)
	// ErrClosed: the Cache or Backend was closed. No C status: Go's own.
	ErrClosed = family("closed")
)

// errorFrom turns a status and the call's cachekit_error into a Go error
// (nil for CACHEKIT_OK).
func errorFrom(rc C.int, cerr *C.cachekit_error) error {
	if rc == C.CACHEKIT_OK {
		return nil
	}
	e := &Error{Code: Status(rc)}
	if Status(cerr.code) == e.Code {
		e.Name = C.GoString(&cerr.name[0])
		e.Message = C.GoString(&cerr.message[0])
	}
	if e.Name == "" {
		e.Name = e.Code.Name()
	}
	return e
}

// invalidf is an InvalidArgument raised by the binding itself.
func invalidf(format string, args ...any) error {
	return &Error{Code: StatusInvalidArgument, Name: StatusInvalidArgument.Name(),
		Message: fmt.Sprintf(format, args...)}
}
