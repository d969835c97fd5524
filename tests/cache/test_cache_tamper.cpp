// Issue 5, item 5: entries that fail their checks are refused.
// Encrypted cache over a borrowed memory backend, L1 off so every get reads
// the (doctored) L2 entry:
//  - one flipped ciphertext byte -> a miss (fail-open), counted tampered, and
//    the entry is deleted from L2;
//  - two keys' ciphertexts swapped (the AAD binds the key) -> both miss,
//    both counted tampered;
//  - fail_closed: the get returns CACHEKIT_EAUTH and the entry is kept;
//  - a plaintext frame (or bare MessagePack) planted under an encrypted
//    cache's key -> a miss, counted downgrade.
// Plaintext cache: a flipped byte in the envelope's compressed data or
// checksum -> a miss, counted corrupt.
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

Fixture open_fixture(bool encrypted, int fail_closed = CACHEKIT_DEFAULT) {
    Fixture f;
    f.backend_owner = ct::open_backend("memory://");
    f.backend = f.backend_owner.get();
    cachekit_cache_options o = ct::default_options();
    o.backend = f.backend;
    o.l1 = CACHEKIT_OFF;
    o.fail_closed = fail_closed;
    if (encrypted) {
        o.encryption = CACHEKIT_ON;
        o.master_key_hex = ct::kMasterKeyHex;
    }
    f.cache_owner = ct::new_cache(&o);
    f.cache = f.cache_owner.get();
    return f;
}

void put(Fixture &f, const std::string &key, const std::string &value) {
    CT_OK(cachekit_cache_put(f.cache, "t", key.data(), key.size(), value.data(), value.size(), CACHEKIT_TTL_DEFAULT));
}

std::string raw_get(Fixture &f, const std::string &key) {
    Buf raw;
    CT_OK(cachekit_backend_get(f.backend, raw.get(), key.data(), key.size()));
    return raw.str();
}

void raw_set(Fixture &f, const std::string &key, const std::string &bytes) {
    CT_OK(cachekit_backend_set(f.backend, key.data(), key.size(), bytes.data(), bytes.size(), 0));
}

int get(Fixture &f, const std::string &key, std::string *value = nullptr) {
    Buf out;
    int rc = cachekit_cache_get(f.cache, out.get(), nullptr, "t", key.data(), key.size());
    if (value) *value = out.str();
    return rc;
}

size_t payload_offset(const std::string &frame) {
    size_t offset = 0;
    CT_OK(cachekit_frame_decode(nullptr, nullptr, &offset, frame.data(), frame.size()));
    return offset;
}

void test_flipped_ciphertext_byte_is_tampered(void **) {
    Fixture f = open_fixture(true);
    const std::string key = "ns:t:func:m.f:args:flip", value = ct::mp_str("sealed value");
    put(f, key, value);
    std::string got;
    CT_OK(get(f, key, &got));
    assert_true(got == value);

    // Flip one byte in the middle of the ciphertext (past the 12-byte nonce).
    std::string raw = raw_get(f, key);
    const size_t off = payload_offset(raw);
    const size_t at = off + CACHEKIT_NONCE_SIZE + (raw.size() - off - CACHEKIT_NONCE_SIZE) / 2;
    raw[at] = char(raw[at] ^ 0x01);
    raw_set(f, key, raw);

    CT_EXPECT(CACHEKIT_ENOTFOUND, get(f, key));
    cachekit_cache_stats s = ct::stats_of(f.cache, "t");
    assert_int_equal(s.tampered, 1);
    assert_int_equal(s.corrupt + s.downgrade + s.wrong_key, 0);
    assert_int_equal(s.misses, 1);
    // Refused entries are deleted (fail-open).
    CT_EXPECT(CACHEKIT_ENOTFOUND, cachekit_backend_exists(f.backend, key.data(), key.size()));
    // The next get is a plain miss, not another tampered entry.
    CT_EXPECT(CACHEKIT_ENOTFOUND, get(f, key));
    assert_int_equal(ct::stats_of(f.cache, "t").tampered, 1);
}

