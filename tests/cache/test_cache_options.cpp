// Issue 5, item 8: options, the environment, and argument validation of
// every cachekit_cache_* entry point (public C API).
//  - CACHEKIT_REDIS_URL and CACHEKIT_FILE_CACHE_DIR together -> EINVAL;
//  - encryption on without any key -> EINVAL;
//  - an explicit backend_url wins over the environment; "none" is L1 only;
//  - interop mode with a key prefix -> EINVAL (no prefix: the bare key);
//  - NULL / empty / NaN / negative arguments and values that are not one
//    MessagePack document -> EINVAL with a message;
//  - a value over max_value_bytes: put -> ETOOBIG (counted too_large),
//    get_or_load returns it but does not store it.
// The environment is process-wide: every test restores what it sets.
#include <cstddef>
#include <filesystem>

#include "cache_test_util.hpp"

namespace {

using ct::Buf;
using ct::CacheHandle;

const char *const kEnvNames[] = {
    "CACHEKIT_REDIS_URL", "REDIS_URL", "CACHEKIT_FILE_CACHE_DIR", "CACHEKIT_MASTER_KEY",
    "CACHEKIT_PREVIOUS_MASTER_KEYS", "CACHEKIT_ENCRYPTION_FAIL_CLOSED", "CACHEKIT_MAX_VALUE_SIZE",
    "CACHEKIT_L1_MAX_SIZE_MB", "CACHEKIT_L1_CLEANUP_INTERVAL_SECONDS", "CACHEKIT_L1_ADMISSION",
};

void clear_env() {
    for (const char *n : kEnvNames) unsetenv(n);
}

int setup(void **) {
    clear_env();
    return 0;
}
int teardown(void **) {
    clear_env();
    return 0;
}

CacheHandle l1_only(uint64_t max_value_bytes = 0) {
    cachekit_cache_options o = ct::default_options();
    o.backend_url = "none";
    o.max_value_bytes = max_value_bytes;
    return ct::new_cache(&o);
}

void test_two_l2_selectors_in_env(void **) {
    ct::TempDir dir("opts-both");
    setenv("CACHEKIT_REDIS_URL", "redis://127.0.0.1:1", 1);
    setenv("CACHEKIT_FILE_CACHE_DIR", dir.path().c_str(), 1);
    cachekit_cache *c = reinterpret_cast<cachekit_cache *>(0x1);
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL, cachekit_cache_new(&c, nullptr));
    assert_null(c);
    cachekit_cache_options o = ct::default_options();
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL, cachekit_cache_new(&c, &o));
    assert_true(ct::contains(cachekit_error_last_message(), "CACHEKIT_FILE_CACHE_DIR"));

    // An explicit backend wins over the environment: no conflict, no Redis.
    o.backend_url = "memory://";
    {
        CacheHandle memory = ct::new_cache(&o);
        CT_OK(cachekit_cache_put(memory.get(), "e", "k", 1, "\xa1v", 2, CACHEKIT_TTL_DEFAULT));
    }
    cachekit_cache_free(nullptr);  // accepted
    o.backend_url = "none";
    ct::new_cache(&o).reset();
    // So does a borrowed backend handle.
    ct::BackendHandle b = ct::open_backend("memory://");
    o.backend_url = nullptr;
    o.backend = b.get();
    CacheHandle borrowing = ct::new_cache(&o);
    CT_OK(cachekit_cache_put(borrowing.get(), "e", "k", 1, "\xa1v", 2, CACHEKIT_TTL_DEFAULT));
    CT_OK(cachekit_backend_exists(b.get(), "k", 1));
}

void test_file_dir_from_env(void **) {
    ct::TempDir dir("opts-env");
    setenv("CACHEKIT_FILE_CACHE_DIR", dir.path().c_str(), 1);
    {
        CacheHandle writer = ct::new_cache(nullptr);
        CT_OK(cachekit_cache_put(writer.get(), "e", "ns:e:k", 6, "\xa5hello", 6, 60.0));
    }
    size_t files = 0;
    for (const auto &entry : std::filesystem::recursive_directory_iterator(dir.path()))
        files += entry.is_regular_file() ? 1 : 0;
    assert_true(files >= 1);
    // A new cache (empty L1) over the same directory reads it from L2.
    CacheHandle reader = ct::new_cache(nullptr);
    Buf out;
    cachekit_lookup info = CACHEKIT_LOOKUP_INIT;
    CT_OK(cachekit_cache_get(reader.get(), out.get(), &info, "e", "ns:e:k", 6));
    assert_int_equal(info.source, CACHEKIT_SOURCE_L2);
    assert_true(out.str() == "\xa5hello");
}

