// encryption.json keyring.configuration, through every way the core takes
// decrypt-only keys (requirement_coverage.json, ENC-7 and ENC-9): the
// keyring constructor, the cache's previous_keys_hex option, and
// CACHEKIT_PREVIOUS_MASTER_KEYS (with CACHEKIT_MASTER_KEY) when the options
// leave them NULL. Each row is judged at load, before any entry is read.
// Also the current key repeated with white space or a 0x prefix, which no
// row holds: the strict hex decoder refuses the list either way.
#include "conformance_support.hpp"

#include <cstdlib>

#include <csetjmp>
#include <cstdarg>
extern "C" {
#include <cmocka.h>
}

using namespace ckconf;

namespace {

const char *const kFile = "encryption.json";
Json V;
Report R(kFile);

int keyring_new(const std::string &current, const std::string &previous) {
    cachekit_keyring *ring = nullptr;
    int rc = cachekit_keyring_new(&ring, current.c_str(), previous.c_str());
    if ((rc == CACHEKIT_OK) != (ring != nullptr)) rc = CACHEKIT_EINTERNAL;  // a keyring exactly when OK
    cachekit_keyring_free(ring);
    return rc;
}

// An encrypting cache over a memory backend; NULL keys: the environment's.
int cache_new(const char *current, const char *previous) {
    MemoryCache mc([&](cachekit_cache_options &o) {
        o.encryption = CACHEKIT_ON;
        o.master_key_hex = current;
        o.previous_keys_hex = previous;
    });
    int rc = mc.rc();
    if ((rc == CACHEKIT_OK) != (mc.cache() != nullptr)) rc = CACHEKIT_EINTERNAL;  // a cache exactly when OK
    return rc;
}

int cache_new_from_environment(const std::string &current, const std::string &previous) {
    setenv("CACHEKIT_MASTER_KEY", current.c_str(), 1);
    setenv("CACHEKIT_PREVIOUS_MASTER_KEYS", previous.c_str(), 1);
    int rc = cache_new(nullptr, nullptr);
    unsetenv("CACHEKIT_MASTER_KEY");
    unsetenv("CACHEKIT_PREVIOUS_MASTER_KEYS");
    return rc;
}

void judge(Checks &c, const std::string &current, const std::string &previous, bool accept) {
    const int want = accept ? CACHEKIT_OK : CACHEKIT_EINVAL;
    c.code(keyring_new(current, previous), want, "cachekit_keyring_new");
    c.code(cache_new(current.c_str(), previous.c_str()), want, "cachekit_cache_new(previous_keys_hex)");
    c.code(cache_new_from_environment(current, previous), want, "cachekit_cache_new(CACHEKIT_PREVIOUS_MASTER_KEYS)");
}

void test_configuration_rows_at_every_entry_point(void **) {
    const Json &conf = V.at("keyring").at("configuration");
    int failures = run_category(R, conf, "vectors", [](const Json &v, Checks &c) {
        const std::string &verdict = v.at("verdict").get_ref<const std::string &>();
        c.expect(verdict == "accept" || verdict == "reject", "unknown verdict " + verdict);
        judge(c, v.at("current_master_key_hex").get<std::string>(), join_keys(v.at("decrypt_only_master_keys_hex")),
              verdict == "accept");
    });
    assert_int_equal(failures, 0);
}

void test_current_key_repeated_with_space_or_prefix(void **) {
    const Json &rows = V.at("keyring").at("configuration").at("vectors");
    const std::string current = rows.at(0).at("current_master_key_hex").get<std::string>();
    const std::string other = std::string(64, '1');
    for (const std::string &repeat : {" " + current, current + " ", "0x" + current, "0X" + current}) {
        Checks c;
        judge(c, current, other + "," + repeat, false);
        if (!c.passed()) fail_msg("%s: %s", repeat.c_str(), c.detail().c_str());
    }
}

}  // namespace

int main(void) {
    V = load_vectors(kFile);
    if (!cachekit_crypto_available()) {
        std::printf("SKIP %s keyring configuration: AES-256-GCM is unavailable\n", kFile);
        return 77;
    }
    unsetenv("CACHEKIT_MASTER_KEY");
    unsetenv("CACHEKIT_PREVIOUS_MASTER_KEYS");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_configuration_rows_at_every_entry_point),
        cmocka_unit_test(test_current_key_repeated_with_space_or_prefix),
    };
    int rc = cmocka_run_group_tests_name("requirements: keyring configuration", tests, nullptr, nullptr);
    R.summary();
    return rc;
}
