// White-box: the BLAKE3 the key registry's names use (codec/blake3.hpp),
// against the official test vectors' inputs (bytes i % 251), across the
// block, chunk and tree boundaries. Expected digests from the `blake3`
// Python package (the reference SDK's dependency).
#include <cstdint>
#include <string>

extern "C" {
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
}

#include "codec/blake3.hpp"

namespace {

struct Vector {
    size_t length;
    const char *hex;
};

constexpr Vector kVectors[] = {
    {0, "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"},
    {1, "2d3adedff11b61f14c886e35afa036736dcd87a74d27b5c1510225d0f592e213"},
    {63, "e9bc37a594daad83be9470df7f7b3798297c3d834ce80ba85d6e207627b7db7b"},
    {64, "4eed7141ea4a5cd4b788606bd23f46e212af9cacebacdc7d1f4c6dc7f2511b98"},
    {65, "de1e5fa0be70df6d2be8fffd0e99ceaa8eb6e8c93a63f2d8d1c30ecb6b263dee"},
    {1023, "10108970eeda3eb932baac1428c7a2163b0e924c9a9e25b35bba72b28f70bd11"},
    {1024, "42214739f095a406f3fc83deb889744ac00df831c10daa55189b5d121c855af7"},
    {1025, "d00278ae47eb27b34faecf67b4fe263f82d5412916c1ffd97c8cb7fb814b8444"},
    {2048, "e776b6028c7cd22a4d0ba182a8bf62205d2ef576467e838ed6f2529b85fba24a"},
    {2049, "5f4d72f40d7a5f82b15ca2b2e44b1de3c2ef86c426c95c1af0b6879522563030"},
    {3072, "b98cb0ff3623be03326b373de6b9095218513e64f1ee2edd2525c7ad1e5cffd2"},
    {4097, "9b4052b38f1c5fc8b1f9ff7ac7b27cd242487b3d890d15c96a1c25b8aa0fb995"},
    {8193, "bab6c09cb8ce8cf459261398d2e7aef35700bf488116ceb94a36d0f5f1b7bc3b"},
    {31745, "5c80ce0c3bbe9a6f432a1c6c2ccbde45923d23249386988a30f512d23919eb98"},
};

void test_official_inputs(void **) {
    for (const Vector &v : kVectors) {
        std::string input;
        for (size_t i = 0; i < v.length; ++i) input.push_back(char(i % 251));
        const std::string got = cachekit::blake3::hex_prefix(input, 32);
        if (got != v.hex) fail_msg("length %zu: %s, expected %s", v.length, got.c_str(), v.hex);
    }
}

// The registry name's hash: the reference's blake3_hash(f"{module}.{qualname}", digest_size=8).
void test_registry_prefix(void **) {
    assert_string_equal(cachekit::blake3::hex_prefix("app.mod.f", 8).c_str(), "bf07e5df600f2ff9");
    assert_string_equal(cachekit::blake3::hex_prefix("side.echo", 8).c_str(), "70b56af3f3bc2366");
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_official_inputs),
        cmocka_unit_test(test_registry_prefix),
    };
    return cmocka_run_group_tests_name("unit_blake3", tests, nullptr, nullptr);
}