void test_encryption_needs_a_key(void **) {
    cachekit_cache_options o = ct::default_options();
    o.backend_url = "none";
    o.encryption = CACHEKIT_ON;
    cachekit_cache *c = nullptr;
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL, cachekit_cache_new(&c, &o));
    assert_null(c);
    // A malformed key is refused too.
    o.master_key_hex = "61";
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL, cachekit_cache_new(&c, &o));
    o.master_key_hex = nullptr;
    if (!cachekit_crypto_available()) return;
    // CACHEKIT_MASTER_KEY is a key source...
    setenv("CACHEKIT_MASTER_KEY", ct::kMasterKeyHex, 1);
    ct::new_cache(&o).reset();
    // ...but it does not turn encryption on by itself.
    ct::BackendHandle b = ct::open_backend("memory://");
    cachekit_cache_options plain = ct::default_options();
    plain.backend = b.get();
    CacheHandle plain_cache = ct::new_cache(&plain);
    CT_OK(cachekit_cache_put(plain_cache.get(), "e", "k", 1, "\xa5hello", 6, CACHEKIT_TTL_DEFAULT));
    Buf raw, meta;
    CT_OK(cachekit_backend_get(b.get(), raw.get(), "k", 1));
    size_t off = 0;
    CT_OK(cachekit_frame_decode(nullptr, meta.get(), &off, raw.b.ptr, raw.b.size));
    assert_false(ct::contains(meta.str(), "encrypted"));
}

void test_bad_options(void **) {
    cachekit_cache *c = nullptr;
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL, cachekit_cache_new(nullptr, nullptr));
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL, cachekit_cache_options_init(nullptr, sizeof(cachekit_cache_options)));
    cachekit_cache_options o;
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL, cachekit_cache_options_init(&o, 1));

    auto refused = [&](const char *what, const std::function<void(cachekit_cache_options &)> &tweak) {
        cachekit_cache_options bad = ct::default_options();
        bad.backend_url = "none";
        tweak(bad);
        cachekit_error_clear();
        int rc = cachekit_cache_new(&c, &bad);
        CacheHandle unexpected(rc == CACHEKIT_OK ? c : nullptr);
        if (rc != CACHEKIT_EINVAL) fail_msg("%s: cachekit_cache_new -> %d", what, rc);
        if (!cachekit_error_last_message()[0]) fail_msg("%s: no message", what);
        assert_null(c);
    };
    refused("struct_size 0", [](cachekit_cache_options &x) { x.struct_size = 0; });
    refused("format 7", [](cachekit_cache_options &x) { x.format = 7; });
    refused("switch 2", [](cachekit_cache_options &x) { x.l1 = 2; });
    refused("swr ratio 1.5", [](cachekit_cache_options &x) { x.swr_threshold_ratio = 1.5; });
    refused("swr ratio -0.5", [](cachekit_cache_options &x) { x.swr_threshold_ratio = -0.5; });
    refused("negative default TTL", [](cachekit_cache_options &x) { x.default_ttl_seconds = -3; });
    refused("NaN default TTL", [](cachekit_cache_options &x) { x.default_ttl_seconds = std::nan(""); });
    refused("empty tenant", [](cachekit_cache_options &x) { x.tenant = ""; });
    refused("interop with integrity", [](cachekit_cache_options &x) {
        x.format = CACHEKIT_FORMAT_INTEROP;
        x.integrity = CACHEKIT_ON;
    });
    refused("interop with a key prefix", [](cachekit_cache_options &x) {
        x.format = CACHEKIT_FORMAT_INTEROP;
        x.key_prefix = "t:default:";
    });
    refused("bad URL", [](cachekit_cache_options &x) { x.backend_url = "ftp://127.0.0.1/"; });
    refused("relative file URL", [](cachekit_cache_options &x) { x.backend_url = "file://relative/dir"; });
    setenv("CACHEKIT_L1_MAX_SIZE_MB", "lots", 1);
    refused("CACHEKIT_L1_MAX_SIZE_MB=lots", [](cachekit_cache_options &) {});
    unsetenv("CACHEKIT_L1_MAX_SIZE_MB");
    setenv("CACHEKIT_MAX_VALUE_SIZE", "-5", 1);
    refused("CACHEKIT_MAX_VALUE_SIZE=-5", [](cachekit_cache_options &) {});
    unsetenv("CACHEKIT_MAX_VALUE_SIZE");
    refused("l1_admission 5", [](cachekit_cache_options &x) { x.l1_admission = 5; });
    setenv("CACHEKIT_L1_ADMISSION", "lfu", 1);
    refused("CACHEKIT_L1_ADMISSION=lfu", [](cachekit_cache_options &) {});
    unsetenv("CACHEKIT_L1_ADMISSION");

    // An older, smaller options struct (only struct_size and backend_url) works.
    struct {
        size_t struct_size;
        const char *backend_url;
    } small = {sizeof small, "none"};
    ct::new_cache(reinterpret_cast<const cachekit_cache_options *>(&small)).reset();
}

