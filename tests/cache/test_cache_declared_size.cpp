// Issue 12: an entry's declared original size is bounded by the cache's
// max_value_bytes on reads, not only by the envelope's 512 MiB. A valid
// 1.96 MB envelope declaring 500 MB, in a CK frame planted in L2 under a cache key, is a
// miss counted too_large (and never decompressed; the unit test
// unit_declared_size_limits proves that under an address-space cap), while a
// cache whose max_value_bytes admits it reads it.
#include "cache_test_util.hpp"
#include "../unit/hostile_envelope.hpp"

namespace {

using ct::Buf;

constexpr uint64_t kDeclared = 500ull * 1000 * 1000;

// The entry the reference SDK's default write stores: a CK frame around the
// envelope (auto mode reads no bare envelope).
std::string framed(const std::string &envelope) {
    Buf frame;
    CT_OK(cachekit_frame_encode(frame.get(), "default",
                                "{\"format\": \"msgpack\", \"encoding\": \"utf-8\", \"compressed\": true, "
                                "\"original_type\": \"msgpack\"}",
                                envelope.data(), envelope.size()));
    return frame.str();
}

cachekit_cache_stats stats_of(cachekit_cache *c) {
    cachekit_cache_stats s{};
    s.struct_size = sizeof s;
    CT_OK(cachekit_cache_stats_get(c, &s, nullptr));
    return s;
}

void test_oversized_declared_entry_is_a_counted_miss(void **) {
    ct::BackendHandle backend = ct::open_backend("memory://");
    cachekit_cache_options o = ct::default_options();
    o.backend = backend.get();
    o.l1 = CACHEKIT_OFF;  // every get reads the planted L2 entry
    ct::CacheHandle cache = ct::new_cache(&o);  // max_value_bytes: the 100 MiB default

    const std::string key = "ns:t:func:m.f:args:big:1s";
    const std::string env = framed(hostile::envelope_declaring(kDeclared));
    Buf out;
    for (int i = 0; i < 2; ++i) {
        // Planted before each read: whether a refused entry stays in L2 is the
        // cache's policy (only corrupt and tampered entries are deleted), not this test's.
        CT_OK(cachekit_backend_set(backend.get(), key.data(), key.size(), env.data(), env.size(), 0));
        CT_EXPECT(CACHEKIT_ENOTFOUND, cachekit_cache_get(cache.get(), out.get(), nullptr, "t", key.data(), key.size()));
    }
    cachekit_cache_stats s = stats_of(cache.get());
    assert_int_equal(s.too_large, 2);
    assert_int_equal(s.corrupt, 0);
    assert_int_equal(s.tampered, 0);
}

void test_a_smaller_declared_size_within_the_limit_reads(void **) {
    ct::BackendHandle backend = ct::open_backend("memory://");
    cachekit_cache_options o = ct::default_options();
    o.backend = backend.get();
    o.l1 = CACHEKIT_OFF;
    o.max_value_bytes = 1u << 20;
    ct::CacheHandle cache = ct::new_cache(&o);
    const std::string at = "ns:t:func:m.f:args:at:1s", past = "ns:t:func:m.f:args:past:1s";
    const std::string fits = framed(hostile::envelope_declaring(1u << 20)),
                      over = framed(hostile::envelope_declaring((1u << 20) + 1));
    CT_OK(cachekit_backend_set(backend.get(), at.data(), at.size(), fits.data(), fits.size(), 0));
    CT_OK(cachekit_backend_set(backend.get(), past.data(), past.size(), over.data(), over.size(), 0));
    Buf out;
    CT_OK(cachekit_cache_get(cache.get(), out.get(), nullptr, "t", at.data(), at.size()));
    assert_int_equal(out.get()->size, 1u << 20);
    CT_EXPECT(CACHEKIT_ENOTFOUND, cachekit_cache_get(cache.get(), out.get(), nullptr, "t", past.data(), past.size()));
    assert_int_equal(stats_of(cache.get()).too_large, 1);
}

}  // namespace

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_oversized_declared_entry_is_a_counted_miss),
        cmocka_unit_test(test_a_smaller_declared_size_within_the_limit_reads),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
