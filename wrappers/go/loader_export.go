package cachekit

/*
#include <cachekit/cachekit.h>
*/
import "C"

import (
	"runtime/cgo"
	"strings"
	"unsafe"
)

// goCachekitLoader is the C loader of every GetOrLoad flight. It runs the
// Go loader and never lets a panic unwind into C: the panic is kept in the
// loadCall and re-panicked by the callers after the C call returned.
//
//export goCachekitLoader
func goCachekitLoader(load *C.cachekit_load, payload unsafe.Pointer) C.int {
	lc := cgo.Handle(uintptr(payload)).Value().(*loadCall)
	v, err, p := callLoader(lc.ctx, lc.load)
	cerr := newCError()
	switch {
	case p != nil:
		lc.panic = p
		setLoadError(load, "the Go loader panicked", &cerr)
		return 1
	case err != nil:
		lc.err = err
		setLoadError(load, err.Error(), &cerr)
		return 1
	}
	if rc := C.cachekit_load_set_value_ex(load, bytesPtr(v), C.size_t(len(v)), &cerr); rc != C.CACHEKIT_OK {
		lc.err = errorFrom(rc, &cerr)
		return 1
	}
	return 0
}

func setLoadError(load *C.cachekit_load, msg string, cerr *C.cachekit_error) {
	b, _ := cString("message", strings.ReplaceAll(msg, "\x00", "\\0"))
	C.cachekit_load_set_error_ex(load, charPtr(b), cerr)
}
