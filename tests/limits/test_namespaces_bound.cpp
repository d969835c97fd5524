// Bounded per-namespace state (issue 12): a million distinct namespaces
// through a cache (L1 on, no L2; a miss and a put each) stay within a stated
// memory bound, the Prometheus text stays bounded, the totals over its
// series equal the calls made, and clear() frees the L1's part. Under the
// sanitizers the count is 100,000 (the bound is the same).
#include <malloc.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

#include "cachekit/cachekit.h"
#include "../cache/prometheus_text.hpp"

namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define CK_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define CK_SANITIZED 1
#endif
#endif
#ifdef CK_SANITIZED
constexpr int kNamespaces = 100000;
#else
constexpr int kNamespaces = 1000000;
#endif

constexpr uint64_t kL1Bytes = uint64_t(16) << 20;
// The stated bound (docs/cache.md): the L1's budget plus 48 MiB (metrics of
// 1,024 series ~12 MiB, 4,096 L1 namespace records ~3 MiB, allocator slack).
constexpr uint64_t kRssBound = kL1Bytes + (uint64_t(48) << 20);
constexpr size_t kTextBound = size_t(8) << 20;

struct Buf {
    cachekit_buf b = CACHEKIT_BUF_INIT;
    ~Buf() { cachekit_buf_dispose(&b); }
    std::string str() const { return b.ptr ? std::string(b.ptr, b.size) : std::string(); }
};

uint64_t rss_bytes() {
    FILE *f = std::fopen("/proc/self/statm", "r");
    if (f == nullptr) return 0;
    unsigned long long size = 0, resident = 0;
    int n = std::fscanf(f, "%llu %llu", &size, &resident);
    std::fclose(f);
    return n == 2 ? resident * uint64_t(sysconf(_SC_PAGESIZE)) : 0;
}

using prometheus_text::namespace_labels;
using prometheus_text::sum_lines;

cachekit_cache_stats stats_of(cachekit_cache *c) {
    cachekit_cache_stats s;
    s.struct_size = sizeof s;
    assert_int_equal(cachekit_cache_stats_get(c, &s, nullptr), CACHEKIT_OK);
    return s;
}

void million_namespaces(void **) {
    cachekit_cache_options o;
    cachekit_cache_options_init(&o, sizeof o);
    o.backend_url = "none";
    o.l1_max_bytes = kL1Bytes;
    cachekit_cache *c = nullptr;
    assert_int_equal(cachekit_cache_new(&c, &o), CACHEKIT_OK);
    const uint64_t rss0 = rss_bytes();
    const char value[] = {char(0xa1), 'v'};  // msgpack "v"
    Buf out;
    char ns[32], key[32];
    uint64_t peak = 0;
    for (int i = 0; i < kNamespaces; ++i) {
        int nl = std::snprintf(ns, sizeof ns, "tenant:%d", i);
        int kl = std::snprintf(key, sizeof key, "k:%d", i);
        (void)nl;
        assert_int_equal(cachekit_cache_get(c, &out.b, nullptr, ns, key, size_t(kl)), CACHEKIT_ENOTFOUND);
        assert_int_equal(cachekit_cache_put(c, ns, key, size_t(kl), value, sizeof value, CACHEKIT_TTL_DEFAULT), CACHEKIT_OK);
        if (i % 65536 == 0) {
            uint64_t r = rss_bytes();
            if (r > peak) peak = r;
        }
    }
    uint64_t r = rss_bytes();
    if (r > peak) peak = r;
    cachekit_cache_stats s = stats_of(c);
    std::printf("%d namespaces: RSS %.1f MiB -> peak %.1f MiB (delta %.1f MiB, bound %.1f), L1 %.1f MiB, %llu entries\n",
                kNamespaces, double(rss0) / 1048576, double(peak) / 1048576, double(peak - rss0) / 1048576,
                double(kRssBound) / 1048576, double(s.l1_bytes) / 1048576, (unsigned long long)s.l1_entries);
    assert_true(s.l1_bytes <= kL1Bytes);
#ifndef CK_SANITIZED
    assert_true(peak - rss0 <= kRssBound);  // sanitizers' allocators keep freed memory in quarantine
#endif
    assert_int_equal(s.misses, kNamespaces);
    assert_int_equal(s.stores, kNamespaces);

    Buf text;
    assert_int_equal(cachekit_cache_metrics_text(c, &text.b), CACHEKIT_OK);
    std::string t = text.str();
    std::printf("metrics text: %zu bytes, %zu namespaces\n", t.size(), namespace_labels(t));
    assert_true(t.size() <= kTextBound);
    assert_true(namespace_labels(t) <= 1025);
    assert_int_equal(sum_lines(t, "cache_operations_total{operation=\"get\"", "success=\"false\""), kNamespaces);
    assert_int_equal(sum_lines(t, "cache_operations_total{operation=\"set\"", "success=\"true\""), kNamespaces);
    assert_int_equal(sum_lines(t, "cache_operations_total{operation=\"get\"", "success=\"true\""), 0);

#ifndef CK_SANITIZED
    malloc_trim(0);
    const size_t in_use = mallinfo2().uordblks;
#endif
    assert_int_equal(cachekit_cache_clear(c), CACHEKIT_OK);
    s = stats_of(c);
    assert_int_equal(s.l1_entries, 0);
    assert_int_equal(s.l1_bytes, 0);
#ifndef CK_SANITIZED
    // The entries and the namespace records are freed at once (no reader is
    // pinned): the heap in use drops by most of the L1's budget.
    malloc_trim(0);
    const size_t after = mallinfo2().uordblks;
    std::printf("heap in use: %.1f MiB before clear, %.1f MiB after\n", double(in_use) / 1048576, double(after) / 1048576);
    assert_true(after + kL1Bytes / 2 <= in_use);
#endif
    assert_int_equal(cachekit_cache_metrics_text(c, &text.b), CACHEKIT_OK);
    assert_true(text.b.size <= kTextBound);
    cachekit_cache_free(c);
}

}  // namespace

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(million_namespaces),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
