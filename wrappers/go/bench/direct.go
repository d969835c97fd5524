package main

/*
#cgo pkg-config: cachekit
#include <stdlib.h>
#include <cachekit/cachekit.h>

static cachekit_cache *direct_new_l1(void) {
    cachekit_cache_options o;
    cachekit_error err;
    err.struct_size = sizeof err;
    if (cachekit_cache_options_init_ex(&o, sizeof o, &err) != CACHEKIT_OK) return NULL;
    o.backend_url = "none";
    o.format = CACHEKIT_FORMAT_INTEROP;
    cachekit_cache *c = NULL;
    if (cachekit_cache_new_ex(&c, &o, &err) != CACHEKIT_OK) return NULL;
    return c;
}
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// directCache is the G1 anchor: the C cache called directly, one cgo call
// per hit with a key prepared once, the least a binding can do.
type directCache struct {
	h   *C.cachekit_cache
	ns  *C.char
	err C.cachekit_error
	buf C.cachekit_buf
}

func newDirectCache(ns string) *directCache {
	h := C.direct_new_l1()
	if h == nil {
		panic("direct cache: cachekit_cache_new_ex failed")
	}
	d := &directCache{h: h, ns: C.CString(ns)}
	d.err.struct_size = C.size_t(unsafe.Sizeof(d.err))
	return d
}

func (d *directCache) put(key string, value []byte) {
	ck := C.CString(key)
	defer C.free(unsafe.Pointer(ck))
	cv := C.CBytes(value)
	defer C.free(cv)
	if rc := C.cachekit_cache_put_ex(d.h, d.ns, unsafe.Pointer(ck), C.size_t(len(key)), cv, C.size_t(len(value)),
		C.CACHEKIT_TTL_DEFAULT, &d.err); rc != C.CACHEKIT_OK {
		panic(fmt.Sprintf("direct put: %d", rc))
	}
}

// get copies the value into Go memory, as any binding must before the
// decoder reads it. key is C memory prepared by the caller.
func (d *directCache) get(key unsafe.Pointer, keyLen int) []byte {
	if rc := C.cachekit_cache_get_ex(d.h, &d.buf, nil, d.ns, key, C.size_t(keyLen), &d.err); rc != C.CACHEKIT_OK {
		panic(fmt.Sprintf("direct get: %d", rc))
	}
	return C.GoBytes(unsafe.Pointer(d.buf.ptr), C.int(d.buf.size))
}

func (d *directCache) close() {
	C.cachekit_buf_dispose(&d.buf)
	C.cachekit_cache_free(d.h)
	C.free(unsafe.Pointer(d.ns))
}

// cKey is key in C memory (freed by the caller with C.free).
func cKey(key string) unsafe.Pointer { return unsafe.Pointer(C.CString(key)) }

func freeC(p unsafe.Pointer) { C.free(p) }
