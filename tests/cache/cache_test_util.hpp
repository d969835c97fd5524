// Shared helpers of the cache handle tests (tests/cache). Public C API only
// (cachekit.h); the white-box test includes the core headers itself.
//
// Include after every C++ standard header the test needs: the last thing
// this pulls in is cmocka.h, whose function-like fail() macro clashes with
// libstdc++ headers included after it.
//
// Failed assertions unwind. cmocka reports a failure by longjmp, which skips
// C++ destructors, so a test that failed used to leak its cache (and leave
// its threads running). Here assert_*, fail_msg, fail() and skip() throw
// instead, and cmocka_unit_test* wrap each test so the exception is turned
// into cmocka's failure once the test's frames are gone: the RAII holders
// below (CacheHandle, BackendHandle, Buf) release on every path. Assert on
// the test's own thread only (a throw out of another thread terminates the
// process) and not inside loader callbacks (the C API does not pass
// exceptions through).
#pragma once

#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "cachekit/cachekit.h"

namespace ct {

using namespace std::chrono_literals;

// "61" x 32: the master key of the encryption tests.
inline const char *const kMasterKeyHex = "6161616161616161616161616161616161616161616161616161616161616161";

// A cachekit_buf that releases itself.
struct Buf {
    cachekit_buf b = CACHEKIT_BUF_INIT;
    Buf() = default;
    Buf(const Buf &) = delete;
    Buf &operator=(const Buf &) = delete;
    ~Buf() { cachekit_buf_dispose(&b); }
    cachekit_buf *get() { return &b; }
    std::string str() const { return b.ptr ? std::string(b.ptr, b.size) : std::string(); }
};

// One MessagePack str document holding `s`.
inline std::string mp_str(std::string_view s) {
    std::string out;
    const size_t n = s.size();
    if (n < 32) {
        out.push_back(char(0xa0 | n));
    } else if (n < 256) {
        out.push_back(char(0xd9));
        out.push_back(char(n));
    } else if (n < 65536) {
        out.push_back(char(0xda));
        out.push_back(char(n >> 8));
        out.push_back(char(n & 0xff));
    } else {
        out.push_back(char(0xdb));
        for (int shift = 24; shift >= 0; shift -= 8) out.push_back(char((n >> shift) & 0xff));
    }
    out.append(s);
    return out;
}

// A MessagePack str document of exactly `total` bytes: 1..32 (fixstr),
// 34..257 (str8) or 259..65538 (str16); 33 and 258 cannot be written.
inline std::string mp_str_of_size(size_t total, char fill = 'x') {
    if (total <= 32) return mp_str(std::string(total - 1, fill));
    if (total <= 257) return mp_str(std::string(total - 2, fill));
    return mp_str(std::string(total - 3, fill));
}

// An auto-mode key of the real shape, "ns:{ns}:func:m.f:args:{64 hex}:1s"
// (the hex derived from `tag`): clear and namespace invalidation delete only
// keys of the cache's shape.
inline std::string shaped_key(std::string_view ns, std::string_view tag) {
    uint64_t h = 1469598103934665603ull;  // FNV-1a
    for (unsigned char c : tag) h = (h ^ c) * 1099511628211ull;
    std::string hex;
    for (int i = 0; i < 64; ++i) hex.push_back("0123456789abcdef"[(h >> ((i % 16) * 4)) & 15]);
    return "ns:" + std::string(ns) + ":func:m.f:args:" + hex + ":1s";
}

inline bool contains(std::string_view haystack, std::string_view needle) {
    return haystack.find(needle) != std::string_view::npos;
}

inline cachekit_cache_options default_options() {
    cachekit_cache_options o;
    cachekit_cache_options_init(&o, sizeof o);
    return o;
}

// Backend options of the outage tests: 200 ms timeouts, a pool of two, and a
// breaker that opens after three failures and closes after one good trial.
inline cachekit_backend_options quick_breaker_options(uint32_t breaker_recovery_ms) {
    cachekit_backend_options bo = CACHEKIT_BACKEND_OPTIONS_INIT;
    bo.command_timeout_ms = 200;
    bo.connect_timeout_ms = 200;
    bo.breaker_failures = 3;
    bo.breaker_recovery_ms = breaker_recovery_ms;
    bo.breaker_half_open_calls = 1;
    bo.breaker_successes = 1;
    bo.pool_size = 2;
    return bo;
}

inline cachekit_cache_stats stats_of(cachekit_cache *c, const char *ns = nullptr) {
    cachekit_cache_stats s;
    std::memset(&s, 0, sizeof s);
    s.struct_size = sizeof s;
    if (cachekit_cache_stats_get(c, &s, ns) != CACHEKIT_OK) {
        std::fprintf(stderr, "cachekit_cache_stats_get: %s\n", cachekit_error_last_message());
        std::abort();
    }
    return s;
}

// A one-shot event threads can wait for.
class Gate {
public:
    void open() {
        {
            std::lock_guard lock(mu_);
            open_ = true;
        }
        cv_.notify_all();
    }
    void wait() {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return open_; });
    }
    // Waits at most `budget`; true when opened.
    bool wait_for(std::chrono::milliseconds budget) {
        std::unique_lock lock(mu_);
        return cv_.wait_for(lock, budget, [&] { return open_; });
    }

