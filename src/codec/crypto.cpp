#include "codec/crypto.hpp"

#include <cstring>
#include <new>

#include <sodium.h>

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

bool aes_gcm_available() {
    ensure_sodium();
    return crypto_aead_aes256gcm_is_available() == 1;
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

struct AesKey::State {
    alignas(16) crypto_aead_aes256gcm_state ctx;
};

AesKey::AesKey(const Key &key) {
    if (!aes_gcm_available())
        fail(CACHEKIT_ECRYPTO_UNAVAILABLE, "AES-256-GCM needs a CPU with AES-NI and PCLMUL; this one has neither");
    state_ = new State;
    crypto_aead_aes256gcm_beforenm(&state_->ctx, key.data());
}

AesKey::~AesKey() {
    sodium_memzero(state_, sizeof *state_);
    delete state_;
}

void AesKey::seal(const Nonce &nonce, const void *aad, size_t aad_len, const void *pt, size_t pt_len,
                  cachekit_buf *out) const {
    if (pt_len > SIZE_MAX - kOverhead) fail(CACHEKIT_ETOOBIG, "plaintext too large");
    char *dst = buf_resize(out, pt_len + kOverhead);
    std::memcpy(dst, nonce.data(), nonce.size());
    unsigned long long clen = 0;
    crypto_aead_aes256gcm_encrypt_afternm(reinterpret_cast<unsigned char *>(dst + nonce.size()), &clen,
                                          static_cast<const unsigned char *>(pt), pt_len,
                                          static_cast<const unsigned char *>(aad), aad_len, nullptr, nonce.data(),
                                          &state_->ctx);
}

bool AesKey::open(const void *aad, size_t aad_len, const void *ct, size_t ct_len, cachekit_buf *out) const {
    if (ct_len < kOverhead)
        fail(CACHEKIT_ECIPHERTEXT, "ciphertext of " + std::to_string(ct_len) +
                                       " bytes is shorter than nonce + tag (28 bytes)");
    const auto *c = static_cast<const unsigned char *>(ct);
    char *dst = buf_resize(out, ct_len - kOverhead);
    unsigned long long mlen = 0;
    int rc = crypto_aead_aes256gcm_decrypt_afternm(reinterpret_cast<unsigned char *>(dst), &mlen, nullptr,
                                                   c + CACHEKIT_NONCE_SIZE, ct_len - CACHEKIT_NONCE_SIZE,
                                                   static_cast<const unsigned char *>(aad), aad_len, c, &state_->ctx);
    if (rc != 0) {
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
