// C API of the L1 in-process byte cache (cachekit_l1_*), over
// cachekit::l1::L1Cache.
#include <cmath>
#include <cstring>
#include <new>
#include <string_view>

#include "capi/boundary.hpp"
#include "l1/l1_cache.hpp"
#include "util/buffer.hpp"

using namespace cachekit;

struct cachekit_l1 {
    explicit cachekit_l1(const l1::Options &o) : cache(o) {}
    l1::L1Cache cache;
};

namespace {

l1::L1Cache &cache_of(cachekit_l1 *l1) {
    capi::require(l1 != nullptr, "l1 is NULL");
    return l1->cache;
}

std::string_view key_arg(const void *key, size_t len) {
    capi::require(key != nullptr, "key is NULL");
    capi::require(len != 0, "key is empty");
    capi::require(len <= CACHEKIT_L1_MAX_KEY_SIZE, "key is longer than CACHEKIT_L1_MAX_KEY_SIZE");
    return {static_cast<const char *>(key), len};
}

std::string_view ns_arg(const void *ns, size_t len) {
    capi::require_bytes(ns, len, "namespace");
    capi::require(len <= CACHEKIT_L1_MAX_NAMESPACE_SIZE,
                  "namespace is longer than CACHEKIT_L1_MAX_NAMESPACE_SIZE");
    return {len ? static_cast<const char *>(ns) : "", len};
}

std::string_view value_arg(const void *value, size_t len) {
    capi::require_bytes(value, len, "value");
    return {len ? static_cast<const char *>(value) : "", len};
}

uint64_t ttl_arg(double ttl_seconds) {
    capi::require(std::isfinite(ttl_seconds), "ttl_seconds is NaN or infinite");
    capi::require(ttl_seconds >= 0, "ttl_seconds is negative");
    capi::require(ttl_seconds <= CACHEKIT_L1_MAX_TTL_SECONDS,
                  "ttl_seconds is above CACHEKIT_L1_MAX_TTL_SECONDS");
    if (ttl_seconds == 0) return 0;  // CACHEKIT_L1_TTL_NONE
    double ns = std::ceil(ttl_seconds * 1e9);
    return ns < 1 ? 1 : uint64_t(ns);
}

int put_common(cachekit_l1 *l1, const void *ns, size_t ns_len, const void *key, size_t key_len,
               const void *value, size_t value_len, double ttl_seconds, uint64_t ticket,
               int *stored) {
    if (stored != nullptr) *stored = 0;
    l1::L1Cache &c = cache_of(l1);
    std::string_view k = key_arg(key, key_len);
    std::string_view n = ns_arg(ns, ns_len);
    std::string_view v = value_arg(value, value_len);
    uint64_t ttl = ttl_arg(ttl_seconds);
    switch (c.put(n, k, v, ttl, ticket)) {
    case l1::PutResult::Stored:
        if (stored != nullptr) *stored = 1;
        return CACHEKIT_OK;
    case l1::PutResult::Invalidated:
        return CACHEKIT_OK;
    case l1::PutResult::TooLarge:
        break;
    }
    fail(CACHEKIT_ETOOBIG, "L1 entry of " + std::to_string(l1::entry_charge(k.size(), v.size())) +
                               " bytes exceeds 1/8 of the budget (" +
                               std::to_string(c.max_entry_bytes()) + " bytes)");
}

}  // namespace

