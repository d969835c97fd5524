#include "capi/backend_handle.hpp"

#include <cmath>
#include <cstddef>
#include <string>

#include "capi/boundary.hpp"

namespace cachekit::capi {
namespace {

// The longest TTL taken through the C API (100 years, as for L1); the file
// backend takes at most 10 years.
constexpr double kMaxTtlSeconds = 3153600000.0;

const cachekit_backend_options kDefaults = {
    sizeof(cachekit_backend_options),
    10,            // pool_size
    500,           // connect_timeout_ms
    250,           // command_timeout_ms
    5,             // breaker_failures
    30000,         // breaker_recovery_ms
    3,             // breaker_half_open_calls
    3,             // breaker_successes
    0,             // breaker_disabled
    0,             // fail_closed
    0,             // max_concurrency
    100,           // backpressure_wait_ms
    1ULL << 30,    // file_max_bytes
    10000,         // file_max_entries
    100ULL << 20,  // file_max_value_bytes
    0,             // max_reply_bytes: the Redis default (or a cache's own)
    0,             // tls: as the URL says
    CACHEKIT_TLS_CERT_REQUIRED,
    0,             // tls_check_hostname: with cert_reqs required
    nullptr,       // tls_ca_certs
    nullptr,       // tls_ca_path
    nullptr,       // tls_certfile
    nullptr,       // tls_keyfile
};

// A C string option: NULL and "" are unset.
std::string text_of(const char *s) { return s != nullptr ? std::string(s) : std::string(); }

}  // namespace

cachekit_backend_options read_backend_options(const cachekit_backend_options *opts) {
    cachekit_backend_options o = kDefaults;
    if (opts == nullptr) return o;
    const size_t size = opts->struct_size;
    require(size >= sizeof(size_t), "opts->struct_size is too small");
    // Take the non-zero fields that fit entirely in the caller's struct.
#define CK_TAKE(field)                                                                         \
    if (offsetof(cachekit_backend_options, field) + sizeof(opts->field) <= size && opts->field != 0) \
        o.field = opts->field;
    CK_TAKE(pool_size)
    CK_TAKE(connect_timeout_ms)
    CK_TAKE(command_timeout_ms)
    CK_TAKE(breaker_failures)
    CK_TAKE(breaker_recovery_ms)
    CK_TAKE(breaker_half_open_calls)
    CK_TAKE(breaker_successes)
    CK_TAKE(breaker_disabled)
    CK_TAKE(fail_closed)
    CK_TAKE(max_concurrency)
    CK_TAKE(backpressure_wait_ms)
    CK_TAKE(file_max_bytes)
    CK_TAKE(file_max_entries)
    CK_TAKE(file_max_value_bytes)
    CK_TAKE(max_reply_bytes)
    CK_TAKE(tls)
    CK_TAKE(tls_cert_reqs)
    CK_TAKE(tls_check_hostname)
    CK_TAKE(tls_ca_certs)
    CK_TAKE(tls_ca_path)
    CK_TAKE(tls_certfile)
    CK_TAKE(tls_keyfile)
#undef CK_TAKE
    require(o.tls == 0 || o.tls == 1, "opts->tls must be 0 or 1");
    require(o.tls_cert_reqs >= CACHEKIT_TLS_CERT_REQUIRED && o.tls_cert_reqs <= CACHEKIT_TLS_CERT_NONE,
            "opts->tls_cert_reqs must be CACHEKIT_TLS_CERT_REQUIRED, _OPTIONAL or _NONE");
    require(o.tls_check_hostname >= -1 && o.tls_check_hostname <= 1,
            "opts->tls_check_hostname must be 0, CACHEKIT_TLS_CHECK_HOSTNAME_YES or _NO");
    return o;
}

l2::OpenOptions to_open_options(const cachekit_backend_options &o) {
    using std::chrono::milliseconds;
    l2::OpenOptions oo;
    oo.pool_size = o.pool_size;
    oo.connect_timeout = milliseconds(o.connect_timeout_ms);
    oo.file_max_bytes = o.file_max_bytes;
    oo.file_max_entries = o.file_max_entries;
    oo.file_max_value_bytes = o.file_max_value_bytes;
    oo.redis_max_reply_bytes = o.max_reply_bytes;
    // Copied here: the library keeps no caller pointer past the open.
    l2::RedisTls &t = oo.redis_tls;
    t.enabled = o.tls == 1;
    t.cert_reqs = o.tls_cert_reqs == CACHEKIT_TLS_CERT_NONE       ? l2::RedisTls::CertReqs::None
                  : o.tls_cert_reqs == CACHEKIT_TLS_CERT_OPTIONAL ? l2::RedisTls::CertReqs::Optional
                                                                  : l2::RedisTls::CertReqs::Required;
    t.check_hostname = o.tls_check_hostname == 0 ? -1 : o.tls_check_hostname > 0 ? 1 : 0;
    t.ca_certs = text_of(o.tls_ca_certs);
    t.ca_path = text_of(o.tls_ca_path);
    t.certfile = text_of(o.tls_certfile);
    t.keyfile = text_of(o.tls_keyfile);
    auto &r = oo.resilience;
    r.command_timeout = milliseconds(o.command_timeout_ms);
    r.breaker.failure_threshold = o.breaker_failures;
    r.breaker.recovery = milliseconds(o.breaker_recovery_ms);
    r.breaker.half_open_calls = o.breaker_half_open_calls;
    r.breaker.success_threshold = o.breaker_successes;
    r.breaker_enabled = o.breaker_disabled == 0;
    r.fail_open = o.fail_closed == 0;
    r.max_concurrency = o.max_concurrency;
    r.backpressure_wait = milliseconds(o.backpressure_wait_ms);
    return oo;
}

l2::Ttl ttl_arg(double ttl_seconds) {
    require(std::isfinite(ttl_seconds), "ttl_seconds is NaN or infinite");
    require(ttl_seconds >= 0, "ttl_seconds is negative");
    require(ttl_seconds <= kMaxTtlSeconds, "ttl_seconds is above 100 years");
    if (ttl_seconds == 0) return std::nullopt;
    double ms = std::ceil(ttl_seconds * 1000.0);
    return std::chrono::milliseconds(ms < 1 ? 1 : int64_t(ms));
}

}  // namespace cachekit::capi