void test_flipped_tag_and_nonce_are_tampered(void **) {
    Fixture f = open_fixture(true);
    const std::string a = "ns:t:func:m.f:args:tag", b = "ns:t:func:m.f:args:nonce";
    put(f, a, ct::mp_str("a"));
    put(f, b, ct::mp_str("b"));
    std::string raw = raw_get(f, a);
    raw.back() = char(raw.back() ^ 0x80);  // last byte of the tag
    raw_set(f, a, raw);
    raw = raw_get(f, b);
    const size_t off = payload_offset(raw);
    raw[off] = char(raw[off] ^ 0x01);  // first byte of the nonce
    raw_set(f, b, raw);
    CT_EXPECT(CACHEKIT_ENOTFOUND, get(f, a));
    CT_EXPECT(CACHEKIT_ENOTFOUND, get(f, b));
    assert_int_equal(ct::stats_of(f.cache, "t").tampered, 2);
}

void test_swapped_ciphertexts_are_tampered(void **) {
    Fixture f = open_fixture(true);
    const std::string k1 = "ns:t:func:m.f:args:one", k2 = "ns:t:func:m.f:args:two";
    put(f, k1, ct::mp_str("value one"));
    put(f, k2, ct::mp_str("value two"));
    const std::string r1 = raw_get(f, k1), r2 = raw_get(f, k2);
    raw_set(f, k1, r2);
    raw_set(f, k2, r1);
    CT_EXPECT(CACHEKIT_ENOTFOUND, get(f, k1));
    CT_EXPECT(CACHEKIT_ENOTFOUND, get(f, k2));
    assert_int_equal(ct::stats_of(f.cache, "t").tampered, 2);
    CT_EXPECT(CACHEKIT_ENOTFOUND, cachekit_backend_exists(f.backend, k1.data(), k1.size()));
    CT_EXPECT(CACHEKIT_ENOTFOUND, cachekit_backend_exists(f.backend, k2.data(), k2.size()));
}

void test_fail_closed_reports_and_keeps(void **) {
    Fixture f = open_fixture(true, CACHEKIT_ON);
    const std::string key = "ns:t:func:m.f:args:closed";
    put(f, key, ct::mp_str("kept for inspection"));
    std::string raw = raw_get(f, key);
    raw[raw.size() - 20] = char(raw[raw.size() - 20] ^ 0x10);
    raw_set(f, key, raw);
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EAUTH, get(f, key));
    assert_int_equal(ct::stats_of(f.cache, "t").tampered, 1);
    // Still there, byte for byte.
    CT_OK(cachekit_backend_exists(f.backend, key.data(), key.size()));
    assert_true(raw_get(f, key) == raw);
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EAUTH, get(f, key));
    assert_int_equal(ct::stats_of(f.cache, "t").tampered, 2);

    // get_or_load reports it as well, without running the loader.
    int calls = 0;
    auto loader = [](cachekit_load *load, void *p) {
        ++*static_cast<int *>(p);
        return cachekit_load_set_value(load, "\xa1x", 2);
    };
    Buf out;
    CT_EXPECT(CACHEKIT_EAUTH, cachekit_cache_get_or_load(f.cache, out.get(), nullptr, "t", key.data(), key.size(),
                                                         CACHEKIT_TTL_DEFAULT, loader, &calls));
    assert_int_equal(calls, 0);
}