private:
    std::mutex mu_;
    std::condition_variable cv_;
    bool open_ = false;
};

// Joins `thread` on every path out of a scope (a failed assertion too),
// after calling `unblock`, which must let the thread finish.
class JoinOnExit {
public:
    JoinOnExit(std::thread &thread, std::function<void()> unblock) : thread_(thread), unblock_(std::move(unblock)) {}
    ~JoinOnExit() {
        unblock_();
        if (thread_.joinable()) thread_.join();
    }
    JoinOnExit(const JoinOnExit &) = delete;
    JoinOnExit &operator=(const JoinOnExit &) = delete;

private:
    std::thread &thread_;
    std::function<void()> unblock_;
};

// Retry `f` every `step` until it returns true or `budget` passes.
inline bool eventually(const std::function<bool()> &f, std::chrono::milliseconds budget,
                       std::chrono::milliseconds step = 100ms) {
    const auto until = std::chrono::steady_clock::now() + budget;
    for (;;) {
        if (f()) return true;
        if (std::chrono::steady_clock::now() >= until) return false;
        std::this_thread::sleep_for(step);
    }
}

// Sources by name, for messages.
inline const char *source_name(int s) {
    switch (s) {
    case CACHEKIT_SOURCE_NONE: return "none";
    case CACHEKIT_SOURCE_L1: return "l1";
    case CACHEKIT_SOURCE_L2: return "l2";
    case CACHEKIT_SOURCE_LOADED: return "loaded";
    case CACHEKIT_SOURCE_WAITED: return "waited";
    }
    return "?";
}

}  // namespace ct

// The tests write waits as 100ms, 10s.
using namespace std::chrono_literals;

#include <csetjmp>
#include <cstdarg>
#include <cstddef>

// cmocka's header declares no C linkage of its own.
extern "C" {
#include <cmocka.h>
}

