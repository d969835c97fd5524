// C API of the L2 backends (cachekit_backend_*): argument checks, then the
// URL dispatch (l2/open_backend) and the resilience layer every handle has.
// The handle struct and the option/TTL conversions are shared with the cache
// shims (capi/backend_handle.hpp).
#include <cstddef>
#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "capi/backend_handle.hpp"
#include "capi/boundary.hpp"
#include "capi/health_out.hpp"
#include "l2/open_backend.hpp"
#include "util/buffer.hpp"

using namespace cachekit;
using capi::guarded;
using capi::require;
using capi::require_bytes;
using capi::ttl_arg;

namespace {

constexpr size_t kMaxKeyBytes = size_t(1) << 20;  // 1 MiB

l2::ResilientBackend &backend_of(cachekit_backend *b) {
    require(b != nullptr, "backend is NULL");
    return *b->backend;
}

std::string_view key_arg(const void *key, size_t len, const char *what = "key") {
    if (key == nullptr) fail(CACHEKIT_EINVAL, std::string(what) + " is NULL");
    if (len == 0) fail(CACHEKIT_EINVAL, std::string(what) + " is empty");
    if (len > kMaxKeyBytes) fail(CACHEKIT_EINVAL, std::string(what) + " is longer than 1 MiB");
    return {static_cast<const char *>(key), len};
}

std::string_view bytes_arg(const void *data, size_t len, const char *what) {
    require_bytes(data, len, what);
    return {len ? static_cast<const char *>(data) : "", len};
}

// The `count` spans of a packed buffer: span i is data[offsets[i] ..
// offsets[i + 1]), offsets holding count + 1 non-decreasing entries.
std::vector<std::string_view> packed_spans(const void *data, const size_t *offsets, size_t count, const char *what) {
    if (offsets == nullptr) fail(CACHEKIT_EINVAL, std::string(what) + " offsets are NULL");
    for (size_t i = 0; i < count; ++i)
        if (offsets[i + 1] < offsets[i])
            fail(CACHEKIT_EINVAL, std::string(what) + " offsets decrease at index " + std::to_string(i + 1));
    require_bytes(data, offsets[count] - offsets[0], what);
    std::vector<std::string_view> spans;
    spans.reserve(count);
    for (size_t i = 0; i < count; ++i) {
        const size_t len = offsets[i + 1] - offsets[i];
        spans.push_back(len ? std::string_view(static_cast<const char *>(data) + offsets[i], len) : std::string_view("", 0));
    }
    return spans;
}

std::vector<std::string_view> packed_keys(const void *keys, const size_t *key_offsets, size_t count) {
    std::vector<std::string_view> ks = packed_spans(keys, key_offsets, count, "key");
    for (std::string_view &k : ks) k = key_arg(k.data(), k.size());
    return ks;
}

// One batched read into outs[0 .. keys.size()) with a status per key.
void get_many_into(l2::ResilientBackend &b, const std::vector<std::string_view> &keys, cachekit_buf *outs,
                   int *results) {
    std::vector<bool> found;
    b.get_many(keys, outs, found, b.default_deadline());
    for (size_t i = 0; i < keys.size(); ++i)
        results[i] = i < found.size() && found[i] ? CACHEKIT_OK : CACHEKIT_ENOTFOUND;
}

// True when `field` lies entirely within the caller's struct of `size` bytes.
#define CK_FIELD_FITS(type, field, size) (offsetof(type, field) + sizeof(type::field) <= (size))

}  // namespace