// Interop entries are stored under the bare interop/v1 key (protocol: no
// key prefix), so a prefix with CACHEKIT_FORMAT_INTEROP is refused with a
// message that says so; NULL and "" are no prefix, and auto mode keeps its.
void test_interop_refuses_a_key_prefix(void **) {
    ct::BackendHandle backend = ct::open_backend("memory://");
    cachekit_cache_options o = ct::default_options();
    o.backend = backend.get();
    o.format = CACHEKIT_FORMAT_INTEROP;
    o.key_prefix = "app:";
    cachekit_cache *c = nullptr;
    cachekit_error_clear();
    CT_EXPECT(CACHEKIT_EINVAL, cachekit_cache_new(&c, &o));
    assert_null(c);
    assert_true(ct::contains(cachekit_error_last_message(), "interop mode keys carry no prefix"));

    const std::string key = "inter:get-user:0123";
    for (const char *none : {static_cast<const char *>(nullptr), ""}) {
        o.key_prefix = none;
        CacheHandle cache = ct::new_cache(&o);
        CT_OK(cachekit_cache_put(cache.get(), "inter", key.data(), key.size(), "\x07", 1, CACHEKIT_TTL_DEFAULT));
        Buf raw;  // stored under the bare key
        CT_OK(cachekit_backend_get(backend.get(), raw.get(), key.data(), key.size()));
        assert_true(raw.str() == "\x07");
    }

    o.format = CACHEKIT_FORMAT_AUTO;
    o.key_prefix = "t:default:";
    ct::new_cache(&o).reset();  // auto mode: a prefix is fine
}

void test_none_is_l1_only(void **) {
    setenv("CACHEKIT_REDIS_URL", "redis://127.0.0.1:1", 1);  // ignored: the option names the backend
    CacheHandle cache = l1_only();
    cachekit_cache *c = cache.get();
    CT_OK(cachekit_cache_put(c, "n", "ns:n:k", 6, "\xa5hello", 6, CACHEKIT_TTL_DEFAULT));
    Buf out;
    cachekit_lookup info = CACHEKIT_LOOKUP_INIT;
    CT_OK(cachekit_cache_get(c, out.get(), &info, "n", "ns:n:k", 6));
    assert_int_equal(info.source, CACHEKIT_SOURCE_L1);
    assert_true(out.str() == "\xa5hello");
    cachekit_cache_stats s = ct::stats_of(c);
    assert_int_equal(s.backend_errors + s.timeouts, 0);
    assert_int_equal(s.l1_entries, 1);
    assert_int_equal(s.breaker_state, CACHEKIT_BREAKER_CLOSED);
    Buf text;
    CT_OK(cachekit_cache_metrics_text(c, text.get()));
    assert_false(ct::contains(text.str(), "circuit_breaker_state"));
    // Invalidation works without an L2.
    CT_OK(cachekit_cache_invalidate_namespace(c, "n"));
    CT_EXPECT(CACHEKIT_ENOTFOUND, cachekit_cache_get(c, out.get(), nullptr, "n", "ns:n:k", 6));
}