void test_plaintext_under_encrypted_cache_is_downgrade(void **) {
    Fixture f = open_fixture(true);
    const std::string framed = "ns:t:func:m.f:args:framed", bare = "ns:t:func:m.f:args:bare";
    const std::string value = ct::mp_str("planted plaintext");
    // A valid plaintext CK frame, exactly what a plaintext cache writes.
    Buf frame;
    CT_OK(cachekit_frame_encode(frame.get(), "default",
                                "{\"format\": \"msgpack\", \"encoding\": \"utf-8\", \"compressed\": false, "
                                "\"original_type\": \"msgpack\"}",
                                value.data(), value.size()));
    raw_set(f, framed, frame.str());
    raw_set(f, bare, value);
    CT_EXPECT(CACHEKIT_ENOTFOUND, get(f, framed));
    CT_EXPECT(CACHEKIT_ENOTFOUND, get(f, bare));
    cachekit_cache_stats s = ct::stats_of(f.cache, "t");
    assert_int_equal(s.downgrade, 2);
    assert_int_equal(s.tampered, 0);
    // Not proven bad (another, plaintext, reader may own it): a miss that leaves the entry alone.
    CT_OK(cachekit_backend_exists(f.backend, framed.data(), framed.size()));
    CT_OK(cachekit_backend_exists(f.backend, bare.data(), bare.size()));

    // A frame that claims encryption (and this cache's container, compressed
    // true) but whose body is plaintext fails to open: tampered.
    const std::string liar = "ns:t:func:m.f:args:liar";
    CT_OK(cachekit_frame_encode(frame.get(), "default",
                                "{\"format\": \"msgpack\", \"encoding\": \"utf-8\", \"compressed\": true, "
                                "\"original_type\": \"msgpack\", \"encrypted\": true, \"tenant_id\": \"default\"}",
                                (value + std::string(40, 'p')).data(), value.size() + 40));
    raw_set(f, liar, frame.str());
    CT_EXPECT(CACHEKIT_ENOTFOUND, get(f, liar));
    assert_int_equal(ct::stats_of(f.cache, "t").tampered, 1);
}

// A plaintext cache reading an encrypted entry: wrong key (no master key), a miss.
void test_encrypted_entry_in_plaintext_cache_is_wrong_key(void **) {
    Fixture enc = open_fixture(true);
    const std::string key = "ns:t:func:m.f:args:enc";
    put(enc, key, ct::mp_str("secret"));
    const std::string raw = raw_get(enc, key);
    Fixture plain = open_fixture(false);
    raw_set(plain, key, raw);
    CT_EXPECT(CACHEKIT_ENOTFOUND, get(plain, key));
    assert_int_equal(ct::stats_of(plain.cache, "t").wrong_key, 1);
    // An entry this reader merely cannot read stays for the readers that can.
    CT_OK(cachekit_backend_exists(plain.backend, key.data(), key.size()));
}

// The envelope inside a plaintext frame: bin8 header c4 LEN, lz4 block, then
// the xxh3 as an array of 8 uints (98 ...).
struct EnvelopeLayout {
    size_t data_at;   // first byte of the lz4 block
    size_t data_len;
    size_t checksum_at;  // first element of the 8-uint array
};

EnvelopeLayout layout(const std::string &frame) {
    const size_t off = payload_offset(frame);
    EnvelopeLayout l{};
    const auto *p = reinterpret_cast<const unsigned char *>(frame.data());
    assert_int_equal(p[off], 0x94);      // [bin, checksum, original_size, format]
    assert_int_equal(p[off + 1], 0xc4);  // bin8
    l.data_len = p[off + 2];
    l.data_at = off + 3;
    assert_int_equal(p[l.data_at + l.data_len], 0x98);  // 8 uints
    l.checksum_at = l.data_at + l.data_len + 1;
    return l;
}

