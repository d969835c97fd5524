// CK frame decode on arbitrary bytes; a decoded frame re-encodes to a frame
// that decodes to the same serializer, metadata and payload.
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    OwnedBuf serializer, metadata;
    size_t offset = 0;
    int rc = cachekit_frame_decode(&serializer.b, &metadata.b, &offset, data, size);
    check_failure(rc);
    if (rc != CACHEKIT_OK) return 0;
    FUZZ_REQUIRE(offset <= size);
    OwnedBuf frame;
    rc = cachekit_frame_encode(&frame.b, serializer.b.ptr, metadata.b.ptr, data + offset, size - offset);
    check_failure(rc);
    if (rc != CACHEKIT_OK) return 0;  // e.g. a serializer name holding a NUL cannot pass through a C string
    OwnedBuf s2, m2;
    size_t off2 = 0;
    FUZZ_REQUIRE(cachekit_frame_decode(&s2.b, &m2.b, &off2, frame.b.ptr, frame.b.size) == CACHEKIT_OK);
    FUZZ_REQUIRE(s2.str() == serializer.str());
    FUZZ_REQUIRE(frame.b.size - off2 == size - offset);
    // Re-encoding a re-encoded header is stable (Python json.dumps form is a fixed point).
    OwnedBuf frame2;
    FUZZ_REQUIRE(cachekit_frame_encode(&frame2.b, s2.b.ptr, m2.b.ptr, frame.b.ptr + off2, frame.b.size - off2) == CACHEKIT_OK);
    FUZZ_REQUIRE(frame2.str() == frame.str());
    return 0;
}
