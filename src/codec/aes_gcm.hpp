// AES-256-GCM behind one small interface with two providers: libsodium's
// (AES-NI and PCLMUL only) and OpenSSL's EVP (every CPU). Both produce the
// same bytes: a 12-byte nonce, the ciphertext, then the 16-byte tag, with
// the AAD authenticated and not stored. The provider is chosen once per
// process (CACHEKIT_AES_GCM_PROVIDER, read once: auto, sodium or openssl);
// see docs/encryption.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace cachekit::crypto::aes_gcm {

constexpr size_t kKeyBytes = 32;
constexpr size_t kNonceBytes = 12;
constexpr size_t kTagBytes = 16;
// GCM's own bound (2^39 - 256 bits of plaintext); both providers refuse more.
constexpr uint64_t kMaxPlaintext = (uint64_t(1) << 36) - 32;

// One expanded key. seal and open are const and safe to call from many
// threads at once; destroying the key wipes every copy of its schedule.
class KeySchedule {
public:
    virtual ~KeySchedule() = default;
    // ct_tag receives pt_len + kTagBytes bytes (ciphertext, then tag).
    virtual void seal(const uint8_t nonce[kNonceBytes], const uint8_t *aad, size_t aad_len, const uint8_t *pt,
                      size_t pt_len, uint8_t *ct_tag) const = 0;
    // ct_tag holds ct_len >= kTagBytes bytes; pt receives ct_len - kTagBytes.
    // false when the tag does not verify (pt's contents are then unspecified).
    virtual bool open(const uint8_t nonce[kNonceBytes], const uint8_t *aad, size_t aad_len, const uint8_t *ct_tag,
                      size_t ct_len, uint8_t *pt) const = 0;
};

struct Provider {
    std::string_view name;  // "sodium" or "openssl"
    bool (*available)();
    // Throws EINTERNAL when the library cannot make the key schedule.
    std::unique_ptr<KeySchedule> (*make_key)(const uint8_t key[kKeyBytes]);
};

const Provider &sodium_provider();   // aes_gcm_sodium.cpp
const Provider &openssl_provider();  // aes_gcm_openssl.cpp

// The outcome of choosing: the provider, or null with the reason.
struct Choice {
    const Provider *provider = nullptr;
    int error = 0;  // a cachekit error code when provider is null
    std::string reason;
};

// The choice for a setting ("" or "auto": libsodium where it is available,
// else OpenSSL; "sodium" / "openssl": that one or nothing) among the two
// providers given (tests pass stand-ins to play a CPU without AES-NI).
Choice choose(std::string_view setting, const Provider &sodium, const Provider &openssl);
// The same among this build's two providers.
Choice choose(std::string_view setting);

// This process's choice: CACHEKIT_AES_GCM_PROVIDER read on first use, then fixed.
const Choice &active();

}  // namespace cachekit::crypto::aes_gcm
