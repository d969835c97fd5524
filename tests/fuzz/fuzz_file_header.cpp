// The file backend's header parsing: any bytes are judged without a crash,
// and a live entry's header re-encodes to the same 14 bytes.
#include <cstring>

#include "fuzz_common.hpp"
#include "l2/file/file_format.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    using namespace cachekit::l2::filefmt;
    if (size < 8) return 0;
    int64_t now_ms;
    std::memcpy(&now_ms, data, 8);
    const char *file = reinterpret_cast<const char *>(data + 8);
    const size_t len = size - 8;
    Header h;
    Verdict v = classify(file, len, now_ms, &h);
    if (v == Verdict::Payload || v == Verdict::MissPreserve || v == Verdict::MissExpired) {
        FUZZ_REQUIRE(len >= kHeaderSize);
        auto again = encode_header(h.expiry, h.reserved, h.flags);
        FUZZ_REQUIRE(std::memcmp(again.data(), file, kHeaderSize) == 0);
    }
    if (v == Verdict::Payload) FUZZ_REQUIRE(h.reserved == 0 && h.flags == 0);
    return 0;
}
