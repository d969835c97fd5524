// extern "C" shims for the cache handle.
#include <cmath>
#include <cstddef>
#include <cstring>
#include <string>

#include "cache/cache.hpp"
#include "cache/cache_config.hpp"
#include "cache/single_flight.hpp"
#include "capi/backend_handle.hpp"
#include "capi/boundary.hpp"
#include "capi/health_out.hpp"
#include "codec/utf8.hpp"
#include "metrics/prometheus.hpp"
#include "util/buffer.hpp"

using namespace cachekit;
using capi::guarded;
using capi::require;

struct cachekit_cache {
    std::unique_ptr<cache::Cache> cache;
};

struct cachekit_load {
    cache::LoadResult *result;
};

namespace {

constexpr size_t kMaxKeyBytes = 65536;

cache::Cache &cache_of(cachekit_cache *c) {
    require(c != nullptr, "cache is NULL");
    return *c->cache;
}

std::string_view key_arg(const void *key, size_t len) {
    require(key != nullptr, "key is NULL");
    require(len > 0, "key is empty");
    require(len <= kMaxKeyBytes, "key is longer than 64 KiB");
    return {static_cast<const char *>(key), len};
}

// A namespace is NUL-terminated UTF-8 of at most CACHEKIT_MAX_NAMESPACE_SIZE
// bytes (it names metrics series and L2 key patterns).
std::string_view ns_arg(const char *ns) {
    if (ns == nullptr) return {};
    const size_t len = ::strnlen(ns, CACHEKIT_MAX_NAMESPACE_SIZE + 1);
    if (len > CACHEKIT_MAX_NAMESPACE_SIZE)
        fail(CACHEKIT_EINVAL, "the namespace is longer than CACHEKIT_MAX_NAMESPACE_SIZE (" +
                                  std::to_string(CACHEKIT_MAX_NAMESPACE_SIZE) + ") bytes");
    const std::string_view v(ns, len);
    if (!utf8_valid(v)) fail(CACHEKIT_EINVAL, "the namespace is not valid UTF-8");
    return v;
}

std::string_view value_arg(const void *value, size_t len) {
    require(value != nullptr || len == 0, "value is NULL with a non-zero length");
    require(len > 0, "value is empty: a value is one MessagePack document");
    return {static_cast<const char *>(value), len};
}

// CACHEKIT_TTL_DEFAULT -> the cache's default; 0 -> no expiry; > 0 -> seconds.
std::optional<l2::Ttl> call_ttl(double ttl_seconds) {
    if (ttl_seconds == CACHEKIT_TTL_DEFAULT) return std::nullopt;
    return capi::ttl_arg(ttl_seconds);
}

// cachekit_lookup gained temporal_keys after its first form: a caller built
// against that form passes the smaller struct_size and gets every field but
// the new one.
constexpr size_t kLookupFirstSize = offsetof(cachekit_lookup, temporal_keys);
constexpr size_t kLookupWithTemporalKeys = kLookupFirstSize + sizeof(int);

void check_lookup(const cachekit_lookup *info) {
    require(info == nullptr || info->struct_size >= kLookupFirstSize,
            "info->struct_size is too small (initialise it with CACHEKIT_LOOKUP_INIT)");
}

void fill_lookup(cachekit_lookup *out, const cache::Lookup &in) {
    if (!out) return;
    out->source = int(in.source);
    out->refresh = in.refresh ? 1 : 0;
    out->refresh_claim = in.refresh_claim;
    out->age_seconds = in.age_seconds;
    if (out->struct_size >= kLookupWithTemporalKeys) out->temporal_keys = in.temporal_keys;
}

}  // namespace

