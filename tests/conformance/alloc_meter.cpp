// See alloc_meter.hpp. Each block is counted by malloc_usable_size, on the
// way in and on the way out, so no size header is needed; blocks glibc
// allocates internally (not through these symbols) and frees through them
// only make the count lower, never a peak higher than it was.
#include "alloc_meter.hpp"

#include <atomic>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define CKCONF_ALLOC_METER 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define CKCONF_ALLOC_METER 0
#endif
#endif
#ifndef CKCONF_ALLOC_METER
#define CKCONF_ALLOC_METER 1
#endif

namespace {
std::atomic<int64_t> g_live{0};
std::atomic<int64_t> g_peak{0};
std::atomic<int64_t> g_base{0};
}  // namespace

namespace ckconf::alloc_meter {

bool active() { return CKCONF_ALLOC_METER != 0; }

void reset() {
    const int64_t now = g_live.load();
    g_base.store(now);
    g_peak.store(now);
}

int64_t peak_since_reset() { return g_peak.load() - g_base.load(); }

}  // namespace ckconf::alloc_meter

#if CKCONF_ALLOC_METER
#include <malloc.h>

extern "C" {
void *__libc_malloc(size_t) noexcept;
void *__libc_calloc(size_t, size_t) noexcept;
void *__libc_realloc(void *, size_t) noexcept;
void __libc_free(void *) noexcept;
void *__libc_memalign(size_t, size_t) noexcept;
}

namespace {

void counted_in(void *p) {
    if (!p) return;
    const int64_t live = g_live.fetch_add(int64_t(malloc_usable_size(p))) + int64_t(malloc_usable_size(p));
    int64_t peak = g_peak.load();
    while (live > peak && !g_peak.compare_exchange_weak(peak, live)) {
    }
}

void counted_out(void *p) {
    if (p) g_live.fetch_sub(int64_t(malloc_usable_size(p)));
}

}  // namespace

extern "C" {

void *malloc(size_t n) noexcept {
    void *p = __libc_malloc(n);
    counted_in(p);
    return p;
}

void *calloc(size_t count, size_t n) noexcept {
    void *p = __libc_calloc(count, n);
    counted_in(p);
    return p;
}

void *realloc(void *old, size_t n) noexcept {
    const size_t before = old ? malloc_usable_size(old) : 0;
    void *p = __libc_realloc(old, n);
    if (p) {
        g_live.fetch_sub(int64_t(before));
        counted_in(p);
    } else if (n == 0 && old) {
        g_live.fetch_sub(int64_t(before));  // realloc(p, 0) freed it
    }
    return p;
}

void free(void *p) noexcept {
    counted_out(p);
    __libc_free(p);
}

void *memalign(size_t align, size_t n) noexcept {
    void *p = __libc_memalign(align, n);
    counted_in(p);
    return p;
}

void *aligned_alloc(size_t align, size_t n) noexcept { return memalign(align, n); }

int posix_memalign(void **out, size_t align, size_t n) noexcept {
    if (align < sizeof(void *) || (align & (align - 1)) != 0) return 22;  // EINVAL
    void *p = memalign(align, n);
    if (!p) return 12;  // ENOMEM
    *out = p;
    return 0;
}

}  // extern "C"
#endif
