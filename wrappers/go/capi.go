package cachekit

/*
// Bundled (default): the core is compiled from internal/core (bundled.go);
// its headers are here. With -tags cachekit_system: the installed library,
// and pkg-config's failure shows the hint in its command line.
#cgo !cachekit_system CFLAGS: -I${SRCDIR}/internal/core/include -I${SRCDIR}/internal/core/gen
#cgo cachekit_system pkg-config: "--define-variable=cachekit_hint=the cachekit_system build tag links an installed libcachekit: install it with its cachekit.pc, or set PKG_CONFIG_PATH to the directory holding cachekit.pc, or build without the tag to compile the bundled core" cachekit
#include <stdlib.h>
#include <cachekit/cachekit.h>

// The Go loader (loader_export.go). Declared here because a file with
// //export may hold declarations only.
extern int goCachekitLoader(cachekit_load *load, void *payload);

// The Go log handler (log_export.go): cgo declares it with char *, hence the cast.
extern void goCachekitLog(int level, char *event, char *message, void *user_data);

void ck_install_log_handler(void) {
    cachekit_set_log_handler((cachekit_log_handler)goCachekitLog, NULL);
}

// get_or_load with the Go loader; the payload is a runtime/cgo.Handle,
// passed as an integer so no Go pointer crosses the boundary.
int ck_get_or_load(cachekit_cache *cache, cachekit_buf *out, cachekit_lookup *info,
                          const char *ns, const void *key, size_t key_len, double ttl,
                          uintptr_t handle, cachekit_error *err) {
    return cachekit_cache_get_or_load_ex(cache, out, info, ns, key, key_len, ttl,
                                         goCachekitLoader, (void *)handle, err);
}
*/
import "C"

import (
	"strings"
	"unsafe"
)

// newCError is a cachekit_error ready for an `_ex` call.
func newCError() C.cachekit_error {
	return C.cachekit_error{struct_size: C.size_t(unsafe.Sizeof(C.cachekit_error{}))}
}

// bytesPtr is the address of b's first byte (nil for an empty slice): Go
// memory holding no Go pointer, which C may read during the call.
func bytesPtr(b []byte) unsafe.Pointer {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Pointer(&b[0])
}

// stringPtr is the address of s's bytes (nil for "").
func stringPtr(s string) unsafe.Pointer {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Pointer(unsafe.StringData(s))
}

// cString is s with a NUL appended, in Go memory, for a `const char *`
// parameter. A string holding a NUL byte is refused: C would read a
// shorter string and name another namespace or key.
func cString(what, s string) ([]byte, error) {
	if strings.IndexByte(s, 0) >= 0 {
		return nil, invalidf("%s holds a NUL byte", what)
	}
	b := make([]byte, len(s)+1)
	copy(b, s)
	return b, nil
}

func charPtr(b []byte) *C.char {
	if b == nil {
		return nil
	}
	return (*C.char)(unsafe.Pointer(&b[0]))
}
