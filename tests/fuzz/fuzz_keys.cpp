// Interop and auto-mode key building from arbitrary segments and arguments.
#include <string>

#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    // Layout: [ns_len][op_len] ns op args
    size_t ns_len = data[0] % 70, op_len = data[1] % 70;
    if (size < 2 + ns_len + op_len) return 0;
    std::string ns(reinterpret_cast<const char *>(data + 2), ns_len);
    std::string op(reinterpret_cast<const char *>(data + 2 + ns_len), op_len);
    const uint8_t *args = data + 2 + ns_len + op_len;
    size_t args_len = size - 2 - ns_len - op_len;
    OwnedBuf key, canonical;
    int rc = cachekit_key_interop(&key.b, &canonical.b, ns.c_str(), op.c_str(), args, args_len);
    check_failure(rc);
    if (rc == CACHEKIT_OK) {
        FUZZ_REQUIRE(key.b.size <= 194);
        OwnedBuf again;
        FUZZ_REQUIRE(cachekit_key_interop(&again.b, nullptr, ns.c_str(), op.c_str(), canonical.b.ptr, canonical.b.size) == CACHEKIT_OK);
        FUZZ_REQUIRE(again.str() == key.str());
    }
    rc = cachekit_key_auto(&key.b, ns.c_str(), "module", op.c_str(), args, args_len, 1, ns.empty() ? "std" : ns.c_str());
    check_failure(rc);
    return 0;
}
