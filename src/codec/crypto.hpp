// Encryption primitives of protocol.md section 6: HKDF-SHA256 tenant keys
// (built on libsodium's HMAC-SHA256: 1.0.18 has no HKDF), key fingerprints,
// AAD v0x03 and AES-256-GCM (through codec/aes_gcm.hpp: libsodium where the
// CPU has AES-NI and PCLMUL, OpenSSL's EVP elsewhere; the same bytes).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "cachekit/cachekit.h"

namespace cachekit::crypto {

// Overwrite secret bytes with zeros (sodium_memzero: not optimised away).
void wipe(void *p, size_t n) noexcept;

// Key material (a master or a derived key) that wipes itself: every copy,
// temporary and container element is zeroed when it is destroyed, so a
// vector that grows, a map entry that goes or a moved-from local leaves no
// key bytes behind in freed memory.
struct Key : std::array<uint8_t, CACHEKIT_KEY_SIZE> {
    Key() : std::array<uint8_t, CACHEKIT_KEY_SIZE>{} {}
    Key(const Key &) = default;
    Key &operator=(const Key &) = default;
    ~Key() { wipe(data(), size()); }
};
using Fingerprint = std::array<uint8_t, CACHEKIT_FINGERPRINT_SIZE>;
using Nonce = std::array<uint8_t, CACHEKIT_NONCE_SIZE>;

constexpr std::string_view kDefaultTenant = "default";
constexpr size_t kOverhead = CACHEKIT_NONCE_SIZE + CACHEKIT_TAG_SIZE;

// Initialise libsodium once (thread-safe). Throws EINTERNAL if it cannot.
void ensure_sodium();
// True when this process's AES-256-GCM provider (aes_gcm.hpp) is usable.
bool aes_gcm_available();
// Throws the provider choice's error (ECRYPTO_UNAVAILABLE, or EINVAL for a
// bad CACHEKIT_AES_GCM_PROVIDER) with its reason when it is not.
void require_aes_gcm();
// "sodium" or "openssl"; empty when none is usable.
std::string_view aes_gcm_provider();

// Strict hex master key: exactly 64 hex digits.
Key master_key_from_hex(std::string_view hex);

// HKDF-SHA256 with the "cachekit_v1_" salt for one domain and tenant.
Key derive(const Key &master, std::string_view domain, std::string_view tenant);
Fingerprint fingerprint(const Key &encryption_key);

std::string build_aad(std::string_view tenant, std::string_view cache_key, std::string_view format, bool compressed,
                      std::optional<std::string_view> original_type);

namespace aes_gcm {
class KeySchedule;
}

// A derived AES-256-GCM key, expanded once by the process's provider.
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
    std::unique_ptr<aes_gcm::KeySchedule> schedule_;
};

Nonce random_nonce();

}  // namespace cachekit::crypto
