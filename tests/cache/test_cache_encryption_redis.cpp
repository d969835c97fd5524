// Issue 5, item 4 (public API part): with encryption on, Redis holds only
// ciphertext. The cache runs over a real private redis-server through a
// borrowed backend handle (cachekit_backend_open), so the raw entries can be
// read with cachekit_backend_get:
//  - the raw L2 bytes are a CK v3 frame ("CK" 03) whose metadata says
//    "encrypted": true, and neither the frame nor its payload contains the
//    plaintext;
//  - cachekit_inspect with a keyring and the logical key (key_prefix + cache key:
//    the AAD binds the prefix since the protocol change of 2026-10, as cachekit-py
//    0.24 does) opens it; the bare cache key does not;
//  - the L1 hit still returns the plaintext, and a second cache reads it from L2.
// (That L1 keeps ciphertext too is checked white-box in test_cache_l1_ciphertext.)
// Skips (exit 77) without redis-server.
#include <memory>

#include "../redis/redis_server.hpp"
#include "cache_test_util.hpp"

namespace {

using cachekit::testing::RedisServer;
using ct::Buf;

RedisServer *g_redis = nullptr;

// 64 recognisable bytes.
const std::string kSecret = "TOP-SECRET-PLAINTEXT:0123456789abcdefghijklmnopqrstuvwxyz-ABCDEF";

ct::CacheHandle encrypted_cache(cachekit_backend *backend, const char *prefix, int l1, int integrity = CACHEKIT_DEFAULT,
                                int fail_closed = CACHEKIT_DEFAULT) {
    cachekit_cache_options o = ct::default_options();
    o.backend = backend;
    o.encryption = CACHEKIT_ON;
    o.master_key_hex = ct::kMasterKeyHex;
    o.key_prefix = prefix;
    o.l1 = l1;
    o.integrity = integrity;
    o.fail_closed = fail_closed;
    return ct::new_cache(&o);
}

void check_ciphertext_at_rest(int integrity_switch) {
    assert_int_equal(kSecret.size(), 64u);
    ct::BackendHandle backend_owner = ct::open_backend(g_redis->url().c_str());
    cachekit_backend *backend = backend_owner.get();
    assert_string_equal(cachekit_backend_kind(backend), "redis");

    cachekit_cache_options o = ct::default_options();
    o.backend = backend;
    o.encryption = CACHEKIT_ON;
    o.master_key_hex = ct::kMasterKeyHex;
    o.key_prefix = "t:default:";
    o.integrity = integrity_switch;
    ct::CacheHandle cache = ct::new_cache(&o);
    cachekit_cache *c = cache.get();

    const std::string key = integrity_switch == CACHEKIT_OFF ? "ns:enc:func:m.secret:args:raw"
                                                             : "ns:enc:func:m.secret:args:env";
    const std::string value = ct::mp_str(kSecret);
    CT_OK(cachekit_cache_put(c, "enc", key.data(), key.size(), value.data(), value.size(), 60.0));

    // L1 hit: the plaintext comes back.
    Buf out;
    cachekit_lookup info = CACHEKIT_LOOKUP_INIT;
    CT_OK(cachekit_cache_get(c, out.get(), &info, "enc", key.data(), key.size()));
    assert_int_equal(info.source, CACHEKIT_SOURCE_L1);
    assert_true(out.str() == value);

    // The raw L2 entry, stored under prefix + key.
    const std::string storage_key = "t:default:" + key;
    Buf raw;
    CT_EXPECT(CACHEKIT_ENOTFOUND, cachekit_backend_get(backend, raw.get(), key.data(), key.size()));
    CT_OK(cachekit_backend_get(backend, raw.get(), storage_key.data(), storage_key.size()));
    const std::string stored = raw.str();
    assert_true(stored.size() > 7);
    assert_memory_equal(stored.data(), "CK\x03", 3);
    assert_false(ct::contains(stored, kSecret));
    assert_false(ct::contains(stored, kSecret.substr(0, 16)));
    assert_false(ct::contains(stored, kSecret.substr(40, 16)));

    Buf serializer, meta;
    size_t offset = 0;
    CT_OK(cachekit_frame_decode(serializer.get(), meta.get(), &offset, stored.data(), stored.size()));
    assert_string_equal(serializer.b.ptr, "default");
    const std::string m = meta.str();
    if (!ct::contains(m, "\"encrypted\": true") && !ct::contains(m, "\"encrypted\":true"))
        fail_msg("metadata without \"encrypted\": true: %s", m.c_str());
    assert_true(ct::contains(m, "\"tenant_id\": \"default\"") || ct::contains(m, "\"tenant_id\":\"default\""));
    assert_true(ct::contains(m, "AES-256-GCM"));
    const std::string payload = stored.substr(offset);
    assert_true(payload.size() >= size_t(CACHEKIT_NONCE_SIZE + CACHEKIT_TAG_SIZE));
    assert_false(ct::contains(payload, kSecret.substr(0, 16)));

    // An operator with the key and the logical key (key_prefix + cache key: the AAD
    // binds the prefix, protocol change of 2026-10) can open it.
    ct::KeyringHandle ring_owner = ct::new_keyring(ct::kMasterKeyHex);
    cachekit_keyring *ring = ring_owner.get();
    Buf report;
    CT_OK(cachekit_inspect(report.get(), stored.data(), stored.size(), ring, nullptr, storage_key.c_str()));
    const std::string r = report.str();
    if (!ct::contains(r, "\"checks\": \"pass\"") || !ct::contains(r, kSecret))
        fail_msg("inspect did not open the entry: %s", r.c_str());
    // Regression (live interop with cachekit-py 0.24.1): the bare cache key, the
    // pre-2026-10 AAD, does not open it.
    CT_OK(cachekit_inspect(report.get(), stored.data(), stored.size(), ring, nullptr, key.c_str()));
    assert_false(ct::contains(report.str(), kSecret));
    assert_true(ct::contains(report.str(), "\"checks\": \"fail\""));
    // Without the keyring it stays opaque; with another cache key it does not open.
    CT_OK(cachekit_inspect(report.get(), stored.data(), stored.size(), nullptr, nullptr, nullptr));
    assert_false(ct::contains(report.str(), kSecret));
    assert_true(ct::contains(report.str(), "not_checked"));
    CT_OK(cachekit_inspect(report.get(), stored.data(), stored.size(), ring, nullptr, "ns:enc:some:other:key"));
    assert_false(ct::contains(report.str(), kSecret));
    assert_true(ct::contains(report.str(), "\"checks\": \"fail\""));

    // A cache configured for the other container refuses it: after decryption
    // the container is the reader's configured one, never the header's claim
    // (python-frame.json ciphertext_plain_msgpack_claims_uncompressed).
    // Fail closed, so the entry stays for the readers below.
    {
        const int other_integrity = integrity_switch == CACHEKIT_OFF ? CACHEKIT_ON : CACHEKIT_OFF;
        ct::CacheHandle mismatched = encrypted_cache(backend, "t:default:", CACHEKIT_OFF, other_integrity, CACHEKIT_ON);
        const int rc = cachekit_cache_get(mismatched.get(), out.get(), nullptr, "enc", key.data(), key.size());
        if (rc == CACHEKIT_OK) fail_msg("a reader configured for the other container returned the value");
        CT_OK(cachekit_backend_exists(backend, storage_key.data(), storage_key.size()));
    }

    // A second cache (its own L1), configured as the writer, reads the entry
    // from Redis and decrypts it.
    ct::CacheHandle c2 = encrypted_cache(backend, "t:default:", CACHEKIT_DEFAULT, integrity_switch);
    cachekit_lookup info2 = CACHEKIT_LOOKUP_INIT;
    CT_OK(cachekit_cache_get(c2.get(), out.get(), &info2, "enc", key.data(), key.size()));
    assert_int_equal(info2.source, CACHEKIT_SOURCE_L2);
    assert_true(out.str() == value);
    // ... and then from its L1.
    CT_OK(cachekit_cache_get(c2.get(), out.get(), &info2, "enc", key.data(), key.size()));
    assert_int_equal(info2.source, CACHEKIT_SOURCE_L1);
    assert_true(out.str() == value);
    cachekit_cache_stats s = ct::stats_of(c2.get());
    assert_int_equal(s.tampered + s.corrupt + s.downgrade + s.wrong_key, 0);
    c2.reset();

    // A cache with another master key cannot read it (wrong key: a miss).
    cachekit_cache_options other = ct::default_options();
    other.backend = backend;
    other.encryption = CACHEKIT_ON;
    other.master_key_hex = "6262626262626262626262626262626262626262626262626262626262626262";
    other.key_prefix = "t:default:";
    other.integrity = integrity_switch;  // the writer's container: only the key differs
    other.l1 = CACHEKIT_OFF;
    other.fail_closed = CACHEKIT_ON;  // keep the entry: it is not this cache's to delete
    ct::CacheHandle c3 = ct::new_cache(&other);
    const int rc = cachekit_cache_get(c3.get(), out.get(), nullptr, "enc", key.data(), key.size());
    assert_true(rc == CACHEKIT_EKEYNOTFOUND);
    assert_int_equal(ct::stats_of(c3.get()).wrong_key, 1);
    c3.reset();
    CT_OK(cachekit_backend_exists(backend, storage_key.data(), storage_key.size()));
}

void test_redis_holds_only_ciphertext(void **) { check_ciphertext_at_rest(CACHEKIT_DEFAULT); }
void test_redis_holds_only_ciphertext_without_envelope(void **) { check_ciphertext_at_rest(CACHEKIT_OFF); }

// Loaded values are encrypted the same way.
void test_loaded_value_is_encrypted(void **) {
    ct::BackendHandle backend_owner = ct::open_backend(g_redis->url().c_str());
    cachekit_backend *backend = backend_owner.get();
    ct::CacheHandle cache = encrypted_cache(backend, "", CACHEKIT_OFF);
    cachekit_cache *c = cache.get();
    const std::string key = "ns:enc:func:m.load:args:1";
    auto loader = [](cachekit_load *load, void *) {
        const std::string v = ct::mp_str(kSecret);
        return cachekit_load_set_value(load, v.data(), v.size());
    };
    Buf out, raw;
    CT_OK(cachekit_cache_get_or_load(c, out.get(), nullptr, "enc", key.data(), key.size(), 60.0, loader, nullptr));
    assert_true(out.str() == ct::mp_str(kSecret));
    CT_OK(cachekit_backend_get(backend, raw.get(), key.data(), key.size()));
    assert_memory_equal(raw.b.ptr, "CK\x03", 3);
    assert_false(ct::contains(raw.str(), kSecret.substr(0, 16)));
    double ttl = 0;
    CT_OK(cachekit_backend_ttl(backend, &ttl, key.data(), key.size()));
    assert_true(ttl > 0 && ttl <= 60.0);
    cachekit_lookup info = CACHEKIT_LOOKUP_INIT;
    CT_OK(cachekit_cache_get(c, out.get(), &info, "enc", key.data(), key.size()));
    assert_int_equal(info.source, CACHEKIT_SOURCE_L2);
    assert_true(out.str() == ct::mp_str(kSecret));
}

}  // namespace

int main() {
    RedisServer::require_or_skip("test_cache_encryption_redis");
    if (!cachekit_crypto_available()) {
        std::fprintf(stderr, "AES-256-GCM unavailable on this CPU: skipped\n");
        return 77;
    }
    RedisServer server;
    g_redis = &server;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_redis_holds_only_ciphertext),
        cmocka_unit_test(test_redis_holds_only_ciphertext_without_envelope),
        cmocka_unit_test(test_loaded_value_is_encrypted),
    };
    return cmocka_run_group_tests_name("cache_encryption_redis", tests, nullptr, nullptr);
}