extern "C" {

CACHEKIT_API int cachekit_cache_options_init(cachekit_cache_options *opts, size_t struct_size) noexcept {
    return guarded([&] {
        require(opts != nullptr, "opts is NULL");
        require(struct_size >= sizeof(size_t), "struct_size is too small");
        cachekit_cache_options d = cache::default_cache_options();
        std::memcpy(opts, &d, std::min(struct_size, sizeof d));
        opts->struct_size = struct_size;
        return CACHEKIT_OK;
    });
}

CACHEKIT_API int cachekit_cache_new(cachekit_cache **out, const cachekit_cache_options *opts) noexcept {
    return guarded([&] {
        require(out != nullptr, "out is NULL");
        *out = nullptr;
        cachekit_cache_options o = cache::read_cache_options(opts);
        cache::BorrowedBackend borrowed;
        if (o.backend) borrowed.backend = o.backend->backend.get();
        auto config = cache::resolve_config(o, borrowed, [](const cachekit_backend_options *bo) {
            return capi::to_open_options(capi::read_backend_options(bo));
        });
        auto handle = std::make_unique<cachekit_cache>();
        handle->cache = std::make_unique<cache::Cache>(std::move(config));
        *out = handle.release();
        return CACHEKIT_OK;
    });
}

CACHEKIT_API void cachekit_cache_free(cachekit_cache *c) noexcept { delete c; }

CACHEKIT_API int cachekit_cache_get(cachekit_cache *c, cachekit_buf *out, cachekit_lookup *info, const char *ns,
                                    const void *key, size_t key_len) noexcept {
    return guarded([&] {
        require(out != nullptr, "out is NULL");
        if (info == nullptr) {
            cache::Cache &cc = cache_of(c);
            const std::string_view k = key_arg(key, key_len);
            if (cc.quick_hit(k, out)) return int(CACHEKIT_OK);  // the namespace is not even measured for it
            return cc.get_rest(ns_arg(ns), k, out, nullptr);
        }
        check_lookup(info);
        cache::Lookup lookup;
        int rc = cache_of(c).get(ns_arg(ns), key_arg(key, key_len), out, &lookup);
        fill_lookup(info, lookup);
        return rc;
    });
}

CACHEKIT_API int cachekit_cache_peek(cachekit_cache *c, cachekit_buf *out, cachekit_lookup *info, const char *ns,
                                     const void *key, size_t key_len) noexcept {
    return guarded([&] {
        require(out != nullptr, "out is NULL");
        cache::Cache &cc = cache_of(c);
        const std::string_view k = key_arg(key, key_len);
        if (info == nullptr) {
            if (cc.quick_hit(k, out)) return int(CACHEKIT_OK);  // as in cachekit_cache_get
            return cc.peek_rest(ns_arg(ns), k, out, nullptr);
        }
        check_lookup(info);
        cache::Lookup lookup;
        int rc = cc.peek(ns_arg(ns), k, out, &lookup);
        fill_lookup(info, lookup);
        return rc;
    });
}

CACHEKIT_API int cachekit_cache_put(cachekit_cache *c, const char *ns, const void *key, size_t key_len,
                                    const void *value, size_t value_len, double ttl_seconds) noexcept {
    return guarded([&] {
        return cache_of(c).put(ns_arg(ns), key_arg(key, key_len), value_arg(value, value_len), call_ttl(ttl_seconds));
    });
}

CACHEKIT_API int cachekit_load_set_value(cachekit_load *load, const void *value, size_t value_len) noexcept {
    return guarded([&] {
        require(load != nullptr && load->result != nullptr, "load is NULL or no longer running");
        load->result->value.assign(value_arg(value, value_len));
        load->result->has_value = true;
        return CACHEKIT_OK;
    });
}

CACHEKIT_API int cachekit_load_set_ttl(cachekit_load *load, double ttl_seconds) noexcept {
    return guarded([&] {
        require(load != nullptr && load->result != nullptr, "load is NULL or no longer running");
        load->result->ttl = call_ttl(ttl_seconds);
        return CACHEKIT_OK;
    });
}

CACHEKIT_API int cachekit_load_set_error(cachekit_load *load, const char *message) noexcept {
    return guarded([&] {
        require(load != nullptr && load->result != nullptr, "load is NULL or no longer running");
        load->result->error = message ? message : "";
        return CACHEKIT_OK;
    });
}

CACHEKIT_API int cachekit_cache_get_or_load(cachekit_cache *c, cachekit_buf *out, cachekit_lookup *info,
                                            const char *ns, const void *key, size_t key_len, double ttl_seconds,
                                            cachekit_loader loader, void *payload) noexcept {
    // Marks where this call entered, so a leader whose loader jumped out of
    // this frame (longjmp) is recognised and its flight finished later on.
    cache::SingleFlight::Canary canary;
    const cache::SingleFlight::EntryScope entry(reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0)), canary);
    return guarded([&] {
        require(out != nullptr, "out is NULL");
        require(loader != nullptr, "loader is NULL");
        check_lookup(info);
        cache::Lookup lookup;
        cache::Loader run = [&](cache::LoadResult &result) {
            cachekit_load ctx{&result};
            int rc = loader(&ctx, payload);
            ctx.result = nullptr;
            return rc;
        };
        int rc = cache_of(c).get_or_load(ns_arg(ns), key_arg(key, key_len), call_ttl(ttl_seconds), run, out,
                                         info ? &lookup : nullptr);
        fill_lookup(info, lookup);
        return rc;
    });
}

