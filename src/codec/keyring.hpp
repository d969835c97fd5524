// The keyring of protocol.md section 6: a current master key for writes plus
// up to three decrypt-only previous keys, with per-tenant derived keys cached.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "codec/crypto.hpp"
#include "codec/nonce_counter.hpp"
#include "util/fork_hooks.hpp"

namespace cachekit::crypto {

// A fork participant: see after_fork_child.
class Keyring : private fork_hooks::Participant {
public:
    Keyring(const Key &current, std::vector<Key> previous);
    ~Keyring();
    Keyring(const Keyring &) = delete;
    Keyring &operator=(const Keyring &) = delete;

    // "a,b,c" of hex keys; empty means none.
    static std::unique_ptr<Keyring> from_hex(std::string_view current_hex, std::string_view previous_hex);

    Fingerprint current_fingerprint(std::string_view tenant) const;

    // Seal with the current key and a counter nonce (see nonce_counter.hpp:
    // never repeated across fork(), a fresh random prefix when the counter ends).
    void seal(std::string_view tenant, const void *aad, size_t aad_len, const void *pt, size_t pt_len,
              cachekit_buf *out) const;

    // Open; returns the index of the key that opened it (0 = current).
    // With a fingerprint only the matching key is tried (EKEYNOTFOUND,
    // EAUTH); without one every key in order, only auth failures move on.
    int open(std::string_view tenant, const Fingerprint *fp, const void *aad, size_t aad_len, const void *ct,
             size_t ct_len, cachekit_buf *out) const;

    size_t key_count() const { return masters_.size(); }

    // White-box hook for tests: the counter this keyring's seals draw from.
    NonceCounter &nonces_for_testing() const { return nonces_; }

private:
    struct Derived {
        std::unique_ptr<AesKey> aes;
        Fingerprint fingerprint;
    };
    // The tenant's keys from the cache, or derived into `scratch` past its cap.
    const std::vector<Derived> &derived_for(std::string_view tenant, std::vector<Derived> &scratch) const;

    using TenantKeys = std::unordered_map<std::string, std::vector<Derived>>;

    // fork(): nothing is taken before it (a thread holds mutex_ only for a
    // lookup or an insert, never while waiting on anything else); the child
    // makes the lock fresh, and swaps in an empty map when another thread
    // was inserting into it (the old one may be torn: left behind, not freed).
    void before_fork() noexcept override {}
    void after_fork_parent() noexcept override {}
    void after_fork_child() noexcept override;

    std::vector<Key> masters_;  // [0] current, then previous (each wipes itself)
    mutable std::shared_mutex mutex_;
    mutable TenantKeys by_tenant_;
    // The entry the last lookup found (nodes are never erased while the
    // keyring lives, so it stays valid): the common one-tenant case reads it
    // without the lock, the hash or a string copy.
    mutable std::atomic<const TenantKeys::value_type *> last_{nullptr};
    mutable std::atomic<bool> inserting_{false};  // by_tenant_ is being changed (under mutex_)
    mutable NonceCounter nonces_;
};

}  // namespace cachekit::crypto
