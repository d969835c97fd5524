// Format CACHEKIT_FORMAT_AUTO_PYTHON: auto mode under the reference Python
// SDK's "auto" serializer.
//  - its frames are tagged {"s": "auto", ...} (with and without integrity);
//  - it reads its own entries back;
//  - a standard ("default") cache does not read an "auto" entry, nor the
//    reverse: a miss counted as serializer_mismatch.
#include "cache_test_util.hpp"

namespace {

using ct::Buf;

ct::CacheHandle cache_over(cachekit_backend *backend, int format, bool integrity = true) {
    cachekit_cache_options o = ct::default_options();
    o.backend = backend;
    o.format = format;
    o.integrity = integrity ? CACHEKIT_ON : CACHEKIT_OFF;
    o.l1 = CACHEKIT_OFF;  // every read goes to the backend
    return ct::new_cache(&o);
}

const std::string kKey = "ns:py:func:m.f:args:00:1a";

void check_tagged(bool integrity) {
    ct::BackendHandle backend = ct::open_backend("memory://");
    ct::CacheHandle autoc = cache_over(backend.get(), CACHEKIT_FORMAT_AUTO_PYTHON, integrity);
    ct::CacheHandle stdc = cache_over(backend.get(), CACHEKIT_FORMAT_AUTO, integrity);
    const std::string value = ct::mp_str("a tuple, say");
    CT_OK(cachekit_cache_put(autoc.get(), "py", kKey.data(), kKey.size(), value.data(), value.size(), 60));

    Buf raw;
    CT_OK(cachekit_backend_get(backend.get(), raw.get(), kKey.data(), kKey.size()));
    assert_true(ct::contains(raw.str(), "{\"s\": \"auto\""));

    Buf out;
    cachekit_lookup info = CACHEKIT_LOOKUP_INIT;
    CT_OK(cachekit_cache_get(autoc.get(), out.get(), &info, "py", kKey.data(), kKey.size()));
    assert_int_equal(info.source, CACHEKIT_SOURCE_L2);
    assert_true(out.str() == value);

    // The standard cache refuses the "auto" entry ...
    CT_EXPECT(CACHEKIT_ENOTFOUND, cachekit_cache_get(stdc.get(), out.get(), nullptr, "py", kKey.data(), kKey.size()));
    assert_int_equal(ct::stats_of(stdc.get(), "py").serializer_mismatch, 1);

    // ... and the "auto" cache a standard entry.
    const std::string other = "ns:py:func:m.f:args:01:1a";
    CT_OK(cachekit_cache_put(stdc.get(), "py", other.data(), other.size(), value.data(), value.size(), 60));
    CT_OK(cachekit_backend_get(backend.get(), raw.get(), other.data(), other.size()));
    assert_true(ct::contains(raw.str(), "{\"s\": \"default\""));
    CT_EXPECT(CACHEKIT_ENOTFOUND, cachekit_cache_get(autoc.get(), out.get(), nullptr, "py", other.data(), other.size()));
    assert_int_equal(ct::stats_of(autoc.get(), "py").serializer_mismatch, 1);
}

void test_auto_frames_with_integrity(void **) { check_tagged(true); }
void test_auto_frames_without_integrity(void **) { check_tagged(false); }

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_auto_frames_with_integrity),
        cmocka_unit_test(test_auto_frames_without_integrity),
    };
    return cmocka_run_group_tests_name("cache_auto_python", tests, nullptr, nullptr);
}
