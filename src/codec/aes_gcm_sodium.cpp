// The libsodium provider of AES-256-GCM: crypto_aead_aes256gcm with a
// precomputed key schedule (AES-NI and PCLMUL only).
#include <new>

#include <sodium.h>

#include "codec/aes_gcm.hpp"
#include "codec/crypto.hpp"
#include "util/error.hpp"

namespace cachekit::crypto::aes_gcm {
namespace {

static_assert(crypto_aead_aes256gcm_KEYBYTES == kKeyBytes);
static_assert(crypto_aead_aes256gcm_NPUBBYTES == kNonceBytes);
static_assert(crypto_aead_aes256gcm_ABYTES == kTagBytes);

class SodiumKey final : public KeySchedule {
public:
    explicit SodiumKey(const uint8_t key[kKeyBytes]) { crypto_aead_aes256gcm_beforenm(&state_->ctx, key); }
    ~SodiumKey() override { sodium_memzero(state_.get(), sizeof *state_); }

    void seal(const uint8_t nonce[kNonceBytes], const uint8_t *aad, size_t aad_len, const uint8_t *pt, size_t pt_len,
              uint8_t *ct_tag) const override {
        unsigned long long clen = 0;
        crypto_aead_aes256gcm_encrypt_afternm(ct_tag, &clen, pt, pt_len, aad, aad_len, nullptr, nonce, &state_->ctx);
    }

    bool open(const uint8_t nonce[kNonceBytes], const uint8_t *aad, size_t aad_len, const uint8_t *ct_tag,
              size_t ct_len, uint8_t *pt) const override {
        unsigned long long mlen = 0;
        return crypto_aead_aes256gcm_decrypt_afternm(pt, &mlen, nullptr, ct_tag, ct_len, aad, aad_len, nonce,
                                                     &state_->ctx) == 0;
    }

private:
    // libsodium's state wants 16-byte alignment, which operator new gives.
    struct State {
        alignas(16) crypto_aead_aes256gcm_state ctx;
    };
    std::unique_ptr<State> state_ = std::make_unique<State>();
};

bool available() {
    ensure_sodium();
    return crypto_aead_aes256gcm_is_available() == 1;
}

std::unique_ptr<KeySchedule> make_key(const uint8_t key[kKeyBytes]) { return std::make_unique<SodiumKey>(key); }

}  // namespace

const Provider &sodium_provider() {
    static const Provider p{"sodium", available, make_key};
    return p;
}

}  // namespace cachekit::crypto::aes_gcm
