// Envelope unwrap on arbitrary bytes; whatever unwraps must re-wrap and
// unwrap to the same payload (wrap then unwrap = identity), and its format
// must be valid UTF-8 (the reference refuses any other as
// DeserializationFailed).
#include "../../src/codec/utf8.hpp"  // header-only
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    OwnedBuf payload, format;
    int rc = cachekit_envelope_unwrap(&payload.b, &format.b, data, size);
    check_failure(rc);
    if (rc == CACHEKIT_OK) {
        FUZZ_REQUIRE(cachekit::utf8_valid(format.str()));
        OwnedBuf env, again;
        FUZZ_REQUIRE(cachekit_envelope_wrap(&env.b, payload.b.ptr, payload.b.size, format.b.ptr) == CACHEKIT_OK);
        FUZZ_REQUIRE(cachekit_envelope_unwrap(&again.b, nullptr, env.b.ptr, env.b.size) == CACHEKIT_OK);
        FUZZ_REQUIRE(again.str() == payload.str());
    }
    // The input as a payload must always round-trip.
    OwnedBuf env, back;
    FUZZ_REQUIRE(cachekit_envelope_wrap(&env.b, data, size, "msgpack") == CACHEKIT_OK);
    FUZZ_REQUIRE(cachekit_envelope_unwrap(&back.b, nullptr, env.b.ptr, env.b.size) == CACHEKIT_OK);
    FUZZ_REQUIRE(back.b.size == size && (size == 0 || std::memcmp(back.b.ptr, data, size) == 0));
    return 0;
}
