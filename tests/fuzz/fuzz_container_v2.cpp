// Interop/v2 container unwrap on arbitrary bytes; an unwrapped value wraps
// and unwraps to itself with both methods.
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    OwnedBuf value;
    int rc = cachekit_container_v2_unwrap(&value.b, data, size);
    check_failure(rc);
    if (rc != CACHEKIT_OK) return 0;
    for (int method : {CACHEKIT_V2_METHOD_NONE, CACHEKIT_V2_METHOD_LZ4}) {
        OwnedBuf c, back;
        FUZZ_REQUIRE(cachekit_container_v2_wrap(&c.b, value.b.ptr, value.b.size, method) == CACHEKIT_OK);
        FUZZ_REQUIRE(cachekit_container_v2_unwrap(&back.b, c.b.ptr, c.b.size) == CACHEKIT_OK);
        FUZZ_REQUIRE(back.str() == value.str());
    }
    return 0;
}
