// Issue 5, item 4 (white-box part): an encrypted cache keeps only ciphertext
// in L1. Links the static core and drives cachekit::cache::Cache directly so
// the raw L1 entry can be read with cache.l1()->get(). The same over a
// memory L2 (the fill from L2 into L1 keeps the ciphertext too) and, as a
// control, a plaintext cache whose L1 holds the payload itself.
#include <memory>
#include <optional>
#include <string>

#include "cache/cache.hpp"
#include "codec/crypto.hpp"
#include "codec/keyring.hpp"
#include "l2/memory_backend.hpp"
#include "util/buffer.hpp"
#include "cache_test_util.hpp"

namespace {

using cachekit::Buffer;
using cachekit::cache::Cache;
using cachekit::cache::CacheConfig;
using cachekit::cache::Lookup;
using cachekit::cache::Source;

const std::string kSecret = "TOP-SECRET-PLAINTEXT:0123456789abcdefghijklmnopqrstuvwxyz-ABCDEF";

CacheConfig config(bool encrypted, bool integrity) {
    CacheConfig c;
    c.value.integrity = integrity;
    if (encrypted) c.keyring = cachekit::crypto::Keyring::from_hex(ct::kMasterKeyHex, "");
    c.l1_enabled = true;
    c.l1.sweep_interval_ms = 0;
    return c;
}

std::string raw_l1(Cache &cache, const std::string &key) {
    Buffer raw;
    if (!cache.l1()->get(key, raw.get())) fail_msg("no L1 entry for %s", key.c_str());
    return std::string(raw.view());
}

void check_l1_ciphertext(bool integrity) {
    assert_int_equal(kSecret.size(), 64u);
    Cache cache(config(true, integrity));
    const std::string key = "ns:wb:func:m.f:args:secret";
    const std::string value = ct::mp_str(kSecret);
    assert_int_equal(cache.put("wb", key, value, std::nullopt), CACHEKIT_OK);

    const std::string stored = raw_l1(cache, key);
    assert_true(stored.size() >= 3);
    assert_memory_equal(stored.data(), "CK\x03", 3);
    assert_false(ct::contains(stored, kSecret));
    assert_false(ct::contains(stored, kSecret.substr(0, 16)));
    assert_false(ct::contains(stored, kSecret.substr(48, 16)));

    // The hit is still the plaintext.
    Buffer out;
    Lookup info;
    assert_int_equal(cache.get("wb", key, out.get(), &info), CACHEKIT_OK);
    assert_true(out.view() == value);
    assert_true(info.source == Source::L1);

    // Every put is sealed again (a fresh nonce): new ciphertext, same plaintext.
    assert_int_equal(cache.put("wb", key, value, std::nullopt), CACHEKIT_OK);
    const std::string stored2 = raw_l1(cache, key);
    assert_false(stored2 == stored);
    assert_false(ct::contains(stored2, kSecret.substr(0, 16)));
}

void test_l1_holds_ciphertext(void **) { check_l1_ciphertext(true); }
void test_l1_holds_ciphertext_without_envelope(void **) { check_l1_ciphertext(false); }

void test_l1_fill_from_l2_keeps_ciphertext(void **) {
    auto backend = std::shared_ptr<cachekit::l2::Backend>(cachekit::l2::open_memory());
    CacheConfig writer_config = config(true, true);
    writer_config.backend = backend;
    CacheConfig reader_config = config(true, true);
    reader_config.backend = backend;
    Cache writer(std::move(writer_config));
    Cache reader(std::move(reader_config));
    const std::string key = "ns:wb:func:m.f:args:fill";
    const std::string value = ct::mp_str(kSecret);
    assert_int_equal(writer.put("wb", key, value, std::nullopt), CACHEKIT_OK);

    Buffer out;
    Lookup info;
    assert_int_equal(reader.get("wb", key, out.get(), &info), CACHEKIT_OK);
    assert_true(info.source == Source::L2);
    assert_true(out.view() == value);
    const std::string stored = raw_l1(reader, key);
    assert_memory_equal(stored.data(), "CK\x03", 3);
    assert_false(ct::contains(stored, kSecret.substr(0, 16)));
    Lookup again;
    assert_int_equal(reader.get("wb", key, out.get(), &again), CACHEKIT_OK);
    assert_true(again.source == Source::L1);
    assert_true(out.view() == value);
}

// The loaded value of get_or_load is stored as ciphertext as well.
void test_loaded_value_in_l1_is_ciphertext(void **) {
    Cache cache(config(true, true));
    const std::string key = "ns:wb:func:m.f:args:loaded";
    const std::string value = ct::mp_str(kSecret);
    Buffer out;
    Lookup info;
    int rc = cache.get_or_load("wb", key, std::nullopt,
                               [&](cachekit::cache::LoadResult &r) {
                                   r.has_value = true;
                                   r.value = value;
                                   return 0;
                               },
                               out.get(), &info);
    assert_int_equal(rc, CACHEKIT_OK);
    assert_true(out.view() == value);
    const std::string stored = raw_l1(cache, key);
    assert_memory_equal(stored.data(), "CK\x03", 3);
    assert_false(ct::contains(stored, kSecret.substr(0, 16)));
}

// Control: without encryption the L1 holds the plaintext payload as is.
void test_plaintext_cache_l1_holds_payload(void **) {
    Cache cache(config(false, true));
    const std::string key = "ns:wb:func:m.f:args:plain";
    const std::string value = ct::mp_str(kSecret);
    assert_int_equal(cache.put("wb", key, value, std::nullopt), CACHEKIT_OK);
    assert_true(raw_l1(cache, key) == value);
}

}  // namespace

int main() {
    if (!cachekit::crypto::aes_gcm_available()) {
        std::fprintf(stderr, "AES-256-GCM unavailable on this CPU: skipped\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_l1_holds_ciphertext),
        cmocka_unit_test(test_l1_holds_ciphertext_without_envelope),
        cmocka_unit_test(test_l1_fill_from_l2_keeps_ciphertext),
        cmocka_unit_test(test_loaded_value_in_l1_is_ciphertext),
        cmocka_unit_test(test_plaintext_cache_l1_holds_payload),
    };
    return cmocka_run_group_tests_name("cache_l1_ciphertext", tests, nullptr, nullptr);
}
