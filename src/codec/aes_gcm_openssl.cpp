// The OpenSSL provider of AES-256-GCM: EVP with the key expanded once.
//
// An EVP_CIPHER_CTX holds per-message state, so no two threads may use one
// at a time. Each key keeps a keyed template (never used for a message, only
// copied) and a few idle copies in lock-free slots: a call takes a copy from
// a slot (or copies the template when every slot is empty), sets the nonce,
// runs, and puts the copy back (or frees it when every slot is full). No lock
// is taken, so a fork() in the middle of another thread's call leaves the
// child nothing to wait on; the copy that thread held is simply not in the
// child's slots. Freeing a context wipes its key schedule (OpenSSL clears
// the cipher data it frees).
#include <openssl/evp.h>
#include <openssl/opensslv.h>

#include <array>
#include <atomic>
#include <climits>
#include <cstring>
#include <new>

#include "codec/aes_gcm.hpp"
#include "util/error.hpp"

namespace cachekit::crypto::aes_gcm {
namespace {

const EVP_CIPHER *cipher() {
#if OPENSSL_VERSION_NUMBER >= 0x30000000L
    // Fetched once: the implicit fetch of EVP_aes_256_gcm() costs a lookup per init.
    static EVP_CIPHER *const c = EVP_CIPHER_fetch(nullptr, "AES-256-GCM", nullptr);
    return c;
#else
    return EVP_aes_256_gcm();
#endif
}

[[noreturn]] void evp_failed(const char *what) {
    fail(CACHEKIT_EINTERNAL, std::string("OpenSSL EVP AES-256-GCM: ") + what + " failed");
}

// EVP takes int lengths: feed longer inputs in pieces.
constexpr size_t kPiece = size_t(1) << 30;

bool update_aad(EVP_CIPHER_CTX *ctx, const uint8_t *aad, size_t len, bool enc) {
    while (len > 0) {
        const int n = int(len < kPiece ? len : kPiece);
        int out = 0;
        const int ok = enc ? EVP_EncryptUpdate(ctx, nullptr, &out, aad, n) : EVP_DecryptUpdate(ctx, nullptr, &out, aad, n);
        if (ok != 1) return false;
        aad += n;
        len -= size_t(n);
    }
    return true;
}

bool update_data(EVP_CIPHER_CTX *ctx, const uint8_t *in, size_t len, uint8_t *out, bool enc) {
    while (len > 0) {
        const int n = int(len < kPiece ? len : kPiece);
        int written = 0;
        const int ok = enc ? EVP_EncryptUpdate(ctx, out, &written, in, n) : EVP_DecryptUpdate(ctx, out, &written, in, n);
        if (ok != 1 || written != n) return false;
        in += n;
        out += n;
        len -= size_t(n);
    }
    return true;
}

class OpensslKey final : public KeySchedule {
public:
    explicit OpensslKey(const uint8_t key[kKeyBytes]) {
        const EVP_CIPHER *c = cipher();
        if (!c) evp_failed("fetching the cipher");
        template_ = EVP_CIPHER_CTX_new();
        if (!template_) throw std::bad_alloc();
        if (EVP_EncryptInit_ex(template_, c, nullptr, key, nullptr) != 1) {
            EVP_CIPHER_CTX_free(template_);
            evp_failed("setting the key");
        }
    }

    ~OpensslKey() override {
        for (auto &slot : idle_) EVP_CIPHER_CTX_free(slot.exchange(nullptr, std::memory_order_acquire));
        EVP_CIPHER_CTX_free(template_);
    }

    void seal(const uint8_t nonce[kNonceBytes], const uint8_t *aad, size_t aad_len, const uint8_t *pt, size_t pt_len,
              uint8_t *ct_tag) const override {
        Lease lease(*this);
        EVP_CIPHER_CTX *ctx = lease.ctx;
        int out = 0;
        if (EVP_EncryptInit_ex(ctx, nullptr, nullptr, nullptr, nonce) != 1 || !update_aad(ctx, aad, aad_len, true) ||
            !update_data(ctx, pt, pt_len, ct_tag, true) || EVP_EncryptFinal_ex(ctx, ct_tag + pt_len, &out) != 1 ||
            EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, int(kTagBytes), ct_tag + pt_len) != 1)
            evp_failed("seal");
    }

    bool open(const uint8_t nonce[kNonceBytes], const uint8_t *aad, size_t aad_len, const uint8_t *ct_tag,
              size_t ct_len, uint8_t *pt) const override {
        const size_t len = ct_len - kTagBytes;
        uint8_t tag[kTagBytes];
        std::memcpy(tag, ct_tag + len, kTagBytes);  // SET_TAG takes a non-const pointer
        Lease lease(*this);
        EVP_CIPHER_CTX *ctx = lease.ctx;
        if (EVP_DecryptInit_ex(ctx, nullptr, nullptr, nullptr, nonce) != 1 || !update_aad(ctx, aad, aad_len, false) ||
            !update_data(ctx, ct_tag, len, pt, false) ||
            EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, int(kTagBytes), tag) != 1)
            evp_failed("open");
        int out = 0;
        // Final is where the tag is checked: a mismatch is the only failure left.
        return EVP_DecryptFinal_ex(ctx, pt + len, &out) == 1;
    }

private:
    // A context for one call: from an idle slot, else a fresh copy of the template.
    struct Lease {
        explicit Lease(const OpensslKey &k) : key(k) {
            for (auto &slot : key.idle_) {
                if (slot.load(std::memory_order_relaxed) == nullptr) continue;
                ctx = slot.exchange(nullptr, std::memory_order_acquire);
                if (ctx) return;
            }
            ctx = EVP_CIPHER_CTX_new();
            if (!ctx) throw std::bad_alloc();
            if (EVP_CIPHER_CTX_copy(ctx, key.template_) != 1) {
                EVP_CIPHER_CTX_free(ctx);
                evp_failed("copying the key schedule");
            }
        }
        ~Lease() {
            for (auto &slot : key.idle_) {
                EVP_CIPHER_CTX *expected = nullptr;
                if (slot.compare_exchange_strong(expected, ctx, std::memory_order_release, std::memory_order_relaxed))
                    return;
            }
            EVP_CIPHER_CTX_free(ctx);
        }
        Lease(const Lease &) = delete;
        Lease &operator=(const Lease &) = delete;

        const OpensslKey &key;
        EVP_CIPHER_CTX *ctx = nullptr;
    };

    EVP_CIPHER_CTX *template_ = nullptr;  // keyed; only ever copied
    mutable std::array<std::atomic<EVP_CIPHER_CTX *>, 8> idle_{};
};

bool available() { return cipher() != nullptr; }

std::unique_ptr<KeySchedule> make_key(const uint8_t key[kKeyBytes]) { return std::make_unique<OpensslKey>(key); }

}  // namespace

const Provider &openssl_provider() {
    static const Provider p{"openssl", available, make_key};
    return p;
}

}  // namespace cachekit::crypto::aes_gcm
