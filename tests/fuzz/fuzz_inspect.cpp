// The operator's inspector never fails on data: whatever the bytes, it
// answers with a JSON object.
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    OwnedBuf report;
    FUZZ_REQUIRE(cachekit_inspect(&report.b, data, size, nullptr, nullptr, nullptr) == CACHEKIT_OK);
    FUZZ_REQUIRE(report.b.size >= 2 && report.b.ptr[0] == '{' && report.b.ptr[report.b.size - 1] == '}');
    return 0;
}
