// Issue 5, item 9: the interop stored form.
//  - format CACHEKIT_FORMAT_INTEROP over a borrowed memory backend stores
//    exactly the payload bytes (read back with cachekit_backend_get on the
//    same handle), under the bare key (interop mode refuses a key_prefix);
//  - with encryption the stored bytes are nonce || ciphertext || tag and
//    decrypt with the 4-component AAD cachekit_crypto_aad(tenant, key,
//    "msgpack", 0, NULL) + cachekit_keyring_decrypt; other AADs fail;
//  - entries other SDKs write in that form are read back;
//  - under a key_prefix the AAD binds key_prefix + key (cachekit-rs 0.10+ under a
//    client .namespace()), and an entry sealed over the bare key is refused, never
//    retried (encryption.json aad_key_with_prefix_sealed_without's rule).
#include "cache_test_util.hpp"

namespace {

using ct::Buf;

// A cache over a borrowed memory backend; the handles are freed with it.
struct Fixture {
    ct::BackendHandle backend_owner;
    ct::CacheHandle cache_owner;  // declared after: freed before the backend it borrows
    cachekit_backend *backend = nullptr;
    cachekit_cache *cache = nullptr;
};

// With a key prefix the cache is CACHEKIT_FORMAT_PLAIN: interop's bytes under
// the prefix (interop itself refuses one).
Fixture open_fixture(bool encrypted, const char *tenant = nullptr, const char *key_prefix = nullptr) {
    Fixture f;
    f.backend_owner = ct::open_backend("memory://");
    f.backend = f.backend_owner.get();
    cachekit_cache_options o = ct::default_options();
    o.backend = f.backend;
    o.format = key_prefix ? CACHEKIT_FORMAT_PLAIN : CACHEKIT_FORMAT_INTEROP;
    o.key_prefix = key_prefix;
    o.tenant = tenant;
    if (encrypted) {
        o.encryption = CACHEKIT_ON;
        o.master_key_hex = ct::kMasterKeyHex;
    }
    f.cache_owner = ct::new_cache(&o);
    f.cache = f.cache_owner.get();
    return f;
}

// The interop/v1 key of op(args) in namespace "inter".
std::string interop_key(const std::string &args) {
    Buf key;
    CT_OK(cachekit_key_interop(key.get(), nullptr, "inter", "get-user", args.data(), args.size()));
    return key.str();
}

// A small map {"id": 7, "name": "ada", "tags": [1, 2.5, nil]}.
const char kPayloadBytes[] = "\x83\xa2id\x07\xa4name\xa3" "ada\xa4tags\x93\x01\xcb\x40\x04\x00\x00\x00\x00\x00\x00\xc0";
const std::string kPayload(kPayloadBytes, sizeof kPayloadBytes - 1);

void test_plain_interop_stores_the_payload(void **) {
    Fixture f = open_fixture(false);
    const std::string key = interop_key(std::string("\x91\x07", 2));
    assert_true(key.rfind("inter:get-user:", 0) == 0);
    assert_int_equal(cachekit_msgpack_check(kPayload.data(), kPayload.size(), 0), CACHEKIT_OK);
    CT_OK(cachekit_cache_put(f.cache, "inter", key.data(), key.size(), kPayload.data(), kPayload.size(), 60));
    Buf raw;
    const std::string &storage = key;  // the bare key: interop mode takes no prefix
    CT_OK(cachekit_backend_get(f.backend, raw.get(), storage.data(), storage.size()));
    assert_int_equal(raw.b.size, kPayload.size());
    assert_memory_equal(raw.b.ptr, kPayload.data(), kPayload.size());

    // Written by another SDK: plain MessagePack under the key is read back.
    const std::string other = interop_key(std::string("\x91\x08", 2));
    const std::string &other_storage = other;
    const std::string value = ct::mp_str("from another SDK");
    CT_OK(cachekit_backend_set(f.backend, other_storage.data(), other_storage.size(), value.data(), value.size(), 0));
    Buf out;
    cachekit_lookup info = CACHEKIT_LOOKUP_INIT;
    CT_OK(cachekit_cache_get(f.cache, out.get(), &info, "inter", other.data(), other.size()));
    assert_int_equal(info.source, CACHEKIT_SOURCE_L2);
    assert_true(out.str() == value);

    // Not MessagePack: corrupt, a miss, removed.
    CT_OK(cachekit_cache_invalidate(f.cache, "inter", other.data(), other.size()));  // drops the L1 copy too
    CT_OK(cachekit_backend_set(f.backend, other_storage.data(), other_storage.size(), "\xc1", 1, 0));
    CT_EXPECT(CACHEKIT_ENOTFOUND, cachekit_cache_get(f.cache, out.get(), nullptr, "inter", other.data(), other.size()));
    assert_int_equal(ct::stats_of(f.cache, "inter").corrupt, 1);

    // Namespace invalidation reaches the interop keys ("{ns}:...").
    CT_OK(cachekit_cache_invalidate_namespace(f.cache, "inter"));
    CT_EXPECT(CACHEKIT_ENOTFOUND, cachekit_backend_exists(f.backend, storage.data(), storage.size()));
}

void check_encrypted_interop(const char *tenant) {
    if (!cachekit_crypto_available()) skip();
    Fixture f = open_fixture(true, tenant);
    const std::string key = interop_key(std::string("\x91\xa3" "bob", 5));
    CT_OK(cachekit_cache_put(f.cache, "inter", key.data(), key.size(), kPayload.data(), kPayload.size(), 60));
    Buf raw;
    CT_OK(cachekit_backend_get(f.backend, raw.get(), key.data(), key.size()));
    const std::string stored = raw.str();
    assert_int_equal(stored.size(), kPayload.size() + CACHEKIT_NONCE_SIZE + CACHEKIT_TAG_SIZE);
    assert_false(ct::contains(stored, "ada"));
    assert_false(stored.compare(0, 2, "CK") == 0 && stored[2] == '\x03');  // no frame in interop mode

    ct::KeyringHandle ring_owner = ct::new_keyring(ct::kMasterKeyHex);
    cachekit_keyring *ring = ring_owner.get();
    Buf aad, plain;
    CT_OK(cachekit_crypto_aad(aad.get(), tenant, key.c_str(), "msgpack", 0, nullptr));
    int index = -1;
    CT_OK(cachekit_keyring_decrypt(ring, plain.get(), &index, tenant, nullptr, aad.b.ptr, aad.b.size, stored.data(),
                                   stored.size()));
    assert_int_equal(index, 0);
    assert_true(plain.str() == kPayload);

    // Any other AAD fails: the 5-component (auto mode) one, another key, another tenant, compressed.
    Buf wrong;
    CT_OK(cachekit_crypto_aad(wrong.get(), tenant, key.c_str(), "msgpack", 0, "msgpack"));
    CT_EXPECT(CACHEKIT_EAUTH, cachekit_keyring_decrypt(ring, plain.get(), nullptr, tenant, nullptr, wrong.b.ptr,
                                                       wrong.b.size, stored.data(), stored.size()));
    CT_OK(cachekit_crypto_aad(wrong.get(), tenant, (key + "x").c_str(), "msgpack", 0, nullptr));
    CT_EXPECT(CACHEKIT_EAUTH, cachekit_keyring_decrypt(ring, plain.get(), nullptr, tenant, nullptr, wrong.b.ptr,
                                                       wrong.b.size, stored.data(), stored.size()));
    CT_OK(cachekit_crypto_aad(wrong.get(), tenant, key.c_str(), "msgpack", 1, nullptr));
    CT_EXPECT(CACHEKIT_EAUTH, cachekit_keyring_decrypt(ring, plain.get(), nullptr, tenant, nullptr, wrong.b.ptr,
                                                       wrong.b.size, stored.data(), stored.size()));
    CT_OK(cachekit_crypto_aad(wrong.get(), "someone-else", key.c_str(), "msgpack", 0, nullptr));
    CT_EXPECT(CACHEKIT_EAUTH, cachekit_keyring_decrypt(ring, plain.get(), nullptr, "someone-else", nullptr, wrong.b.ptr,
                                                       wrong.b.size, stored.data(), stored.size()));

    // The other direction: what another SDK seals with that AAD is read back.
    const std::string other = interop_key(std::string("\x91\xa3" "eve", 5));
    const std::string value = ct::mp_str("sealed elsewhere");
    Buf sealed;
    CT_OK(cachekit_crypto_aad(aad.get(), tenant, other.c_str(), "msgpack", 0, nullptr));
    CT_OK(cachekit_keyring_encrypt(ring, sealed.get(), tenant, aad.b.ptr, aad.b.size, value.data(), value.size()));
    CT_OK(cachekit_backend_set(f.backend, other.data(), other.size(), sealed.b.ptr, sealed.b.size, 0));
    Buf out;
    cachekit_lookup info = CACHEKIT_LOOKUP_INIT;
    CT_OK(cachekit_cache_get(f.cache, out.get(), &info, "inter", other.data(), other.size()));
    assert_int_equal(info.source, CACHEKIT_SOURCE_L2);
    assert_true(out.str() == value);

    // Plain MessagePack where ciphertext is required: refused (a miss).
    const std::string planted = interop_key(std::string("\x91\xa3" "mal", 5));
    CT_OK(cachekit_backend_set(f.backend, planted.data(), planted.size(), kPayload.data(), kPayload.size(), 0));
    CT_EXPECT(CACHEKIT_ENOTFOUND, cachekit_cache_get(f.cache, out.get(), nullptr, "inter", planted.data(), planted.size()));
    cachekit_cache_stats s = ct::stats_of(f.cache, "inter");
    assert_int_equal(s.tampered + s.downgrade, 1);

    // The L1 hit returns the payload.
    CT_OK(cachekit_cache_get(f.cache, out.get(), &info, "inter", key.data(), key.size()));
    assert_int_equal(info.source, CACHEKIT_SOURCE_L1);
    assert_true(out.str() == kPayload);
}

void test_encrypted_interop_default_tenant(void **) { check_encrypted_interop(nullptr); }
void test_encrypted_interop_named_tenant(void **) { check_encrypted_interop("acme"); }


// cachekit-rs 0.13.1's client .namespace("app") stores "app:{key}" and seals its
// plain MessagePack with the 4-component AAD over "app:{key}"; our plain-format cache
// with key_prefix "app:" must write and read exactly that.
void test_encrypted_interop_under_a_prefix(void **) {
    if (!cachekit_crypto_available()) skip();
    Fixture f = open_fixture(true, nullptr, "app:");
    const std::string key = "user:1";
    const std::string storage = "app:" + key;
    CT_OK(cachekit_cache_put(f.cache, "app", key.data(), key.size(), kPayload.data(), kPayload.size(), 60));
    Buf raw;
    CT_OK(cachekit_backend_get(f.backend, raw.get(), storage.data(), storage.size()));
    const std::string stored = raw.str();

    ct::KeyringHandle ring_owner = ct::new_keyring(ct::kMasterKeyHex);
    cachekit_keyring *ring = ring_owner.get();
    Buf aad, plain;
    CT_OK(cachekit_crypto_aad(aad.get(), nullptr, storage.c_str(), "msgpack", 0, nullptr));
    CT_OK(cachekit_keyring_decrypt(ring, plain.get(), nullptr, nullptr, nullptr, aad.b.ptr, aad.b.size, stored.data(),
                                   stored.size()));
    assert_true(plain.str() == kPayload);
    Buf bare;  // the pre-2026-10 binding: no longer what we write
    CT_OK(cachekit_crypto_aad(bare.get(), nullptr, key.c_str(), "msgpack", 0, nullptr));
    CT_EXPECT(CACHEKIT_EAUTH, cachekit_keyring_decrypt(ring, plain.get(), nullptr, nullptr, nullptr, bare.b.ptr,
                                                       bare.b.size, stored.data(), stored.size()));

    // Sealed elsewhere over the prefixed key: read back.
    const std::string other = "user:2", other_storage = "app:" + other;
    const std::string value = ct::mp_str("sealed by cachekit-rs");
    Buf sealed;
    CT_OK(cachekit_crypto_aad(aad.get(), nullptr, other_storage.c_str(), "msgpack", 0, nullptr));
    CT_OK(cachekit_keyring_encrypt(ring, sealed.get(), nullptr, aad.b.ptr, aad.b.size, value.data(), value.size()));
    CT_OK(cachekit_backend_set(f.backend, other_storage.data(), other_storage.size(), sealed.b.ptr, sealed.b.size, 0));
    Buf out;
    CT_OK(cachekit_cache_get(f.cache, out.get(), nullptr, "app", other.data(), other.size()));
    assert_true(out.str() == value);

    // Sealed over the bare key but stored under the prefix: refused, not retried stripped.
    const std::string stripped = "user:3", stripped_storage = "app:" + stripped;
    CT_OK(cachekit_crypto_aad(bare.get(), nullptr, stripped.c_str(), "msgpack", 0, nullptr));
    CT_OK(cachekit_keyring_encrypt(ring, sealed.get(), nullptr, bare.b.ptr, bare.b.size, value.data(), value.size()));
    CT_OK(cachekit_backend_set(f.backend, stripped_storage.data(), stripped_storage.size(), sealed.b.ptr, sealed.b.size,
                               0));
    CT_EXPECT(CACHEKIT_ENOTFOUND, cachekit_cache_get(f.cache, out.get(), nullptr, "app", stripped.data(), stripped.size()));
    assert_int_equal(ct::stats_of(f.cache, "app").tampered, 1);
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_interop_stores_the_payload),
        cmocka_unit_test(test_encrypted_interop_default_tenant),
        cmocka_unit_test(test_encrypted_interop_named_tenant),
        cmocka_unit_test(test_encrypted_interop_under_a_prefix),
    };
    return cmocka_run_group_tests_name("cache_interop", tests, nullptr, nullptr);
}
