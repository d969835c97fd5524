#include "cache/cache_config.hpp"

#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <cctype>
#include <cstdio>
#include <cstring>

#include <sys/stat.h>
#include <unistd.h>

#include "util/error.hpp"

namespace cachekit::cache {
namespace {

using std::chrono::milliseconds;

const char *env(const char *name) {
    const char *v = std::getenv(name);
    return v && *v ? v : nullptr;
}

bool switch_on(int value, bool fallback) {
    if (value == CACHEKIT_ON) return true;
    if (value == CACHEKIT_OFF) return false;
    if (value != CACHEKIT_DEFAULT) fail(CACHEKIT_EINVAL, "a switch option is CACHEKIT_DEFAULT, CACHEKIT_ON or CACHEKIT_OFF");
    return fallback;
}

bool env_true(const char *name) {
    const char *v = env(name);
    if (!v) return false;
    std::string s(v);
    for (char &c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
    return s == "1" || s == "true" || s == "yes" || s == "on";
}

uint64_t env_number(const char *name, uint64_t fallback, uint64_t scale) {
    const char *v = env(name);
    if (!v) return fallback;
    char *end = nullptr;
    double d = std::strtod(v, &end);
    if (end == v || *end != '\0' || !std::isfinite(d) || d <= 0)
        fail(CACHEKIT_EINVAL, std::string(name) + " must be a positive number, got \"" + v + "\"");
    return uint64_t(d * double(scale));
}

// The field when set, else CACHEKIT_L1_ADMISSION (lru | tinylfu), else LRU.
l1::AdmissionPolicy l1_admission_of(int field) {
    if (field != CACHEKIT_L1_ADMISSION_LRU) return l1::admission_policy(field, "l1_admission");
    const char *v = env("CACHEKIT_L1_ADMISSION");
    if (!v) return l1::AdmissionPolicy::Lru;
    std::string s(v);
    for (char &c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
    if (s == "lru") return l1::AdmissionPolicy::Lru;
    if (s == "tinylfu") return l1::AdmissionPolicy::TinyLfu;
    fail(CACHEKIT_EINVAL, std::string("CACHEKIT_L1_ADMISSION must be \"lru\" or \"tinylfu\", got \"") + v + "\"");
}

l2::Ttl ttl_of(double seconds, const char *what) {
    if (!std::isfinite(seconds) || seconds < 0) fail(CACHEKIT_EINVAL, std::string(what) + " must be finite and >= 0");
    if (seconds == 0) return std::nullopt;
    double ms = std::ceil(seconds * 1000.0);
    return milliseconds(int64_t(ms < 1 ? 1 : ms));
}

// The embedded default L2 directory, per user so another local user can
// neither block nor read it: $XDG_CACHE_HOME/cachekit (an absolute path),
// else $TMPDIR (or /tmp)/cachekit-<euid>. The file backend creates it 0700;
// one that exists must be a directory (not a symlink) of this user that
// nobody else may enter, else CACHEKIT_EINVAL.
std::string default_file_dir() {
    const char *xdg = env("XDG_CACHE_HOME");
    std::string dir = xdg && xdg[0] == '/'
                          ? std::string(xdg) + "/cachekit"
                          : std::string(env("TMPDIR") ? env("TMPDIR") : "/tmp") + "/cachekit-" +
                                std::to_string(::geteuid());
    struct stat st;
    if (::lstat(dir.c_str(), &st) != 0) return dir;  // missing: created 0700 by the backend, which re-checks
    std::string why;
    if (S_ISLNK(st.st_mode)) why = "is a symlink";
    else if (!S_ISDIR(st.st_mode)) why = "is not a directory";
    else if (st.st_uid != ::geteuid()) why = "is owned by uid " + std::to_string(st.st_uid) + ", not " + std::to_string(::geteuid());
    else if ((st.st_mode & 077) != 0) {
        char mode[8];
        std::snprintf(mode, sizeof mode, "%04o", unsigned(st.st_mode & 07777));
        why = std::string("is open to group or others (mode ") + mode + ", want 0700)";
    }
    if (!why.empty())
        fail(CACHEKIT_EINVAL, "the default L2 directory " + dir + " " + why +
                                  " (refused: fix it, or choose an L2 with backend_url or CACHEKIT_FILE_CACHE_DIR)");
    return dir;
}

}  // namespace

cachekit_cache_options default_cache_options() {
    cachekit_cache_options o;
    std::memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    return o;
}

cachekit_cache_options read_cache_options(const cachekit_cache_options *opts) {
    cachekit_cache_options o = default_cache_options();
    if (!opts) return o;
    if (opts->struct_size < sizeof(size_t)) fail(CACHEKIT_EINVAL, "opts->struct_size is too small");
    // Copy what the caller's (possibly older, smaller) struct holds.
    std::memcpy(&o, opts, std::min(opts->struct_size, sizeof o));
    o.struct_size = sizeof o;
    return o;
}

CacheConfig resolve_config(const cachekit_cache_options &o, const BorrowedBackend &borrowed,
                           const std::function<l2::OpenOptions(const cachekit_backend_options *)> &open_options) {
    CacheConfig c;
    if (o.format != CACHEKIT_FORMAT_AUTO && o.format != CACHEKIT_FORMAT_INTEROP && o.format != CACHEKIT_FORMAT_AUTO_PYTHON &&
        o.format != CACHEKIT_FORMAT_PLAIN)
        fail(CACHEKIT_EINVAL, "format is CACHEKIT_FORMAT_AUTO, CACHEKIT_FORMAT_INTEROP, "
                              "CACHEKIT_FORMAT_AUTO_PYTHON or CACHEKIT_FORMAT_PLAIN");
    // Plain is interop/v1's stored form; only the key rule below tells them apart.
    c.value.format = o.format == CACHEKIT_FORMAT_INTEROP || o.format == CACHEKIT_FORMAT_PLAIN ? Format::Interop : Format::Auto;
    if (o.format == CACHEKIT_FORMAT_AUTO_PYTHON) c.value.serializer = "auto";
    c.value.integrity = switch_on(o.integrity, true);
    if (c.value.format == Format::Interop && o.integrity == CACHEKIT_ON)
        fail(CACHEKIT_EINVAL, "interop mode stores plain MessagePack: integrity (the envelope) is an auto-mode option");
    c.value.tenant = o.tenant ? o.tenant : "default";
    if (c.value.tenant.empty() || c.value.tenant.size() > 1024) fail(CACHEKIT_EINVAL, "a tenant id holds 1..1024 bytes");

    // Encryption: on only when asked; the environment only supplies keys.
    if (switch_on(o.encryption, false)) {
        const char *master = o.master_key_hex ? o.master_key_hex : env("CACHEKIT_MASTER_KEY");
        if (!master) fail(CACHEKIT_EINVAL, "encryption is on but there is no master key (master_key_hex or CACHEKIT_MASTER_KEY)");
        const char *previous = o.previous_keys_hex ? o.previous_keys_hex : env("CACHEKIT_PREVIOUS_MASTER_KEYS");
        c.keyring = crypto::Keyring::from_hex(master, previous ? previous : "");
        crypto::require_aes_gcm();
    } else if (c.value.format == Format::Auto) {
        // Encryption off, but a key source present: keep the reference SDK's
        // legacy-decrypt read, so an encrypted frame a still-encrypting peer
        // wrote is opened rather than recomputed. Writes stay plaintext.
        // Interop entries carry no header saying they are encrypted, so there
        // the configuration alone decides (the reference never decrypts).
        // A key that cannot be used only loses that read: it never stops a
        // plaintext cache.
        const char *master = o.master_key_hex ? o.master_key_hex : env("CACHEKIT_MASTER_KEY");
        if (master && *master && crypto::aes_gcm_available()) {
            const char *previous = o.previous_keys_hex ? o.previous_keys_hex : env("CACHEKIT_PREVIOUS_MASTER_KEYS");
            try {
                c.read_keyring = crypto::Keyring::from_hex(master, previous ? previous : "");
            } catch (const Error &) {
                c.read_keyring.reset();
            }
        }
    }

    c.key_prefix = o.key_prefix ? o.key_prefix : "";
    // Interop entries live under the bare interop/v1 key, where every SDK
    // looks (protocol: no key prefix, no client namespace); a prefixed one
    // would be read by nobody else. The prefix comes only from the options
    // (no environment variable sets it), so this is the one place to refuse.
    if (o.format == CACHEKIT_FORMAT_INTEROP && !c.key_prefix.empty())
        fail(CACHEKIT_EINVAL, "interop mode keys carry no prefix: key_prefix must be NULL or \"\" with "
                              "CACHEKIT_FORMAT_INTEROP (got \"" + c.key_prefix.substr(0, 64) +
                                  "\"); CACHEKIT_FORMAT_PLAIN stores the same values under a prefix");
    c.default_ttl = ttl_of(o.default_ttl_seconds, "default_ttl_seconds");
    c.refresh_ttl_below = o.refresh_ttl_on_get;
    if (!(c.refresh_ttl_below >= 0 && c.refresh_ttl_below <= 1))
        fail(CACHEKIT_EINVAL, "refresh_ttl_on_get must be 0 (off) or a fraction in (0, 1]");

    c.l1_enabled = switch_on(o.l1, true);
    c.l1.max_bytes = o.l1_max_bytes ? o.l1_max_bytes : env_number("CACHEKIT_L1_MAX_SIZE_MB", 100ULL << 20, 1ULL << 20);
    c.l1.sweep_interval_ms =
        o.l1_sweep_interval_ms ? o.l1_sweep_interval_ms : env_number("CACHEKIT_L1_CLEANUP_INTERVAL_SECONDS", 30000, 1000);
    c.l1.admission = l1_admission_of(o.l1_admission);

    c.swr = switch_on(o.swr, false);
    c.swr_ratio = o.swr_threshold_ratio == 0 ? 0.5 : o.swr_threshold_ratio;
    if (!(c.swr_ratio > 0 && c.swr_ratio <= 1)) fail(CACHEKIT_EINVAL, "swr_threshold_ratio must be in (0, 1]");

    c.fail_closed = switch_on(o.fail_closed, false);
    c.verify_fail_closed = o.fail_closed == CACHEKIT_DEFAULT ? (c.keyring && env_true("CACHEKIT_ENCRYPTION_FAIL_CLOSED"))
                                                             : c.fail_closed;
    c.max_value_bytes = o.max_value_bytes ? o.max_value_bytes : env_number("CACHEKIT_MAX_VALUE_SIZE", 100ULL << 20, 1);
    c.value.max_payload_bytes = c.max_value_bytes;  // reads refuse what a write would not store
    c.load_timeout = milliseconds(o.load_timeout_ms ? o.load_timeout_ms : 30000);
    c.cross_process_lock = switch_on(o.cross_process_lock, false);
    c.lock_hold = milliseconds(o.lock_hold_ms ? o.lock_hold_ms : 30000);
    c.lock_wait = milliseconds(o.lock_wait_ms ? o.lock_wait_ms : 5000);

    // The backend: a borrowed handle, an explicit URL, or the environment
    // (one selector only), else the embedded default (default_file_dir).
    if (borrowed.backend) {
        l2::ResilientBackend *b = borrowed.backend;
        // A borrowed handle keeps its own policy: a fail-open handle turns
        // backend errors into misses before the cache sees them (documented).
        c.backend = std::shared_ptr<l2::Backend>(b, [](l2::Backend *) {});
        c.breaker_state = [b] { return int(b->breaker_state()); };
        c.resilient = b;
        c.l2_timeout = b->config().command_timeout;
        return c;
    }
    std::string url;
    if (o.backend_url) {
        url = o.backend_url;
    } else {
        const char *redis = env("CACHEKIT_REDIS_URL");
        const char *dir = env("CACHEKIT_FILE_CACHE_DIR");
        if (redis && dir)
            fail(CACHEKIT_EINVAL, "both CACHEKIT_REDIS_URL and CACHEKIT_FILE_CACHE_DIR are set: choose one L2 backend");
        if (redis) url = redis;
        else if (dir) url = std::string("file://") + dir;
        else if (const char *plain = env("REDIS_URL")) url = plain;
        else {
            url = "file://";
            for (char ch : default_file_dir()) {  // a file URL's path is percent-decoded
                if (ch == '%' || ch == '?' || ch == '#') url += ch == '%' ? "%25" : ch == '?' ? "%3F" : "%23";
                else url += ch;
            }
        }
    }
    if (url == "none") return c;
    l2::OpenOptions oo = open_options(o.backend_options);
    if (oo.redis_max_reply_bytes == 0) oo.redis_max_reply_bytes = l2::reply_limit_for_values(c.max_value_bytes);
    oo.resilience.fail_open = false;  // the cache applies its own policy and counts by namespace
    std::shared_ptr<l2::ResilientBackend> owned = l2::open_backend(url, oo);
    l2::ResilientBackend *raw = owned.get();
    c.backend = owned;
    c.breaker_state = [raw] { return int(raw->breaker_state()); };
    c.resilient = raw;
    c.l2_timeout = oo.resilience.command_timeout;
    return c;
}

}  // namespace cachekit::cache
