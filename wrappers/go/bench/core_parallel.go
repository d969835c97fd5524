package main

/*
#cgo pkg-config: cachekit
#cgo LDFLAGS: -lpthread
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <cachekit/cachekit.h>

// G3core: the C core's L1 hits from plain pthreads (no Go runtime, no cgo
// transition), each call as the Go wrapper's hit makes it: cachekit_cache_peek_ex
// with a lookup report into a per-thread buffer, cycling through the keys.
typedef struct {
    cachekit_cache *c;
    const char *ns;
    const char *const *keys;
    const size_t *lens;
    size_t nkeys;
    long iters;
    int failed;
} core_job;

static void *core_hits(void *arg) {
    core_job *j = arg;
    cachekit_buf buf;
    memset(&buf, 0, sizeof buf);
    cachekit_error err;
    err.struct_size = sizeof err;
    for (long i = 0; i < j->iters; i++) {
        cachekit_lookup info;
        memset(&info, 0, sizeof info);
        info.struct_size = sizeof info;
        size_t k = (size_t)i % j->nkeys;
        if (cachekit_cache_peek_ex(j->c, &buf, &info, j->ns, j->keys[k], j->lens[k], &err) != CACHEKIT_OK) {
            j->failed = 1;
            break;
        }
    }
    cachekit_buf_dispose(&buf);
    return NULL;
}

// core_parallel_hits runs iters hits split over threads pthreads; 0 when all hit.
static int core_parallel_hits(cachekit_cache *c, const char *ns, const char *const *keys, const size_t *lens,
                              size_t nkeys, int threads, long iters) {
    pthread_t tid[64];
    core_job jobs[64];
    if (threads < 1 || threads > 64) return -1;
    for (int t = 0; t < threads; t++) {
        jobs[t] = (core_job){c, ns, keys, lens, nkeys, iters / threads + (t < iters % threads), 0};
        if (pthread_create(&tid[t], NULL, core_hits, &jobs[t]) != 0) return -1;
    }
    int failed = 0;
    for (int t = 0; t < threads; t++) {
        pthread_join(tid[t], NULL);
        failed |= jobs[t].failed;
    }
    return failed;
}
*/
import "C"

import (
	"runtime"
	"testing"
	"unsafe"

	cachekit "github.com/libcachekit/libcachekit/wrappers/go"
)

// coreKeys holds G3's 64 keys in C memory, stored in a direct L1 cache.
type coreKeys struct {
	d    *directCache
	keys **C.char
	lens *C.size_t
}

func newCoreKeys() *coreKeys {
	d := newDirectCache(g1Fn.Namespace)
	ptrs := (*[g3Keys]*C.char)(C.malloc(C.size_t(g3Keys) * C.size_t(unsafe.Sizeof((*C.char)(nil)))))
	lens := (*[g3Keys]C.size_t)(C.malloc(C.size_t(g3Keys) * C.size_t(unsafe.Sizeof(C.size_t(0)))))
	for id := 0; id < g3Keys; id++ {
		key, err := cachekit.Key(g1Fn.Namespace, g1Fn.Operation, int64(id))
		must(err)
		value, err := cachekit.EncodeValue(smallUser{ID: int64(id), Name: "Ann Example", Email: "ann@example.com", Active: true})
		must(err)
		d.put(key, value)
		ptrs[id], lens[id] = C.CString(key), C.size_t(len(key))
	}
	return &coreKeys{d: d, keys: &ptrs[0], lens: &lens[0]}
}

func (k *coreKeys) close() {
	for _, p := range unsafe.Slice(k.keys, g3Keys) {
		C.free(unsafe.Pointer(p))
	}
	C.free(unsafe.Pointer(k.keys))
	C.free(unsafe.Pointer(k.lens))
	k.d.close()
}

// coreHits is a benchmark of b.N C hits from `threads` pthreads (one cgo
// call per benchmark round, so Go's cost is nil).
func coreHits(threads func() int) func(b *testing.B) {
	return func(b *testing.B) {
		k := newCoreKeys()
		defer k.close()
		b.ResetTimer()
		if C.core_parallel_hits(k.d.h, k.d.ns, k.keys, k.lens, g3Keys, C.int(threads()), C.long(b.N)) != 0 {
			b.Fatal("a C hit missed")
		}
	}
}

// G3core's figure: GOMAXPROCS threads, as many as run G3's goroutines at
// once (more threads than G3's would take a larger share of a loaded
// machine from the other processes); anchor: 1.
var (
	parallelCoreHits = coreHits(func() int { return runtime.GOMAXPROCS(0) })
	serialCoreHits   = coreHits(func() int { return 1 })
)