// l1_admission reaches the core's L1: TinyLFU's counters show in the
// metrics text; the environment chooses when the field is left at 0.
void test_l1_admission(void **) {
    auto admission_metrics = [](int field) {
        cachekit_cache_options o = ct::default_options();
        o.backend_url = "none";
        o.l1_admission = field;
        CacheHandle cache = ct::new_cache(&o);
        Buf text;
        CT_OK(cachekit_cache_metrics_text(cache.get(), text.get()));
        return ct::contains(text.str(), "cachekit_l1_admitted_total");
    };
    assert_false(admission_metrics(CACHEKIT_L1_ADMISSION_LRU));
    assert_true(admission_metrics(CACHEKIT_L1_ADMISSION_TINYLFU));
    setenv("CACHEKIT_L1_ADMISSION", "TinyLFU", 1);
    assert_true(admission_metrics(CACHEKIT_L1_ADMISSION_LRU));
    setenv("CACHEKIT_L1_ADMISSION", "lru", 1);
    assert_false(admission_metrics(CACHEKIT_L1_ADMISSION_LRU));
    assert_true(admission_metrics(CACHEKIT_L1_ADMISSION_TINYLFU));  // the field wins
}

int noop_loader(cachekit_load *load, void *) { return cachekit_load_set_value(load, "\xc0", 1); }