extern "C" {

CACHEKIT_API int cachekit_backend_options_init(cachekit_backend_options *opts, size_t struct_size) noexcept {
    return guarded([&] {
        require(opts != nullptr, "opts is NULL");
        require(struct_size >= sizeof(size_t), "struct_size is too small");
        const cachekit_backend_options defaults = capi::read_backend_options(nullptr);
        size_t n = struct_size < sizeof defaults ? struct_size : sizeof defaults;
        std::memset(static_cast<void *>(opts), 0, struct_size);
        std::memcpy(static_cast<void *>(opts), &defaults, n);
        opts->struct_size = struct_size;
        return CACHEKIT_OK;
    });
}

CACHEKIT_API int cachekit_backend_open(cachekit_backend **out, const char *url,
                                       const cachekit_backend_options *opts) noexcept {
    return guarded([&] {
        require(out != nullptr, "out is NULL");
        *out = nullptr;
        cachekit_backend_options o = capi::read_backend_options(opts);
        std::string resolved = l2::resolve_url(url);
        auto handle = std::make_unique<cachekit_backend>();
        handle->backend = l2::open_backend(resolved, capi::to_open_options(o));
        *out = handle.release();
        return CACHEKIT_OK;
    });
}

CACHEKIT_API void cachekit_backend_free(cachekit_backend *backend) noexcept { delete backend; }

CACHEKIT_API const char *cachekit_backend_kind(const cachekit_backend *backend) noexcept {
    return backend != nullptr ? backend->backend->kind() : "";
}

CACHEKIT_API int cachekit_backend_get(cachekit_backend *backend, cachekit_buf *out, const void *key,
                                      size_t key_len) noexcept {
    return guarded([&] {
        auto &b = backend_of(backend);
        require(out != nullptr, "out is NULL");
        std::string_view k = key_arg(key, key_len);
        return b.get(k, out, b.default_deadline()) ? CACHEKIT_OK : CACHEKIT_ENOTFOUND;
    });
}

CACHEKIT_API int cachekit_backend_set(cachekit_backend *backend, const void *key, size_t key_len, const void *value,
                                      size_t value_len, double ttl_seconds) noexcept {
    return guarded([&] {
        auto &b = backend_of(backend);
        std::string_view k = key_arg(key, key_len);
        std::string_view v = bytes_arg(value, value_len, "value");
        l2::Ttl ttl = ttl_arg(ttl_seconds);
        b.set(k, v, ttl, b.default_deadline());
        return CACHEKIT_OK;
    });
}

CACHEKIT_API int cachekit_backend_delete(cachekit_backend *backend, const void *key, size_t key_len) noexcept {
    return guarded([&] {
        auto &b = backend_of(backend);
        std::string_view k = key_arg(key, key_len);
        return b.del(k, b.default_deadline()) ? CACHEKIT_OK : CACHEKIT_ENOTFOUND;
    });
}

CACHEKIT_API int cachekit_backend_exists(cachekit_backend *backend, const void *key, size_t key_len) noexcept {
    return guarded([&] {
        auto &b = backend_of(backend);
        std::string_view k = key_arg(key, key_len);
        return b.exists(k, b.default_deadline()) ? CACHEKIT_OK : CACHEKIT_ENOTFOUND;
    });
}

CACHEKIT_API int cachekit_backend_ttl(cachekit_backend *backend, double *ttl_seconds, const void *key,
                                      size_t key_len) noexcept {
    return guarded([&] {
        auto &b = backend_of(backend);
        require(ttl_seconds != nullptr, "ttl_seconds is NULL");
        std::string_view k = key_arg(key, key_len);
        auto t = b.ttl(k, b.default_deadline());
        if (!t) return CACHEKIT_ENOTFOUND;
        *ttl_seconds = *t ? double((*t)->count()) / 1000.0 : -1.0;
        return CACHEKIT_OK;
    });
}

CACHEKIT_API int cachekit_backend_get_many(cachekit_backend *backend, cachekit_buf *outs, int *results,
                                           const void *const *keys, const size_t *key_lens, size_t count) noexcept {
    return guarded([&] {
        auto &b = backend_of(backend);
        if (count == 0) return CACHEKIT_OK;
        require(outs != nullptr && results != nullptr, "outs and results are required");
        require(keys != nullptr && key_lens != nullptr, "keys and key_lens are required");
        std::vector<std::string_view> ks;
        ks.reserve(count);
        for (size_t i = 0; i < count; ++i) ks.push_back(key_arg(keys[i], key_lens[i]));
        get_many_into(b, ks, outs, results);
        return CACHEKIT_OK;
    });
}

CACHEKIT_API int cachekit_backend_get_many_packed(cachekit_backend *backend, cachekit_buf *values_out,
                                                  size_t *value_offsets, int *results, const void *keys,
                                                  const size_t *key_offsets, size_t count) noexcept {
    return guarded([&] {
        auto &b = backend_of(backend);
        require(values_out != nullptr && value_offsets != nullptr, "values_out and value_offsets are required");
        if (count == 0) {
            buf_resize(values_out, 0);
            value_offsets[0] = 0;
            return CACHEKIT_OK;
        }
        require(results != nullptr, "results is required");
        std::vector<std::string_view> ks = packed_keys(keys, key_offsets, count);
        std::vector<cachekit_buf> outs(count, cachekit_buf CACHEKIT_BUF_INIT);
        struct Release {
            std::vector<cachekit_buf> &bufs;
            ~Release() {
                for (cachekit_buf &o : bufs) buf_release(&o);
            }
        } release{outs};
        get_many_into(b, ks, outs.data(), results);
        size_t total = 0;
        for (const cachekit_buf &o : outs) total += o.size;
        buf_resize(values_out, total);
        size_t at = 0;
        for (size_t i = 0; i < count; ++i) {
            value_offsets[i] = at;
            const std::string_view v = buf_view(outs[i]);
            if (!v.empty()) std::memcpy(values_out->ptr + at, v.data(), v.size());
            at += v.size();
        }
        value_offsets[count] = at;
        return CACHEKIT_OK;
    });
}

CACHEKIT_API int cachekit_backend_set_many(cachekit_backend *backend, const void *const *keys, const size_t *key_lens,
                                           const void *const *values, const size_t *value_lens, size_t count,
                                           double ttl_seconds) noexcept {
    return guarded([&] {
        auto &b = backend_of(backend);
        l2::Ttl ttl = ttl_arg(ttl_seconds);
        if (count == 0) return CACHEKIT_OK;
        require(keys != nullptr && key_lens != nullptr, "keys and key_lens are required");
        require(values != nullptr && value_lens != nullptr, "values and value_lens are required");
        std::vector<l2::KeyValue> entries;
        entries.reserve(count);
        for (size_t i = 0; i < count; ++i)
            entries.push_back({key_arg(keys[i], key_lens[i]), bytes_arg(values[i], value_lens[i], "value")});
        b.set_many(entries, ttl, b.default_deadline());
        return CACHEKIT_OK;
    });
}

CACHEKIT_API int cachekit_backend_set_many_packed(cachekit_backend *backend, const void *keys,
                                                  const size_t *key_offsets, const void *values,
                                                  const size_t *value_offsets, size_t count,
                                                  double ttl_seconds) noexcept {
    return guarded([&] {
        auto &b = backend_of(backend);
        l2::Ttl ttl = ttl_arg(ttl_seconds);
        if (count == 0) return CACHEKIT_OK;
        std::vector<std::string_view> ks = packed_keys(keys, key_offsets, count);
        std::vector<std::string_view> vs = packed_spans(values, value_offsets, count, "value");
        std::vector<l2::KeyValue> entries;
        entries.reserve(count);
        for (size_t i = 0; i < count; ++i) entries.push_back({ks[i], vs[i]});
        b.set_many(entries, ttl, b.default_deadline());
        return CACHEKIT_OK;
    });
}

CACHEKIT_API int cachekit_backend_clear(cachekit_backend *backend, uint64_t *deleted, const void *prefix,
                                        size_t prefix_len) noexcept {
    return guarded([&] {
        auto &b = backend_of(backend);
        std::string_view p = bytes_arg(prefix, prefix_len, "prefix");
        if (deleted != nullptr) *deleted = 0;
        uint64_t n = b.clear(l2::KeySelection(p), l2::ResilientBackend::clear_deadline());
        if (deleted != nullptr) *deleted = n;
        return CACHEKIT_OK;
    });
}

CACHEKIT_API int cachekit_backend_lock(cachekit_backend *backend, cachekit_buf *token, const void *key, size_t key_len,
                                       uint32_t hold_ms) noexcept {
    return guarded([&] {
        auto &b = backend_of(backend);
        require(token != nullptr, "token is NULL");
        std::string_view k = key_arg(key, key_len);
        require(hold_ms != 0, "hold_ms is 0");
        auto t = b.lock(k, std::chrono::milliseconds(hold_ms), b.default_deadline());
        if (!t) {
            capi::set_last_error(CACHEKIT_EBUSY, "the lock is held by someone else");
            return CACHEKIT_EBUSY;
        }
        buf_assign(token, *t);
        return CACHEKIT_OK;
    });
}

CACHEKIT_API int cachekit_backend_unlock(cachekit_backend *backend, const void *key, size_t key_len, const void *token,
                                         size_t token_len) noexcept {
    return guarded([&] {
        auto &b = backend_of(backend);
        std::string_view k = key_arg(key, key_len);
        std::string_view t = key_arg(token, token_len, "token");
        return b.unlock(k, t, b.default_deadline()) ? CACHEKIT_OK : CACHEKIT_ENOTFOUND;
    });
}

CACHEKIT_API int cachekit_backend_incr(cachekit_backend *backend, int64_t *value, const void *key, size_t key_len,
                                       int64_t delta) noexcept {
    return guarded([&] {
        auto &b = backend_of(backend);
        require(value != nullptr, "value is NULL");
        std::string_view k = key_arg(key, key_len);
        std::optional<int64_t> v = b.incr(k, delta, b.default_deadline());
        if (!v) return CACHEKIT_ENOTFOUND;
        *value = *v;
        return CACHEKIT_OK;
    });
}

CACHEKIT_API int cachekit_backend_add(cachekit_backend *backend, int *added, const void *key, size_t key_len,
                                      const void *value, size_t value_len, double ttl_seconds) noexcept {
    return guarded([&] {
        auto &b = backend_of(backend);
        if (added != nullptr) *added = 0;
        std::string_view k = key_arg(key, key_len);
        std::string_view v = bytes_arg(value, value_len, "value");
        l2::Ttl ttl = ttl_arg(ttl_seconds);
        const bool stored = b.add(k, v, ttl, b.default_deadline());
        if (added != nullptr) *added = stored ? 1 : 0;
        return CACHEKIT_OK;
    });
}

CACHEKIT_API int cachekit_backend_touch(cachekit_backend *backend, const void *key, size_t key_len,
                                        double ttl_seconds) noexcept {
    return guarded([&] {
        auto &b = backend_of(backend);
        std::string_view k = key_arg(key, key_len);
        l2::Ttl ttl = ttl_arg(ttl_seconds);
        return b.touch(k, ttl, b.default_deadline()) ? CACHEKIT_OK : CACHEKIT_ENOTFOUND;
    });
}

CACHEKIT_API int cachekit_backend_delete_many(cachekit_backend *backend, uint64_t *deleted, const void *const *keys,
                                              const size_t *key_lens, size_t count) noexcept {
    return guarded([&] {
        auto &b = backend_of(backend);
        if (deleted != nullptr) *deleted = 0;
        if (count == 0) return CACHEKIT_OK;
        require(keys != nullptr && key_lens != nullptr, "keys and key_lens are required");
        std::vector<std::string_view> ks;
        ks.reserve(count);
        for (size_t i = 0; i < count; ++i) ks.push_back(key_arg(keys[i], key_lens[i]));
        const uint64_t n = b.delete_many(ks, b.default_deadline());
        if (deleted != nullptr) *deleted = n;
        return CACHEKIT_OK;
    });
}

CACHEKIT_API int cachekit_backend_delete_many_packed(cachekit_backend *backend, uint64_t *deleted, const void *keys,
                                                     const size_t *key_offsets, size_t count) noexcept {
    return guarded([&] {
        auto &b = backend_of(backend);
        if (deleted != nullptr) *deleted = 0;
        if (count == 0) return CACHEKIT_OK;
        std::vector<std::string_view> ks = packed_keys(keys, key_offsets, count);
        const uint64_t n = b.delete_many(ks, b.default_deadline());
        if (deleted != nullptr) *deleted = n;
        return CACHEKIT_OK;
    });
}

CACHEKIT_API int cachekit_backend_health(cachekit_backend *backend, double *latency_ms) noexcept {
    return guarded([&] {
        auto &b = backend_of(backend);
        if (latency_ms != nullptr) *latency_ms = 0;
        l2::Health h = b.health(b.default_deadline());
        if (latency_ms != nullptr) *latency_ms = h.latency_ms;
        if (!h.ok) fail(CACHEKIT_EBACKEND, "backend unhealthy: " + h.detail);
        return CACHEKIT_OK;
    });
}

CACHEKIT_API int cachekit_backend_stats_get(cachekit_backend *backend, cachekit_backend_stats *out) noexcept {
    return guarded([&] {
        auto &b = backend_of(backend);
        require(out != nullptr, "out is NULL");
        size_t size = out->struct_size;
        require(size >= sizeof(size_t), "out->struct_size is too small");
        l2::ResilienceStats s = b.stats();
#define CK_PUT(field, value) \
    if (CK_FIELD_FITS(cachekit_backend_stats, field, size)) out->field = (value);
        CK_PUT(breaker_state, s.breaker_state)
        CK_PUT(calls, s.calls)
        CK_PUT(failures, s.failures)
        CK_PUT(timeouts, s.timeouts)
        CK_PUT(rejected_open, s.rejected_open)
        CK_PUT(rejected_busy, s.rejected_busy)
        CK_PUT(degraded_reads, s.degraded_reads)
        CK_PUT(skipped_writes, s.skipped_writes)
        CK_PUT(breaker_opened, s.breaker_opened)
        CK_PUT(latency_ms_sum, s.latency_ms_sum)
        CK_PUT(latency_count, s.latency_count)
#undef CK_PUT
        return CACHEKIT_OK;
    });
}

}  // extern "C"

extern "C" {

CACHEKIT_API int cachekit_backend_health_get(cachekit_backend *backend, cachekit_health *out) noexcept {
    return guarded([&] {
        capi::put_health(out, &backend_of(backend), CACHEKIT_COHERENCE_OFF);
        return CACHEKIT_OK;
    });
}

}  // extern "C"
