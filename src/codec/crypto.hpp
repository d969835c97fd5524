// Encryption primitives of protocol.md section 6: HKDF-SHA256 tenant keys
// (built on libsodium's HMAC-SHA256: 1.0.18 has no HKDF), key fingerprints,
// AAD v0x03 and AES-256-GCM (libsodium; needs AES-NI and PCLMUL).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <atomic>
#include <optional>
#include <string>
#include <string_view>

#include "cachekit/cachekit.h"

namespace cachekit::crypto {

using Key = std::array<uint8_t, CACHEKIT_KEY_SIZE>;
using Fingerprint = std::array<uint8_t, CACHEKIT_FINGERPRINT_SIZE>;
using Nonce = std::array<uint8_t, CACHEKIT_NONCE_SIZE>;

constexpr std::string_view kDefaultTenant = "default";
constexpr size_t kOverhead = CACHEKIT_NONCE_SIZE + CACHEKIT_TAG_SIZE;

// Initialise libsodium once (thread-safe). Throws EINTERNAL if it cannot.
void ensure_sodium();
bool aes_gcm_available();

// Strict hex master key: exactly 64 hex digits.
Key master_key_from_hex(std::string_view hex);

// HKDF-SHA256 with the "cachekit_v1_" salt for one domain and tenant.
Key derive(const Key &master, std::string_view domain, std::string_view tenant);
Fingerprint fingerprint(const Key &encryption_key);

std::string build_aad(std::string_view tenant, std::string_view cache_key, std::string_view format, bool compressed,
                      std::optional<std::string_view> original_type);

// A derived AES-256-GCM key with libsodium's expanded key schedule.
class AesKey {
public:
    explicit AesKey(const Key &key);
    ~AesKey();
    AesKey(const AesKey &) = delete;
    AesKey &operator=(const AesKey &) = delete;

    // out = nonce || ciphertext || tag (replaced).
    void seal(const Nonce &nonce, const void *aad, size_t aad_len, const void *pt, size_t pt_len, cachekit_buf *out) const;
    // false on an authentication failure (out is left empty); ECIPHERTEXT when too short.
    bool open(const void *aad, size_t aad_len, const void *ct, size_t ct_len, cachekit_buf *out) const;

private:
    struct State;
    State *state_;
};

Nonce random_nonce();

// Counter nonces: u64be instance id || u32be counter, one generator per encryptor.
class NonceCounter {
public:
    NonceCounter();
    Nonce next();  // ENONCE once 2^32 nonces were drawn

private:
    uint64_t instance_;
    std::atomic<uint64_t> counter_{0};
};

}  // namespace cachekit::crypto