void test_argument_validation(void **) {
    CacheHandle cache = l1_only();
    cachekit_cache *c = cache.get();
    Buf out;
    const char *k = "ns:v:k";
    const size_t kl = 6;
    const std::string v = "\xa5hello";
    const std::string long_key(65537, 'k');
    cachekit_lookup bad_info = CACHEKIT_LOOKUP_INIT;
    bad_info.struct_size = 1;

    // get
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL, cachekit_cache_get(nullptr, out.get(), nullptr, "v", k, kl));
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL, cachekit_cache_get(c, nullptr, nullptr, "v", k, kl));
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL, cachekit_cache_get(c, out.get(), nullptr, "v", nullptr, kl));
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL, cachekit_cache_get(c, out.get(), nullptr, "v", k, 0));
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL, cachekit_cache_get(c, out.get(), nullptr, "v", long_key.data(), long_key.size()));
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL, cachekit_cache_get(c, out.get(), &bad_info, "v", k, kl));
    // A lookup record of the first form (before temporal_keys) is still served, that field untouched.
    cachekit_lookup first_form = CACHEKIT_LOOKUP_INIT;
    first_form.struct_size = offsetof(cachekit_lookup, temporal_keys);
    first_form.temporal_keys = 77;
    CT_EXPECT(CACHEKIT_ENOTFOUND, cachekit_cache_get(c, out.get(), &first_form, "v", k, kl));
    assert_int_equal(first_form.temporal_keys, 77);
    first_form.struct_size = offsetof(cachekit_lookup, temporal_keys) - 1;
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL, cachekit_cache_get(c, out.get(), &first_form, "v", k, kl));
    // A miss sets no message.
    cachekit_error_clear();
    CT_EXPECT(CACHEKIT_ENOTFOUND, cachekit_cache_get(c, out.get(), nullptr, "v", k, kl));
    assert_string_equal(cachekit_error_last_message(), "");

    // put
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL, cachekit_cache_put(nullptr, "v", k, kl, v.data(), v.size(), CACHEKIT_TTL_DEFAULT));
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL, cachekit_cache_put(c, "v", nullptr, kl, v.data(), v.size(), CACHEKIT_TTL_DEFAULT));
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL, cachekit_cache_put(c, "v", k, 0, v.data(), v.size(), CACHEKIT_TTL_DEFAULT));
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL, cachekit_cache_put(c, "v", k, kl, nullptr, 6, CACHEKIT_TTL_DEFAULT));
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL, cachekit_cache_put(c, "v", k, kl, v.data(), 0, CACHEKIT_TTL_DEFAULT));
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL, cachekit_cache_put(c, "v", k, kl, v.data(), v.size(), std::nan("")));
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL, cachekit_cache_put(c, "v", k, kl, v.data(), v.size(), -2.0));
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL, cachekit_cache_put(c, "v", k, kl, v.data(), v.size(), -0.5));
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL, cachekit_cache_put(c, "v", k, kl, v.data(), v.size(), HUGE_VAL));
    // Not one MessagePack document: truncated, two documents, a reserved byte.
    for (const std::string &bad : {std::string("\xa5hel"), std::string("\x01\x02"), std::string("\xc1"),
                                   std::string("\x92\x01")}) {
        CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL,
                              cachekit_cache_put(c, "v", k, kl, bad.data(), bad.size(), CACHEKIT_TTL_DEFAULT));
        assert_true(ct::contains(cachekit_error_last_message(), "MessagePack"));
    }
    CT_EXPECT(CACHEKIT_ENOTFOUND, cachekit_cache_get(c, out.get(), nullptr, "v", k, kl));
    // Valid TTLs: the default, none, a positive number; NULL namespace is "".
    CT_OK(cachekit_cache_put(c, "v", k, kl, v.data(), v.size(), CACHEKIT_TTL_DEFAULT));
    CT_OK(cachekit_cache_put(c, "v", k, kl, v.data(), v.size(), 0));
    CT_OK(cachekit_cache_put(c, "v", k, kl, v.data(), v.size(), 0.0001));
    CT_OK(cachekit_cache_put(c, nullptr, "x", 1, v.data(), v.size(), 30));
    CT_OK(cachekit_cache_get(c, out.get(), nullptr, nullptr, "x", 1));
    CT_OK(cachekit_cache_get(c, out.get(), nullptr, "", "x", 1));

    // get_or_load
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL, cachekit_cache_get_or_load(nullptr, out.get(), nullptr, "v", k, kl,
                                                                      CACHEKIT_TTL_DEFAULT, noop_loader, nullptr));
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL, cachekit_cache_get_or_load(c, nullptr, nullptr, "v", k, kl,
                                                                      CACHEKIT_TTL_DEFAULT, noop_loader, nullptr));
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL, cachekit_cache_get_or_load(c, out.get(), nullptr, "v", nullptr, kl,
                                                                      CACHEKIT_TTL_DEFAULT, noop_loader, nullptr));
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL, cachekit_cache_get_or_load(c, out.get(), nullptr, "v", k, 0,
                                                                      CACHEKIT_TTL_DEFAULT, noop_loader, nullptr));
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL, cachekit_cache_get_or_load(c, out.get(), nullptr, "v", k, kl,
                                                                      CACHEKIT_TTL_DEFAULT, nullptr, nullptr));
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL, cachekit_cache_get_or_load(c, out.get(), nullptr, "v", "new", 3,
                                                                      std::nan(""), noop_loader, nullptr));
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL, cachekit_cache_get_or_load(c, out.get(), nullptr, "v", "new", 3, -7.0,
                                                                      noop_loader, nullptr));
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL, cachekit_cache_get_or_load(c, out.get(), &bad_info, "v", k, kl,
                                                                      CACHEKIT_TTL_DEFAULT, noop_loader, nullptr));
    // A loader whose value is not MessagePack: EINVAL, nothing stored.
    auto bad_value = [](cachekit_load *load, void *) { return cachekit_load_set_value(load, "\xa5he", 3); };
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL, cachekit_cache_get_or_load(c, out.get(), nullptr, "v", "bv", 2,
                                                                      CACHEKIT_TTL_DEFAULT, bad_value, nullptr));
    CT_EXPECT(CACHEKIT_ENOTFOUND, cachekit_cache_get(c, out.get(), nullptr, "v", "bv", 2));
    // The load context's setters check their arguments, in and out of a loader.
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL, cachekit_load_set_value(nullptr, "\xc0", 1));
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL, cachekit_load_set_ttl(nullptr, 1.0));
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL, cachekit_load_set_error(nullptr, "x"));
    struct SetterChecks {
        int empty_value = 1, null_value = 1, nan_ttl = 1, neg_ttl = 1, good_ttl = 1;
        static int run(cachekit_load *load, void *p) {
            auto *s = static_cast<SetterChecks *>(p);
            s->empty_value = cachekit_load_set_value(load, "\xc0", 0);
            s->null_value = cachekit_load_set_value(load, nullptr, 4);
            s->nan_ttl = cachekit_load_set_ttl(load, std::nan(""));
            s->neg_ttl = cachekit_load_set_ttl(load, -4.0);
            s->good_ttl = cachekit_load_set_ttl(load, 0);
            return cachekit_load_set_value(load, "\xc3", 1);
        }
    } checks;
    CT_OK(cachekit_cache_get_or_load(c, out.get(), nullptr, "v", "setters", 7, CACHEKIT_TTL_DEFAULT, &SetterChecks::run,
                                     &checks));
    assert_int_equal(checks.empty_value, CACHEKIT_EINVAL);
    assert_int_equal(checks.null_value, CACHEKIT_EINVAL);
    assert_int_equal(checks.nan_ttl, CACHEKIT_EINVAL);
    assert_int_equal(checks.neg_ttl, CACHEKIT_EINVAL);
    assert_int_equal(checks.good_ttl, CACHEKIT_OK);
    assert_true(out.str() == "\xc3");

    // put_refresh
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL, cachekit_cache_put_refresh(nullptr, "v", k, kl, v.data(), v.size(),
                                                                      CACHEKIT_TTL_DEFAULT, 1));
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL, cachekit_cache_put_refresh(c, "v", nullptr, kl, v.data(), v.size(),
                                                                      CACHEKIT_TTL_DEFAULT, 1));
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL, cachekit_cache_put_refresh(c, "v", k, 0, v.data(), v.size(),
                                                                      CACHEKIT_TTL_DEFAULT, 1));
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL, cachekit_cache_put_refresh(c, "v", k, kl, v.data(), v.size(),
                                                                      CACHEKIT_TTL_DEFAULT, 0));
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL, cachekit_cache_put_refresh(c, "v", k, kl, v.data(), v.size(),
                                                                      std::nan(""), 1));
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL, cachekit_cache_put_refresh(c, "v", k, kl, "\xa5hel", 4,
                                                                      CACHEKIT_TTL_DEFAULT, 1));
    // A claim nobody handed out: nothing stored.
    CT_EXPECT(CACHEKIT_ENOTFOUND, cachekit_cache_put_refresh(c, "v", k, kl, v.data(), v.size(), CACHEKIT_TTL_DEFAULT,
                                                             987654321));

    // abandon_refresh
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL, cachekit_cache_abandon_refresh(nullptr, k, kl, 1));
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL, cachekit_cache_abandon_refresh(c, nullptr, kl, 1));
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL, cachekit_cache_abandon_refresh(c, k, 0, 1));
    CT_OK(cachekit_cache_abandon_refresh(c, k, kl, 42));  // unknown claims are ignored

    // invalidate / invalidate_namespace / clear
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL, cachekit_cache_invalidate(nullptr, "v", k, kl));
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL, cachekit_cache_invalidate(c, "v", nullptr, kl));
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL, cachekit_cache_invalidate(c, "v", k, 0));
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL, cachekit_cache_invalidate(c, "v", long_key.data(), long_key.size()));
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL, cachekit_cache_invalidate_namespace(nullptr, "v"));
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL, cachekit_cache_clear(nullptr));
    CT_OK(cachekit_cache_invalidate(c, "v", "absent", 6));
    CT_OK(cachekit_cache_invalidate_namespace(c, nullptr));
    CT_OK(cachekit_cache_clear(c));

    // stats / metrics
    cachekit_cache_stats s;
    s.struct_size = sizeof s;
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL, cachekit_cache_stats_get(nullptr, &s, nullptr));
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL, cachekit_cache_stats_get(c, nullptr, nullptr));
    s.struct_size = 0;
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL, cachekit_cache_stats_get(c, &s, nullptr));
    // An older, shorter stats struct gets only the fields that fit.
    struct {
        size_t struct_size;
        uint64_t l1_hits, l2_hits;
        uint64_t guard;
    } older = {sizeof(size_t) + 2 * sizeof(uint64_t), 0, 0, 0xfeedfacecafebeefULL};
    CT_OK(cachekit_cache_stats_get(c, reinterpret_cast<cachekit_cache_stats *>(&older), nullptr));
    assert_true(older.l1_hits > 0);
    assert_true(older.guard == 0xfeedfacecafebeefULL);
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL, cachekit_cache_metrics_text(nullptr, out.get()));
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EINVAL, cachekit_cache_metrics_text(c, nullptr));
}

