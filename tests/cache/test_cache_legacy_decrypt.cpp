// Issue 24 (PRE-37, PRE-42): a cache with encryption off but a master key
// present (master_key_hex or CACHEKIT_MASTER_KEY) reads an encrypted CK frame
// a still-encrypting peer wrote, as cachekit-py 0.21+ does with
// encryption=False (its legacy-decrypt read), instead of recomputing it.
// The key source still never turns encryption on: that cache's own writes
// are plaintext frames. And nothing here loosens an encrypting cache: it
// still refuses a frame claiming plaintext (no downgrade).
// One memory backend is shared by a writer and a reader cache, L1 off so
// each get reads L2.
#include <cstdlib>

#include "cache_test_util.hpp"

namespace {

using ct::Buf;
using ct::CacheHandle;

const char *const kOtherKeyHex = "7272727272727272727272727272727272727272727272727272727272727272";

struct EnvClear {
    EnvClear() { clear(); }
    ~EnvClear() { clear(); }
    static void clear() {
        unsetenv("CACHEKIT_MASTER_KEY");
        unsetenv("CACHEKIT_PREVIOUS_MASTER_KEYS");
    }
};

CacheHandle open_cache(cachekit_backend *b, bool encryption, const char *master_key_hex, const char *prefix = nullptr) {
    cachekit_cache_options o = ct::default_options();
    o.backend = b;
    o.l1 = CACHEKIT_OFF;
    o.encryption = encryption ? CACHEKIT_ON : CACHEKIT_OFF;
    o.master_key_hex = master_key_hex;
    o.key_prefix = prefix;
    return ct::new_cache(&o);
}

void put(cachekit_cache *c, const std::string &key, const std::string &value) {
    CT_OK(cachekit_cache_put(c, "t", key.data(), key.size(), value.data(), value.size(), CACHEKIT_TTL_DEFAULT));
}

int get(cachekit_cache *c, const std::string &key, std::string *value = nullptr) {
    Buf out;
    int rc = cachekit_cache_get(c, out.get(), nullptr, "t", key.data(), key.size());
    if (value) *value = out.str();
    return rc;
}

// The frame metadata of the entry stored at `storage_key`.
std::string stored_metadata(cachekit_backend *b, const std::string &storage_key) {
    Buf raw, meta;
    CT_OK(cachekit_backend_get(b, raw.get(), storage_key.data(), storage_key.size()));
    size_t off = 0;
    CT_OK(cachekit_frame_decode(nullptr, meta.get(), &off, raw.b.ptr, raw.b.size));
    return meta.str();
}

void test_explicit_key_reads_a_peers_encrypted_entry(void **) {
    EnvClear env;
    ct::BackendHandle b = ct::open_backend("memory://");
    CacheHandle writer = open_cache(b.get(), true, ct::kMasterKeyHex);
    CacheHandle reader = open_cache(b.get(), false, ct::kMasterKeyHex);
    const std::string key = "ns:t:func:m.f:args:peer", value = ct::mp_str("sealed by a peer");
    put(writer.get(), key, value);
    assert_true(ct::contains(stored_metadata(b.get(), key), "\"encrypted\""));
    std::string got;
    CT_OK(get(reader.get(), key, &got));
    assert_true(got == value);
    cachekit_cache_stats s = ct::stats_of(reader.get(), "t");
    assert_int_equal(s.l2_hits, 1);
    assert_int_equal(s.wrong_key + s.tampered + s.corrupt + s.downgrade, 0);
}

void test_env_key_reads_but_never_writes_ciphertext(void **) {
    EnvClear env;
    setenv("CACHEKIT_MASTER_KEY", ct::kMasterKeyHex, 1);
    ct::BackendHandle b = ct::open_backend("memory://");
    CacheHandle writer = open_cache(b.get(), true, nullptr);
    CacheHandle reader = open_cache(b.get(), false, nullptr);
    const std::string sealed = "ns:t:func:m.f:args:env", value = ct::mp_str("from the environment's key");
    put(writer.get(), sealed, value);
    std::string got;
    CT_OK(get(reader.get(), sealed, &got));
    assert_true(got == value);
    // The reader's own write is a plaintext frame: the key is a source, not a switch.
    const std::string own = "ns:t:func:m.f:args:own";
    put(reader.get(), own, ct::mp_str("plain"));
    assert_false(ct::contains(stored_metadata(b.get(), own), "encrypted"));
    CT_OK(get(reader.get(), own, &got));
    assert_true(got == ct::mp_str("plain"));
}

void test_previous_key_opens_an_older_entry(void **) {
    EnvClear env;
    ct::BackendHandle b = ct::open_backend("memory://");
    CacheHandle old_writer = open_cache(b.get(), true, kOtherKeyHex);
    const std::string key = "ns:t:func:m.f:args:rotated", value = ct::mp_str("before rotation");
    put(old_writer.get(), key, value);
    setenv("CACHEKIT_PREVIOUS_MASTER_KEYS", kOtherKeyHex, 1);
    CacheHandle reader = open_cache(b.get(), false, ct::kMasterKeyHex);
    std::string got;
    CT_OK(get(reader.get(), key, &got));
    assert_true(got == value);
}

void test_key_prefix_is_bound_as_for_an_encrypting_reader(void **) {
    EnvClear env;
    ct::BackendHandle b = ct::open_backend("memory://");
    CacheHandle writer = open_cache(b.get(), true, ct::kMasterKeyHex, "app:");
    CacheHandle reader = open_cache(b.get(), false, ct::kMasterKeyHex, "app:");
    const std::string key = "ns:t:func:m.f:args:prefixed", value = ct::mp_str("under a prefix");
    put(writer.get(), key, value);
    std::string got;
    CT_OK(get(reader.get(), key, &got));
    assert_true(got == value);
}

void test_another_key_is_a_miss_that_keeps_the_entry(void **) {
    EnvClear env;
    ct::BackendHandle b = ct::open_backend("memory://");
    CacheHandle writer = open_cache(b.get(), true, kOtherKeyHex);
    CacheHandle reader = open_cache(b.get(), false, ct::kMasterKeyHex);
    const std::string key = "ns:t:func:m.f:args:other";
    put(writer.get(), key, ct::mp_str("not ours"));
    CT_EXPECT(CACHEKIT_ENOTFOUND, get(reader.get(), key));
    assert_int_equal(ct::stats_of(reader.get(), "t").wrong_key, 1);
    CT_OK(cachekit_backend_exists(b.get(), key.data(), key.size()));
}

void test_no_key_still_cannot_read_it(void **) {
    EnvClear env;
    ct::BackendHandle b = ct::open_backend("memory://");
    CacheHandle writer = open_cache(b.get(), true, ct::kMasterKeyHex);
    CacheHandle reader = open_cache(b.get(), false, nullptr);
    const std::string key = "ns:t:func:m.f:args:nokey";
    put(writer.get(), key, ct::mp_str("sealed"));
    CT_EXPECT(CACHEKIT_ENOTFOUND, get(reader.get(), key));
    assert_int_equal(ct::stats_of(reader.get(), "t").wrong_key, 1);
}

void test_encrypting_reader_still_refuses_plaintext(void **) {
    EnvClear env;
    ct::BackendHandle b = ct::open_backend("memory://");
    CacheHandle plain = open_cache(b.get(), false, ct::kMasterKeyHex);
    CacheHandle encrypting = open_cache(b.get(), true, ct::kMasterKeyHex);
    const std::string key = "ns:t:func:m.f:args:downgrade";
    put(plain.get(), key, ct::mp_str("plaintext"));
    CT_EXPECT(CACHEKIT_ENOTFOUND, get(encrypting.get(), key));
    assert_int_equal(ct::stats_of(encrypting.get(), "t").downgrade, 1);
}

}  // namespace

int main() {
    if (!cachekit_crypto_available()) {
        std::fprintf(stderr, "AES-256-GCM unavailable on this CPU: skipped\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_explicit_key_reads_a_peers_encrypted_entry),
        cmocka_unit_test(test_env_key_reads_but_never_writes_ciphertext),
        cmocka_unit_test(test_previous_key_opens_an_older_entry),
        cmocka_unit_test(test_key_prefix_is_bound_as_for_an_encrypting_reader),
        cmocka_unit_test(test_another_key_is_a_miss_that_keeps_the_entry),
        cmocka_unit_test(test_no_key_still_cannot_read_it),
        cmocka_unit_test(test_encrypting_reader_still_refuses_plaintext),
    };
    return cmocka_run_group_tests_name("cache_legacy_decrypt", tests, nullptr, nullptr);
}
