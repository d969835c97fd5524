// The bounded decoder and the canonicaliser on arbitrary bytes:
// canonicalising twice equals once, canonical output passes the bounded
// check, and a document the check accepts renders as JSON.
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    int checked = cachekit_msgpack_check(data, size, 0);
    check_failure(checked);
    if (checked == CACHEKIT_OK) {
        OwnedBuf json;
        FUZZ_REQUIRE(cachekit_msgpack_to_json(&json.b, data, size) == CACHEKIT_OK);
    }
    const int profiles[] = {CACHEKIT_PROFILE_ARGS, CACHEKIT_PROFILE_VALUE, CACHEKIT_PROFILE_AUTO_ARGS};
    for (int profile : profiles) {
        OwnedBuf once, twice;
        int rc = cachekit_msgpack_canonical(&once.b, data, size, profile);
        check_failure(rc);
        if (rc != CACHEKIT_OK) continue;
        FUZZ_REQUIRE(checked == CACHEKIT_OK);
        FUZZ_REQUIRE(cachekit_msgpack_check(once.b.ptr, once.b.size, 0) == CACHEKIT_OK);
        FUZZ_REQUIRE(cachekit_msgpack_canonical(&twice.b, once.b.ptr, once.b.size, profile) == CACHEKIT_OK);
        FUZZ_REQUIRE(twice.str() == once.str());
    }
    return 0;
}