namespace ct {

// Thrown by a failed assertion; `file` and `line` are __FILE__ / __LINE__.
struct TestFailure {
    const char *file;
    int line;
};
struct TestSkipped {
    const char *file;
    int line;
};

[[noreturn]] inline void fail_here(const char *file, int line) { throw TestFailure{file, line}; }

inline void check(bool ok, const char *expression, const char *file, int line) {
    if (ok) return;
    print_error("%s\n", expression);
    fail_here(file, line);
}

inline void check_int_equal(uintmax_t a, uintmax_t b, const char *file, int line) {
    if (a == b) return;
    print_error("%jd (%#jx) != %jd (%#jx)\n", intmax_t(a), a, intmax_t(b), b);
    fail_here(file, line);
}

inline void check_string_equal(const char *a, const char *b, const char *file, int line) {
    if (a && b && std::strcmp(a, b) == 0) return;
    print_error("\"%s\" != \"%s\"\n", a ? a : "(null)", b ? b : "(null)");
    fail_here(file, line);
}

inline void check_memory_equal(const void *a, const void *b, size_t size, const char *file, int line) {
    if (std::memcmp(a, b, size) == 0) return;
    print_error("%zu bytes at %p and %p differ\n", size, a, b);
    fail_here(file, line);
}

// Runs a test; a failure or skip it threw is handed to cmocka only after
// the test's frames (and their destructors) are done with.
template <void (*Test)(void **)>
void guarded(void **state) {
    const char *file = __FILE__;
    int line = __LINE__;
    bool skipped = false;
    try {
        Test(state);
        return;
    } catch (const TestFailure &f) {
        file = f.file;
        line = f.line;
    } catch (const TestSkipped &s) {
        file = s.file;
        line = s.line;
        skipped = true;
    } catch (const std::exception &e) {
        print_error("uncaught exception: %s\n", e.what());
    } catch (...) {
        print_error("uncaught exception\n");
    }
    if (skipped) _skip(file, line);
    _fail(file, line);  // longjmps into cmocka: nothing left here to destroy
}

}  // namespace ct

#undef assert_true
#undef assert_false
#undef assert_null
#undef assert_non_null
#undef assert_int_equal
#undef assert_string_equal
#undef assert_memory_equal
#undef fail
#undef skip
#undef cmocka_unit_test
#undef cmocka_unit_test_setup_teardown
#define assert_true(c) ct::check(static_cast<bool>(c), #c, __FILE__, __LINE__)
#define assert_false(c) ct::check(!(c), "!(" #c ")", __FILE__, __LINE__)
#define assert_null(c) ct::check((c) == nullptr, #c " == NULL", __FILE__, __LINE__)
#define assert_non_null(c) ct::check((c) != nullptr, #c " != NULL", __FILE__, __LINE__)
#define assert_int_equal(a, b) ct::check_int_equal(uintmax_t(a), uintmax_t(b), __FILE__, __LINE__)
#define assert_string_equal(a, b) ct::check_string_equal((a), (b), __FILE__, __LINE__)
#define assert_memory_equal(a, b, size) ct::check_memory_equal((a), (b), (size), __FILE__, __LINE__)
#define fail() ct::fail_here(__FILE__, __LINE__)
#define skip() throw ct::TestSkipped{__FILE__, __LINE__}
#define cmocka_unit_test(f) {#f, &ct::guarded<f>, nullptr, nullptr, nullptr}
#define cmocka_unit_test_setup_teardown(f, setup, teardown) {#f, &ct::guarded<f>, setup, teardown, nullptr}

// Assert a call returns `expected`, printing the library's last message when not.
#define CT_EXPECT(expected, call)                                                                              \
    do {                                                                                                       \
        const int ct_rc_ = (call);                                                                             \
        if (ct_rc_ != (expected))                                                                              \
            fail_msg("%s -> %d (%s), expected %d (%s): %s", #call, ct_rc_, cachekit_error_name(ct_rc_),         \
                     int(expected), cachekit_error_name(int(expected)), cachekit_error_last_message());         \
    } while (0)

#define CT_OK(call) CT_EXPECT(CACHEKIT_OK, call)