extern "C" {

CACHEKIT_API int cachekit_l1_options_init(cachekit_l1_options *opts, size_t struct_size) noexcept {
    return capi::guarded([&] {
        capi::require(opts != nullptr, "opts is NULL");
        capi::require(struct_size >= sizeof(size_t), "struct_size is too small");
        cachekit_l1_options defaults = CACHEKIT_L1_OPTIONS_INIT;
        size_t n = struct_size < sizeof defaults ? struct_size : sizeof defaults;
        std::memset(static_cast<void *>(opts), 0, struct_size);
        std::memcpy(static_cast<void *>(opts), &defaults, n);
        opts->struct_size = struct_size;
        return CACHEKIT_OK;
    });
}

CACHEKIT_API int cachekit_l1_new(cachekit_l1 **out, const cachekit_l1_options *opts) noexcept {
    return capi::guarded([&] {
        capi::require(out != nullptr, "out is NULL");
        *out = nullptr;
        cachekit_l1_options o = CACHEKIT_L1_OPTIONS_INIT;
        if (opts != nullptr) {
            capi::require(opts->struct_size >= sizeof(size_t), "opts->struct_size is too small");
            size_t n = opts->struct_size < sizeof o ? opts->struct_size : sizeof o;
            std::memcpy(&o, opts, n);
            o.struct_size = sizeof o;
        }
        capi::require(o.max_bytes == 0 || o.max_bytes >= CACHEKIT_L1_MIN_MAX_BYTES,
                      "max_bytes is below CACHEKIT_L1_MIN_MAX_BYTES (1 MiB)");
        capi::require(o.shards <= CACHEKIT_L1_MAX_SHARDS, "shards is above CACHEKIT_L1_MAX_SHARDS");
        capi::require((o.flags & ~uint32_t(CACHEKIT_L1_FLAG_PRECISE_CLOCK)) == 0,
                      "flags holds unknown bits");
        l1::Options lo;
        lo.max_bytes = o.max_bytes == 0 ? l1::kDefaultMaxBytes : o.max_bytes;
        lo.shards = o.shards;
        lo.sweep_interval_ms = o.sweep_interval_ms;
        lo.promote_interval_ns = uint64_t(o.promote_interval_us) * 1000u;
        lo.precise_clock = (o.flags & CACHEKIT_L1_FLAG_PRECISE_CLOCK) != 0;
        lo.admission = l1::admission_policy(o.admission, "admission");
        *out = new cachekit_l1(lo);
        return CACHEKIT_OK;
    });
}

CACHEKIT_API void cachekit_l1_free(cachekit_l1 *l1) noexcept { delete l1; }

CACHEKIT_API int cachekit_l1_get(cachekit_l1 *l1, cachekit_buf *out, const void *key,
                                 size_t key_len) noexcept {
    return capi::guarded([&] {
        l1::L1Cache &c = cache_of(l1);
        capi::require(out != nullptr, "out is NULL");
        return c.get(key_arg(key, key_len), out) ? CACHEKIT_OK : CACHEKIT_ENOTFOUND;
    });
}

CACHEKIT_API int cachekit_l1_put(cachekit_l1 *l1, const void *ns, size_t ns_len, const void *key,
                                 size_t key_len, const void *value, size_t value_len,
                                 double ttl_seconds) noexcept {
    return capi::guarded([&] {
        return put_common(l1, ns, ns_len, key, key_len, value, value_len, ttl_seconds,
                          l1::kNoTicket, nullptr);
    });
}

CACHEKIT_API int cachekit_l1_begin_fill(cachekit_l1 *l1, uint64_t *ticket) noexcept {
    return capi::guarded([&] {
        l1::L1Cache &c = cache_of(l1);
        capi::require(ticket != nullptr, "ticket is NULL");
        *ticket = c.begin_fill();
        return CACHEKIT_OK;
    });
}

CACHEKIT_API int cachekit_l1_put_filled(cachekit_l1 *l1, const void *ns, size_t ns_len,
                                        const void *key, size_t key_len, const void *value,
                                        size_t value_len, double ttl_seconds, uint64_t ticket,
                                        int *stored) noexcept {
    return capi::guarded([&] {
        capi::require(ticket != l1::kNoTicket, "ticket is not one cachekit_l1_begin_fill gave");
        return put_common(l1, ns, ns_len, key, key_len, value, value_len, ttl_seconds, ticket,
                          stored);
    });
}

CACHEKIT_API int cachekit_l1_invalidate(cachekit_l1 *l1, const void *key, size_t key_len) noexcept {
    return capi::guarded([&] {
        l1::L1Cache &c = cache_of(l1);
        c.invalidate(key_arg(key, key_len));
        return CACHEKIT_OK;
    });
}

CACHEKIT_API int cachekit_l1_invalidate_namespace(cachekit_l1 *l1, const void *ns,
                                                  size_t ns_len) noexcept {
    return capi::guarded([&] {
        l1::L1Cache &c = cache_of(l1);
        c.invalidate_namespace(ns_arg(ns, ns_len));
        return CACHEKIT_OK;
    });
}

CACHEKIT_API int cachekit_l1_clear(cachekit_l1 *l1) noexcept {
    return capi::guarded([&] {
        cache_of(l1).clear();
        return CACHEKIT_OK;
    });
}

CACHEKIT_API int cachekit_l1_stats(cachekit_l1 *l1, cachekit_l1_counters *out) noexcept {
    return capi::guarded([&] {
        l1::L1Cache &c = cache_of(l1);
        capi::require(out != nullptr, "out is NULL");
        capi::require(out->struct_size >= sizeof(size_t), "out->struct_size is too small");
        l1::Stats st = c.stats();
        cachekit_l1_counters full;
        std::memset(&full, 0, sizeof full);
        full.struct_size = out->struct_size;
        full.hits = st.hits;
        full.misses = st.misses;
        full.inserts = st.inserts;
        full.evictions = st.evictions;
        full.expirations = st.expirations;
        full.rejected_too_large = st.rejected_too_large;
        full.invalidations = st.invalidations;
        full.dropped_fills = st.dropped_fills;
        full.entries = st.entries;
        full.bytes = st.bytes;
        full.max_bytes = st.max_bytes;
        full.admitted = st.admitted;
        full.rejected_by_admission = st.rejected_by_admission;
        size_t n = out->struct_size < sizeof full ? out->struct_size : sizeof full;
        std::memcpy(static_cast<void *>(out), &full, n);
        return CACHEKIT_OK;
    });
}

}  // extern "C"
