#include "codec/crypto.hpp"

#include <cstring>
#include <new>

#include <sodium.h>

#include "codec/aes_gcm.hpp"
#include "codec/hashing.hpp"
#include "util/buffer.hpp"
#include "util/error.hpp"

namespace cachekit::crypto {
namespace {

void put_u32be(std::string &out, uint32_t v) {
    for (int i = 3; i >= 0; --i) out.push_back(char(v >> (8 * i)));
}

void put_component(std::string &out, std::string_view s) {
    if (s.size() > UINT32_MAX) fail(CACHEKIT_EINVAL, "AAD component too long");
    put_u32be(out, uint32_t(s.size()));
    out.append(s);
}

}  // namespace

void wipe(void *p, size_t n) noexcept { sodium_memzero(p, n); }

void ensure_sodium() {
    static const int status = sodium_init();
    if (status < 0) fail(CACHEKIT_EINTERNAL, "libsodium could not be initialised");
}

bool aes_gcm_available() { return aes_gcm::active().provider != nullptr; }

void require_aes_gcm() {
    const aes_gcm::Choice &choice = aes_gcm::active();
    if (!choice.provider) fail(choice.error, choice.reason);
}

std::string_view aes_gcm_provider() {
    const aes_gcm::Choice &choice = aes_gcm::active();
    return choice.provider ? choice.provider->name : std::string_view();
}

Key master_key_from_hex(std::string_view hex) {
    if (hex.size() != 2 * CACHEKIT_KEY_SIZE)
        fail(CACHEKIT_EINVAL, "a master key is exactly 64 hex digits (32 bytes); got " + std::to_string(hex.size()) +
                                  " characters");
    Key key;  // decoded in place: no other copy of the key to wipe
    if (!from_hex(hex, key.data(), key.size()))
        fail(CACHEKIT_EINVAL, "a master key holds only hex digits 0-9, a-f, A-F (no 0x, sign or white space)");
    return key;
}

Key derive(const Key &master, std::string_view domain, std::string_view tenant) {
    if (domain.empty() || domain.size() > 255) fail(CACHEKIT_EINVAL, "an HKDF domain holds 1..255 bytes");
    if (tenant.empty() || tenant.size() > 1024) fail(CACHEKIT_EINVAL, "a tenant id holds 1..1024 bytes");
    ensure_sodium();
    std::string salt = "cachekit_v1_";
    salt.push_back(char(domain.size()));
    salt.append(domain);
    salt.push_back(char(tenant.size() >> 8));
    salt.push_back(char(tenant.size() & 0xff));
    salt.append(tenant);

    // HKDF-Extract: PRK = HMAC-SHA256(salt, ikm)
    unsigned char prk[crypto_auth_hmacsha256_BYTES];
    crypto_auth_hmacsha256_state st;
    crypto_auth_hmacsha256_init(&st, reinterpret_cast<const unsigned char *>(salt.data()), salt.size());
    crypto_auth_hmacsha256_update(&st, master.data(), master.size());
    crypto_auth_hmacsha256_final(&st, prk);
    // HKDF-Expand for one block: T(1) = HMAC-SHA256(PRK, info || 0x01)
    Key out;
    const unsigned char one = 1;
    crypto_auth_hmacsha256_init(&st, prk, sizeof prk);
    crypto_auth_hmacsha256_update(&st, reinterpret_cast<const unsigned char *>(domain.data()), domain.size());
    crypto_auth_hmacsha256_update(&st, &one, 1);
    crypto_auth_hmacsha256_final(&st, out.data());
    sodium_memzero(prk, sizeof prk);
    sodium_memzero(&st, sizeof st);
    return out;
}

Fingerprint fingerprint(const Key &encryption_key) {
    ensure_sodium();
    static const char label[] = "key_fingerprint_v1";
    crypto_hash_sha256_state st;
    unsigned char digest[crypto_hash_sha256_BYTES];
    crypto_hash_sha256_init(&st);
    crypto_hash_sha256_update(&st, reinterpret_cast<const unsigned char *>(label), sizeof label - 1);
    crypto_hash_sha256_update(&st, encryption_key.data(), encryption_key.size());
    crypto_hash_sha256_final(&st, digest);
    Fingerprint fp;
    std::memcpy(fp.data(), digest, fp.size());
    return fp;
}

std::string build_aad(std::string_view tenant, std::string_view cache_key, std::string_view format, bool compressed,
                      std::optional<std::string_view> original_type) {
    std::string aad;
    aad.reserve(1 + 4 * 5 + tenant.size() + cache_key.size() + format.size() + 5 + 16);
    aad.push_back(char(0x03));
    put_component(aad, tenant);
    put_component(aad, cache_key);
    put_component(aad, format);
    put_component(aad, compressed ? "True" : "False");
    if (original_type) put_component(aad, *original_type);
    return aad;
}

AesKey::AesKey(const Key &key) {
    const aes_gcm::Choice &choice = aes_gcm::active();
    if (!choice.provider) fail(choice.error, choice.reason);
    schedule_ = choice.provider->make_key(key.data());
}

AesKey::~AesKey() = default;  // the schedule wipes itself

void AesKey::seal(const Nonce &nonce, const void *aad, size_t aad_len, const void *pt, size_t pt_len,
                  cachekit_buf *out) const {
    if (pt_len > SIZE_MAX - kOverhead || uint64_t(pt_len) > aes_gcm::kMaxPlaintext)
        fail(CACHEKIT_ETOOBIG, "plaintext of " + std::to_string(pt_len) +
                                   " bytes is over AES-256-GCM's limit of 64 GiB - 32 bytes");
    char *dst = buf_resize(out, pt_len + kOverhead);
    std::memcpy(dst, nonce.data(), nonce.size());
    schedule_->seal(nonce.data(), static_cast<const uint8_t *>(aad), aad_len, static_cast<const uint8_t *>(pt), pt_len,
                    reinterpret_cast<uint8_t *>(dst + nonce.size()));
}

bool AesKey::open(const void *aad, size_t aad_len, const void *ct, size_t ct_len, cachekit_buf *out) const {
    if (ct_len < kOverhead)
        fail(CACHEKIT_ECIPHERTEXT, "ciphertext of " + std::to_string(ct_len) +
                                       " bytes is shorter than nonce + tag (28 bytes)");
    const auto *c = static_cast<const uint8_t *>(ct);
    char *dst = buf_resize(out, ct_len - kOverhead);
    const bool ok = schedule_->open(c, static_cast<const uint8_t *>(aad), aad_len, c + CACHEKIT_NONCE_SIZE,
                                    ct_len - CACHEKIT_NONCE_SIZE, reinterpret_cast<uint8_t *>(dst));
    if (!ok) {
        sodium_memzero(dst, ct_len - kOverhead);
        buf_resize(out, 0);
        return false;
    }
    return true;
}

Nonce random_nonce() {
    ensure_sodium();
    Nonce n;
    randombytes_buf(n.data(), n.size());
    return n;
}

}  // namespace cachekit::crypto