// Assert `call` fails with `code` and leaves a non-empty message.
#define CT_FAILS_WITH_MESSAGE(code, call)                                                                      \
    do {                                                                                                       \
        cachekit_error_clear();                                                                                \
        CT_EXPECT(code, call);                                                                                 \
        if (cachekit_error_last_message()[0] == '\0') fail_msg("%s: no error message", #call);                \
    } while (0)

namespace ct {

// Owners of the C handles: freed on every path out of a test. Declare a
// borrowed backend before the cache that borrows it (destroyed after it).
struct CacheFree {
    void operator()(cachekit_cache *c) const noexcept { cachekit_cache_free(c); }
};
using CacheHandle = std::unique_ptr<cachekit_cache, CacheFree>;
struct BackendFree {
    void operator()(cachekit_backend *b) const noexcept { cachekit_backend_free(b); }
};
using BackendHandle = std::unique_ptr<cachekit_backend, BackendFree>;

struct KeyringFree {
    void operator()(cachekit_keyring *k) const noexcept { cachekit_keyring_free(k); }
};
using KeyringHandle = std::unique_ptr<cachekit_keyring, KeyringFree>;

inline CacheHandle new_cache(const cachekit_cache_options *o) {
    cachekit_cache *c = nullptr;
    CT_OK(cachekit_cache_new(&c, o));
    return CacheHandle(c);
}

inline BackendHandle open_backend(const char *url, const cachekit_backend_options *o = nullptr) {
    cachekit_backend *b = nullptr;
    CT_OK(cachekit_backend_open(&b, url, o));
    return BackendHandle(b);
}

inline KeyringHandle new_keyring(const char *master_key_hex) {
    cachekit_keyring *k = nullptr;
    CT_OK(cachekit_keyring_new(&k, master_key_hex, nullptr));
    return KeyringHandle(k);
}

// A private directory under the system's temporary one, removed with its
// contents when the holder goes.
class TempDir {
public:
    explicit TempDir(const char *tag) {
        std::string templ = (std::filesystem::temp_directory_path() / (std::string("cachekit-") + tag + "-XXXXXX")).string();
        if (!mkdtemp(templ.data())) fail_msg("mkdtemp failed for %s", templ.c_str());
        path_ = templ;
    }
    ~TempDir() {
        std::error_code ignored;
        std::filesystem::remove_all(path_, ignored);
    }
    TempDir(const TempDir &) = delete;
    TempDir &operator=(const TempDir &) = delete;
    const std::string &path() const { return path_; }

private:
    std::string path_;
};

// A loader that gives `value` and counts its calls (payload: the ValueLoader).
struct ValueLoader {
    std::string value;
    std::atomic<int> calls{0};
    static int run(cachekit_load *load, void *payload) {
        auto *self = static_cast<ValueLoader *>(payload);
        self->calls.fetch_add(1);
        return cachekit_load_set_value(load, self->value.data(), self->value.size());
    }
};

// Wait until the entries put into `c` (L1 on) before this call are older
// than `seconds` by the cache's own clock: puts a probe entry (namespace
// "ct-probe") and polls the age its hits report, every 20 ms for at most
// 120 s, so a slow run (valgrind) only waits longer. Fails the test if the
// probe never gets that old.
inline void wait_until_older_than(cachekit_cache *c, double seconds) {
    static const char kProbe[] = "ns:ct-probe:k:age";
    CT_OK(cachekit_cache_put(c, "ct-probe", kProbe, sizeof kProbe - 1, "\xc0", 1, CACHEKIT_TTL_DEFAULT));
    double age = -1;
    const bool old_enough = eventually(
        [&] {
            Buf out;
            cachekit_lookup info = CACHEKIT_LOOKUP_INIT;
            if (cachekit_cache_get(c, out.get(), &info, "ct-probe", kProbe, sizeof kProbe - 1) != CACHEKIT_OK)
                return false;
            if (info.refresh) cachekit_cache_abandon_refresh(c, kProbe, sizeof kProbe - 1, info.refresh_claim);
            age = info.age_seconds;
            return age > seconds;
        },
        120s, 20ms);
    if (!old_enough) fail_msg("the probe entry never got older than %.3f s (last age %.3f s)", seconds, age);
}

}  // namespace ct