CACHEKIT_API int cachekit_cache_put_refresh(cachekit_cache *c, const char *ns, const void *key, size_t key_len,
                                            const void *value, size_t value_len, double ttl_seconds,
                                            uint64_t refresh_claim) noexcept {
    return guarded([&] {
        return cache_of(c).put_refresh(ns_arg(ns), key_arg(key, key_len), value_arg(value, value_len),
                                       call_ttl(ttl_seconds), refresh_claim);
    });
}

CACHEKIT_API int cachekit_cache_abandon_refresh(cachekit_cache *c, const void *key, size_t key_len,
                                                uint64_t refresh_claim) noexcept {
    return guarded([&] {
        cache_of(c).abandon_refresh(key_arg(key, key_len), refresh_claim);
        return CACHEKIT_OK;
    });
}

CACHEKIT_API int cachekit_cache_get_for_load(cachekit_cache *c, cachekit_buf *out, cachekit_lookup *info,
                                             const char *ns, const void *key, size_t key_len) noexcept {
    return guarded([&] {
        require(out != nullptr, "out is NULL");
        require(info != nullptr, "info is NULL (a miss hands its load claim back there)");
        check_lookup(info);
        cache::Lookup lookup;
        int rc = cache_of(c).get_for_load(ns_arg(ns), key_arg(key, key_len), out, lookup);
        fill_lookup(info, lookup);
        return rc;
    });
}

CACHEKIT_API int cachekit_cache_invalidate(cachekit_cache *c, const char *ns, const void *key, size_t key_len) noexcept {
    return guarded([&] { return cache_of(c).invalidate(ns_arg(ns), key_arg(key, key_len)); });
}

CACHEKIT_API int cachekit_cache_invalidate_namespace(cachekit_cache *c, const char *ns) noexcept {
    return guarded([&] { return cache_of(c).invalidate_namespace(ns_arg(ns)); });
}

CACHEKIT_API int cachekit_cache_clear(cachekit_cache *c) noexcept {
    return guarded([&] { return cache_of(c).clear(); });
}

namespace {
// A function identity ("{module}.{qualname}"): non-empty UTF-8, NUL-terminated, at most 64 KiB.
std::string_view function_arg(const char *function) {
    require(function != nullptr, "function is NULL");
    const size_t len = ::strnlen(function, kMaxKeyBytes + 1);
    require(len > 0, "function is empty");
    require(len <= kMaxKeyBytes, "function is longer than 64 KiB");
    const std::string_view v(function, len);
    if (!utf8_valid(v)) fail(CACHEKIT_EINVAL, "the function identity is not valid UTF-8");
    return v;
}
}  // namespace

CACHEKIT_API int cachekit_cache_track_function(cachekit_cache *c, const char *ns, const char *function,
                                               const void *key_head, size_t key_head_len, int *kept) noexcept {
    return guarded([&] {
        const bool k = cache_of(c).track_function(ns_arg(ns), function_arg(function), key_arg(key_head, key_head_len));
        if (kept) *kept = k ? 1 : 0;
        return CACHEKIT_OK;
    });
}

