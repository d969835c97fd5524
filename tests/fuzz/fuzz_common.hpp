// Shared bits of the libFuzzer targets: an owned cachekit_buf and a
// crash-on-broken-property helper (a property failure is a finding).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "cachekit/cachekit.h"

struct OwnedBuf {
    cachekit_buf b = CACHEKIT_BUF_INIT;
    ~OwnedBuf() { cachekit_buf_dispose(&b); }
    std::string str() const { return std::string(b.ptr ? b.ptr : "", b.size); }
};

#define FUZZ_REQUIRE(cond)                                                         \
    do {                                                                           \
        if (!(cond)) {                                                             \
            std::fprintf(stderr, "property failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__); \
            std::abort();                                                          \
        }                                                                          \
    } while (0)

// Every failure must carry a known name and a message.
inline void check_failure(int rc) {
    if (rc == CACHEKIT_OK || rc == CACHEKIT_ENOTFOUND) return;
    FUZZ_REQUIRE(std::strcmp(cachekit_error_name(rc), "Unknown") != 0);
    FUZZ_REQUIRE(rc == CACHEKIT_ENOMEM || cachekit_error_last_message()[0] != '\0');
    FUZZ_REQUIRE(rc != CACHEKIT_EINTERNAL);
}