void test_corrupt_envelope_is_corrupt(void **) {
    Fixture f = open_fixture(false);
    const std::string k_data = "ns:t:func:m.f:args:data", k_sum = "ns:t:func:m.f:args:sum";
    const std::string value = ct::mp_str("a plaintext value, wrapped in the integrity envelope");
    put(f, k_data, value);
    put(f, k_sum, value);
    std::string got;
    CT_OK(get(f, k_data, &got));
    assert_true(got == value);

    std::string raw = raw_get(f, k_data);
    EnvelopeLayout l = layout(raw);
    const size_t at = l.data_at + l.data_len - 2;  // a literal near the end of the block
    raw[at] = char(raw[at] ^ 0x01);
    raw_set(f, k_data, raw);

    raw = raw_get(f, k_sum);
    l = layout(raw);
    const auto first = static_cast<unsigned char>(raw[l.checksum_at]);
    // Keep the encoding canonical: a positive fixint flips bit 0, a uint8 flips its value's bit 0.
    const size_t sum_at = first < 0x80 ? l.checksum_at : l.checksum_at + 1;
    assert_true(first < 0x80 || first == 0xcc);
    raw[sum_at] = char(raw[sum_at] ^ 0x01);
    raw_set(f, k_sum, raw);

    CT_EXPECT(CACHEKIT_ENOTFOUND, get(f, k_data));
    CT_EXPECT(CACHEKIT_ENOTFOUND, get(f, k_sum));
    cachekit_cache_stats s = ct::stats_of(f.cache, "t");
    assert_int_equal(s.corrupt, 2);
    assert_int_equal(s.tampered + s.downgrade + s.wrong_key, 0);
    CT_EXPECT(CACHEKIT_ENOTFOUND, cachekit_backend_exists(f.backend, k_data.data(), k_data.size()));
    CT_EXPECT(CACHEKIT_ENOTFOUND, cachekit_backend_exists(f.backend, k_sum.data(), k_sum.size()));

    // Garbage that is not MessagePack at all, and a truncated frame: corrupt too.
    const std::string k_junk = "ns:t:func:m.f:args:junk", k_cut = "ns:t:func:m.f:args:cut";
    raw_set(f, k_junk, std::string("\xc1\xc1\xc1", 3));
    put(f, k_cut, value);
    raw = raw_get(f, k_cut);
    raw_set(f, k_cut, raw.substr(0, raw.size() - 5));
    CT_EXPECT(CACHEKIT_ENOTFOUND, get(f, k_junk));
    CT_EXPECT(CACHEKIT_ENOTFOUND, get(f, k_cut));
    assert_int_equal(ct::stats_of(f.cache, "t").corrupt, 4);
}

void test_corrupt_envelope_fail_closed(void **) {
    Fixture f = open_fixture(false, CACHEKIT_ON);
    const std::string key = "ns:t:func:m.f:args:data";
    put(f, key, ct::mp_str("a plaintext value, wrapped in the integrity envelope"));
    std::string raw = raw_get(f, key);
    EnvelopeLayout l = layout(raw);
    raw[l.data_at + l.data_len - 2] = char(raw[l.data_at + l.data_len - 2] ^ 0x01);
    raw_set(f, key, raw);
    CT_FAILS_WITH_MESSAGE(CACHEKIT_ECORRUPT, get(f, key));
    CT_OK(cachekit_backend_exists(f.backend, key.data(), key.size()));
    assert_int_equal(ct::stats_of(f.cache, "t").corrupt, 1);
}

}  // namespace

int main() {
    if (!cachekit_crypto_available()) {
        std::fprintf(stderr, "AES-256-GCM unavailable on this CPU: skipped\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flipped_ciphertext_byte_is_tampered),
        cmocka_unit_test(test_flipped_tag_and_nonce_are_tampered),
        cmocka_unit_test(test_swapped_ciphertexts_are_tampered),
        cmocka_unit_test(test_fail_closed_reports_and_keeps),
        cmocka_unit_test(test_plaintext_under_encrypted_cache_is_downgrade),
        cmocka_unit_test(test_encrypted_entry_in_plaintext_cache_is_wrong_key),
        cmocka_unit_test(test_corrupt_envelope_is_corrupt),
        cmocka_unit_test(test_corrupt_envelope_fail_closed),
    };
    return cmocka_run_group_tests_name("cache_tamper", tests, nullptr, nullptr);
}
