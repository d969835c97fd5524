// Decrypt arbitrary ciphertext with a fixed keyring (never crashes, never
// opens), and seal/open round trips: identity with the same AAD, failure
// with any other.
#include <string>

#include "fuzz_common.hpp"

namespace {
cachekit_keyring *ring() {
    static cachekit_keyring *r = [] {
        cachekit_keyring *k = nullptr;
        cachekit_keyring_new(&k, "6161616161616161616161616161616161616161616161616161616161616161",
                             "1111111111111111111111111111111111111111111111111111111111111111");
        return k;
    }();
    return r;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!cachekit_crypto_available() || size < 1) return 0;
    size_t aad_len = data[0] % 64;
    if (size < 1 + aad_len) return 0;
    const uint8_t *aad = data + 1;
    const uint8_t *rest = aad + aad_len;
    size_t rest_len = size - 1 - aad_len;
    OwnedBuf out;
    int index = -1;
    int rc = cachekit_keyring_decrypt(ring(), &out.b, &index, "tenant", nullptr, aad, aad_len, rest, rest_len);
    check_failure(rc);
    FUZZ_REQUIRE(rc != CACHEKIT_OK);  // forging a tag by chance would be a finding
    if (rest_len >= 16) {
        rc = cachekit_keyring_decrypt(ring(), &out.b, &index, "tenant", rest, aad, aad_len, rest, rest_len);
        check_failure(rc);
        FUZZ_REQUIRE(rc != CACHEKIT_OK);
    }
    OwnedBuf sealed, opened;
    FUZZ_REQUIRE(cachekit_keyring_encrypt(ring(), &sealed.b, "tenant", aad, aad_len, rest, rest_len) == CACHEKIT_OK);
    FUZZ_REQUIRE(cachekit_keyring_decrypt(ring(), &opened.b, &index, "tenant", nullptr, aad, aad_len, sealed.b.ptr, sealed.b.size) == CACHEKIT_OK);
    FUZZ_REQUIRE(index == 0 && opened.b.size == rest_len && (rest_len == 0 || std::memcmp(opened.b.ptr, rest, rest_len) == 0));
    std::string other(reinterpret_cast<const char *>(aad), aad_len);
    other.push_back('x');
    FUZZ_REQUIRE(cachekit_keyring_decrypt(ring(), &opened.b, &index, "tenant", nullptr, other.data(), other.size(), sealed.b.ptr, sealed.b.size) == CACHEKIT_EAUTH);
    return 0;
}
