// Shared helpers of the cache handle tests (tests/cache). Public C API only
// (cachekit.h); the white-box test includes the core headers itself.
//
// Include after every C++ standard header the test needs: the last thing
// this pulls in is cmocka.h, whose function-like fail() macro clashes with
// libstdc++ headers included after it.
#pragma once

#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
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

inline bool contains(std::string_view haystack, std::string_view needle) {
    return haystack.find(needle) != std::string_view::npos;
}

inline cachekit_cache_options default_options() {
    cachekit_cache_options o;
    cachekit_cache_options_init(&o, sizeof o);
    return o;
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
