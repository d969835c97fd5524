// The bounded msgpack scanners on arbitrary bytes and depth limits: the fast
// one (scan_document, with and without noting facts) must give the
// reference's (scan_document_precisely) answer, the same end offset or the
// same error code.
#include "../unit/scan_outcomes.hpp"
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    using cachekit::msgpack::kMaxDepth;
    using cachekit::msgpack::kMinDepth;
    using namespace scan_outcomes;
    // The first byte picks a depth limit, so the depth checks are reached too.
    const uint32_t depth = size > 0 && data[0] < 0x20 ? kMinDepth + data[0] : kMaxDepth;
    for (uint32_t limit : {depth, kMaxDepth}) {
        const int64_t expected = outcome(reference, data, size, limit);
        FUZZ_REQUIRE(outcome(fast, data, size, limit) == expected);
        FUZZ_REQUIRE(outcome(noting, data, size, limit) == expected);
    }
    return 0;
}