void test_value_over_max_value_bytes(void **) {
    CacheHandle cache = l1_only(32);
    cachekit_cache *c = cache.get();
    const std::string fits = ct::mp_str_of_size(32), big = ct::mp_str_of_size(34);
    assert_int_equal(fits.size(), 32u);
    assert_int_equal(big.size(), 34u);
    CT_OK(cachekit_cache_put(c, "b", "fits", 4, fits.data(), fits.size(), CACHEKIT_TTL_DEFAULT));
    CT_FAILS_WITH_MESSAGE(CACHEKIT_ETOOBIG, cachekit_cache_put(c, "b", "big", 3, big.data(), big.size(), CACHEKIT_TTL_DEFAULT));
    Buf out;
    CT_EXPECT(CACHEKIT_ENOTFOUND, cachekit_cache_get(c, out.get(), nullptr, "b", "big", 3));
    // Also over an existing key. (Whether the older value should then stay or
    // go is not specified; the L1 engine removes it, the cache keeps it.)
    CT_FAILS_WITH_MESSAGE(CACHEKIT_ETOOBIG, cachekit_cache_put(c, "b", "fits", 4, big.data(), big.size(), CACHEKIT_TTL_DEFAULT));
    assert_int_equal(ct::stats_of(c, "b").too_large, 2);

    // get_or_load hands an oversized value back but does not store it.
    ct::ValueLoader loader{big};
    cachekit_lookup info = CACHEKIT_LOOKUP_INIT;
    CT_OK(cachekit_cache_get_or_load(c, out.get(), &info, "b", "loaded", 6, CACHEKIT_TTL_DEFAULT, &ct::ValueLoader::run, &loader));
    assert_true(out.str() == big);
    assert_int_equal(info.source, CACHEKIT_SOURCE_LOADED);
    CT_EXPECT(CACHEKIT_ENOTFOUND, cachekit_cache_get(c, out.get(), nullptr, "b", "loaded", 6));
    CT_OK(cachekit_cache_get_or_load(c, out.get(), &info, "b", "loaded", 6, CACHEKIT_TTL_DEFAULT, &ct::ValueLoader::run, &loader));
    assert_int_equal(loader.calls.load(), 2);
    cachekit_cache_stats s = ct::stats_of(c, "b");
    assert_int_equal(s.too_large, 4);
    assert_int_equal(s.stores, 1);
    assert_int_equal(s.loads, 2);

    // CACHEKIT_MAX_VALUE_SIZE sets the same limit; the option wins over it.
    setenv("CACHEKIT_MAX_VALUE_SIZE", "32", 1);
    cachekit_cache_options o = ct::default_options();
    o.backend_url = "none";
    cache = ct::new_cache(&o);
    CT_EXPECT(CACHEKIT_ETOOBIG,
              cachekit_cache_put(cache.get(), "b", "big", 3, big.data(), big.size(), CACHEKIT_TTL_DEFAULT));
    o.max_value_bytes = 64;
    cache = ct::new_cache(&o);
    CT_OK(cachekit_cache_put(cache.get(), "b", "big", 3, big.data(), big.size(), CACHEKIT_TTL_DEFAULT));
}