CACHEKIT_API int cachekit_cache_invalidate_function(cachekit_cache *c, const char *ns, const char *function,
                                                    uint64_t *deleted) noexcept {
    return guarded([&] {
        const uint64_t n = cache_of(c).invalidate_function(ns_arg(ns), function_arg(function));
        if (deleted) *deleted = n;
        return CACHEKIT_OK;
    });
}

CACHEKIT_API int cachekit_cache_stats_get(cachekit_cache *c, cachekit_cache_stats *out, const char *ns) noexcept {
    return guarded([&] {
        require(out != nullptr, "out is NULL");
        require(out->struct_size >= sizeof(size_t), "out->struct_size is too small");
        cache::Cache &cc = cache_of(c);
        ns_arg(ns);  // the namespace rule: refused before anything is read
        cachekit_cache_stats s;
        std::memset(&s, 0, sizeof s);
        const metrics::SeriesCounts m = cc.metrics().totals(ns);
        s.l1_hits = m.l1_hits;
        s.l2_hits = m.l2_hits;
        s.misses = m.misses;
        s.stores = m.stores;
        s.loads = m.loads;
        s.load_errors = m.load_errors;
        s.waits = m.waits;
        s.stale_served = m.stale_served;
        s.refreshes = m.refreshes;
        s.dropped_fills = m.dropped_fills;
        s.too_large = m.too_large;
        s.invalidations = m.invalidations;
        s.backend_errors = m.backend_errors;
        s.timeouts = m.timeouts;
        s.corrupt = m.corrupt;
        s.tampered = m.tampered;
        s.wrong_key = m.wrong_key;
        s.downgrade = m.downgrade;
        s.serializer_mismatch = m.serializer_mismatch;
        s.l2_latency_count = m.l2_latency_ms.count();
        s.l2_latency_sum_ms = m.l2_latency_ms.sum();
        if (l1::L1Cache *l1 = cc.l1()) {
            l1::Stats ls = l1->stats();
            s.l1_entries = ls.entries;
            s.l1_bytes = ls.bytes;
            s.l1_evictions = ls.evictions;
            s.l1_expirations = ls.expirations;
        }
        s.breaker_state = cc.breaker_state();
        const size_t n = std::min(out->struct_size, sizeof s);
        s.struct_size = out->struct_size;
        std::memcpy(out, &s, n);
        return CACHEKIT_OK;
    });
}

CACHEKIT_API int cachekit_cache_claims_held(cachekit_cache *c, uint64_t *out) noexcept {
    return guarded([&] {
        require(out != nullptr, "out is NULL");
        *out = cache_of(c).claims_held();
        return CACHEKIT_OK;
    });
}

CACHEKIT_API int cachekit_cache_metrics_text(cachekit_cache *c, cachekit_buf *out) noexcept {
    return guarded([&] {
        require(out != nullptr, "out is NULL");
        cache::Cache &cc = cache_of(c);
        metrics::ExpositionContext ctx;
        ctx.breaker_state = cc.breaker_state();
        ctx.has_backend = cc.config().backend != nullptr;
        std::string text = metrics::prometheus_text(cc.metrics(), ctx);
        if (l1::L1Cache *l1 = cc.l1(); l1 && l1->admission() == l1::AdmissionPolicy::TinyLfu) {
            l1::Stats ls = l1->stats();
            text += metrics::l1_admission_text(ls.admitted, ls.rejected_by_admission);
        }
        if (const cache::Coherence *coherence = cc.coherence()) text += coherence->metrics_text();
        if (cc.config().backend) text += cc.config().backend->metrics_text();
        buf_assign(out, text);
        return CACHEKIT_OK;
    });
}

}  // extern "C"

extern "C" {

CACHEKIT_API int cachekit_cache_health_get(cachekit_cache *c, cachekit_health *out) noexcept {
    return guarded([&] {
        cache::Cache &cc = cache_of(c);
        int coherence = CACHEKIT_COHERENCE_OFF;
        if (const cache::Coherence *feed = cc.coherence())
            coherence = feed->l1_open() ? CACHEKIT_COHERENCE_LIVE : CACHEKIT_COHERENCE_SUSPENDED;
        capi::put_health(out, cc.config().resilient, coherence);
        return CACHEKIT_OK;
    });
}

}  // extern "C"
