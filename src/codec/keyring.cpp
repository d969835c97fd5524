#include "codec/keyring.hpp"

#include <sodium.h>

#include <new>

#include "util/error.hpp"

namespace cachekit::crypto {

namespace {
constexpr size_t kMaxCachedTenants = 4096;  // bounds memory under many tenants
}

Keyring::Keyring(const Key &current, std::vector<Key> previous) {
    if (previous.size() > CACHEKIT_MAX_PREVIOUS_KEYS)
        fail(CACHEKIT_EINVAL, "at most 3 previous master keys are allowed; got " + std::to_string(previous.size()));
    masters_.reserve(1 + previous.size());
    masters_.push_back(current);
    for (const Key &k : previous) {
        for (const Key &seen : masters_)
            if (sodium_memcmp(seen.data(), k.data(), k.size()) == 0)
                fail(CACHEKIT_EINVAL, "a previous master key repeats the current key or another previous key");
        masters_.push_back(k);
    }
    fork_hooks::join(this);  // last: nothing after it throws
}

Keyring::~Keyring() { fork_hooks::leave(this); }  // every Key and AesKey wipes itself

void Keyring::after_fork_child() noexcept {
    if (inserting_.load()) {
        last_.store(nullptr);  // it may point into the map left behind
        new (&by_tenant_) TenantKeys();
        inserting_.store(false);
    }
    new (&mutex_) std::shared_mutex();
}

std::unique_ptr<Keyring> Keyring::from_hex(std::string_view current_hex, std::string_view previous_hex) {
    Key current = master_key_from_hex(current_hex);
    std::vector<Key> previous;
    if (!previous_hex.empty()) {
        size_t start = 0;
        for (;;) {
            size_t comma = previous_hex.find(',', start);
            std::string_view item = previous_hex.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
            if (item.empty()) fail(CACHEKIT_EINVAL, "an empty entry in the previous master key list");
            previous.push_back(master_key_from_hex(item));
            if (comma == std::string_view::npos) break;
            start = comma + 1;
        }
    }
    return std::make_unique<Keyring>(current, std::move(previous));
}

const std::vector<Keyring::Derived> &Keyring::derived_for(std::string_view tenant, std::vector<Derived> &scratch) const {
    // An empty tenant is an error, never a silent "default" (NULL at the C API means "default").
    if (tenant.empty() || tenant.size() > 1024) fail(CACHEKIT_EINVAL, "a tenant id holds 1..1024 bytes");
    if (const auto *hot = last_.load(std::memory_order_acquire); hot && hot->first == tenant) return hot->second;
    std::string name(tenant);
    {
        std::shared_lock lock(mutex_);
        auto it = by_tenant_.find(name);
        if (it != by_tenant_.end()) {
            last_.store(&*it, std::memory_order_release);
            return it->second;
        }
    }
    std::vector<Derived> keys;
    for (const Key &master : masters_) {
        const Key enc = derive(master, "encryption", name);
        keys.push_back(Derived{std::make_unique<AesKey>(enc), fingerprint(enc)});
    }
    std::unique_lock lock(mutex_);
    // Entries are never erased while the keyring lives (references stay
    // valid); past the cap, new tenants are derived per call instead, into
    // the caller's scratch (so no key outlives the call or the keyring).
    if (by_tenant_.size() >= kMaxCachedTenants && by_tenant_.find(name) == by_tenant_.end()) {
        scratch = std::move(keys);
        return scratch;
    }
    struct Marked {  // inserting_ for the insert's duration, even if it throws
        std::atomic<bool> &flag;
        explicit Marked(std::atomic<bool> &f) : flag(f) { flag.store(true); }
        ~Marked() { flag.store(false); }
    } marked(inserting_);
    auto [it, inserted] = by_tenant_.emplace(std::move(name), std::move(keys));
    last_.store(&*it, std::memory_order_release);
    return it->second;
}

Fingerprint Keyring::current_fingerprint(std::string_view tenant) const {
    std::vector<Derived> scratch;
    return derived_for(tenant, scratch)[0].fingerprint;
}

void Keyring::seal(std::string_view tenant, const void *aad, size_t aad_len, const void *pt, size_t pt_len,
                   cachekit_buf *out) const {
    std::vector<Derived> scratch;
    const auto &keys = derived_for(tenant, scratch);
    keys[0].aes->seal(nonces_.next(), aad, aad_len, pt, pt_len, out);
}

int Keyring::open(std::string_view tenant, const Fingerprint *fp, const void *aad, size_t aad_len, const void *ct,
                  size_t ct_len, cachekit_buf *out) const {
    if (ct_len < kOverhead)
        fail(CACHEKIT_ECIPHERTEXT, "ciphertext of " + std::to_string(ct_len) + " bytes is shorter than nonce + tag (28 bytes)");
    std::vector<Derived> scratch;
    const auto &keys = derived_for(tenant, scratch);
    if (fp != nullptr) {
        for (size_t i = 0; i < keys.size(); ++i) {
            if (sodium_memcmp(keys[i].fingerprint.data(), fp->data(), fp->size()) != 0) continue;
            // A fingerprint match is final: its failure is terminal.
            if (!keys[i].aes->open(aad, aad_len, ct, ct_len, out))
                fail(CACHEKIT_EAUTH, "authentication failed with the key the fingerprint selects");
            return int(i);
        }
        fail(CACHEKIT_EKEYNOTFOUND, "no key in the keyring has the entry's fingerprint");
    }
    for (size_t i = 0; i < keys.size(); ++i)
        if (keys[i].aes->open(aad, aad_len, ct, ct_len, out)) return int(i);
    fail(CACHEKIT_EAUTH, "authentication failed with every key in the keyring");
}

}  // namespace cachekit::crypto