// A TTL passed to put bounds the entry: it expires from L1 (and L2).
void test_ttl_is_applied(void **) {
    ct::BackendHandle backend = ct::open_backend("memory://");
    cachekit_backend *b = backend.get();
    cachekit_cache_options o = ct::default_options();
    o.backend = b;
    o.default_ttl_seconds = 120;
    CacheHandle cache = ct::new_cache(&o);
    cachekit_cache *c = cache.get();
    CT_OK(cachekit_cache_put(c, "t", "short", 5, "\xc3", 1, 0.05));
    CT_OK(cachekit_cache_put(c, "t", "default", 7, "\xc3", 1, CACHEKIT_TTL_DEFAULT));
    CT_OK(cachekit_cache_put(c, "t", "forever", 7, "\xc3", 1, 0));
    double ttl = 0;
    CT_OK(cachekit_backend_ttl(b, &ttl, "default", 7));
    assert_true(ttl > 60 && ttl <= 120);
    CT_OK(cachekit_backend_ttl(b, &ttl, "forever", 7));
    assert_true(ttl == -1.0);
    Buf out;
    assert_true(ct::eventually(
        [&] { return cachekit_cache_get(c, out.get(), nullptr, "t", "short", 5) == CACHEKIT_ENOTFOUND; }, 60s, 20ms));
    CT_OK(cachekit_cache_get(c, out.get(), nullptr, "t", "default", 7));
    CT_OK(cachekit_cache_get(c, out.get(), nullptr, "t", "forever", 7));
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_two_l2_selectors_in_env, setup, teardown),
        cmocka_unit_test_setup_teardown(test_file_dir_from_env, setup, teardown),
        cmocka_unit_test_setup_teardown(test_encryption_needs_a_key, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_options, setup, teardown),
        cmocka_unit_test_setup_teardown(test_interop_refuses_a_key_prefix, setup, teardown),
        cmocka_unit_test_setup_teardown(test_none_is_l1_only, setup, teardown),
        cmocka_unit_test_setup_teardown(test_l1_admission, setup, teardown),
        cmocka_unit_test_setup_teardown(test_argument_validation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_value_over_max_value_bytes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ttl_is_applied, setup, teardown),
    };
    return cmocka_run_group_tests_name("cache_options", tests, nullptr, nullptr);
}
