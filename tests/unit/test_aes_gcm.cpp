// White-box: the two AES-256-GCM providers (codec/aes_gcm.hpp) give the same
// bytes and the same verdicts, the OpenSSL one is safe from many threads and
// after fork(), frees no key bytes, and the provider setting is parsed with
// clear errors. Run twice by meson: as is, and with
// CACHEKIT_AES_GCM_PROVIDER=openssl, where the process's choice must follow.
#include <malloc.h>
#include <openssl/crypto.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "codec/aes_gcm.hpp"
#include "codec/crypto.hpp"
#include "util/buffer.hpp"
#include "util/error.hpp"

#include "../l1/cmocka_cpp.hpp"  // last: it defines a fail() macro

namespace {

namespace ag = cachekit::crypto::aes_gcm;

// A key whose bytes are easy to find in a freed block: 32 distinct bytes.
const uint8_t kKey[32] = {0x8d, 0x1e, 0x42, 0xf7, 0x30, 0x9a, 0x6b, 0xc4, 0x11, 0xe2, 0x5f, 0x73, 0xa8, 0x06, 0xdd, 0x3c,
                          0x97, 0x28, 0xbe, 0x51, 0x0f, 0xc9, 0x64, 0x8a, 0x3d, 0xf0, 0x15, 0xab, 0x72, 0xe6, 0x49, 0xd8};

// ---- OpenSSL's allocations, each freed block searched for the key ----
std::atomic<size_t> openssl_frees{0}, frees_with_key{0};

bool holds_key(const void *p, size_t n) {
    const auto *b = static_cast<const uint8_t *>(p);
    for (size_t i = 0; i + 8 <= n; ++i)  // any 8 consecutive key bytes (the schedule's first words)
        for (size_t k = 0; k + 8 <= sizeof kKey; k += 8)
            if (std::memcmp(b + i, kKey + k, 8) == 0) return true;
    return false;
}
void *checking_malloc(size_t n, const char *, int) { return std::malloc(n); }
void *checking_realloc(void *p, size_t n, const char *, int) { return std::realloc(p, n); }
void checking_free(void *p, const char *, int) {
    if (p) {
        ++openssl_frees;
        if (holds_key(p, malloc_usable_size(p))) ++frees_with_key;
    }
    std::free(p);
}

std::string bytes_of(size_t n, uint32_t seed) {
    std::string s(n, '\0');
    for (size_t i = 0; i < n; ++i) {
        seed = seed * 1103515245u + 12345u;
        s[i] = char(seed >> 16);
    }
    return s;
}

const uint8_t *u8(const std::string &s) { return reinterpret_cast<const uint8_t *>(s.data()); }

std::string seal_with(const ag::KeySchedule &k, const uint8_t *nonce, const std::string &aad, const std::string &pt) {
    std::string out(pt.size() + ag::kTagBytes, '\0');
    k.seal(nonce, u8(aad), aad.size(), u8(pt), pt.size(), reinterpret_cast<uint8_t *>(out.data()));
    return out;
}

bool open_with(const ag::KeySchedule &k, const uint8_t *nonce, const std::string &aad, const std::string &ct,
               std::string &pt) {
    pt.assign(ct.size() - ag::kTagBytes, '\0');
    return k.open(nonce, u8(aad), aad.size(), u8(ct), ct.size(), reinterpret_cast<uint8_t *>(pt.data()));
}

void test_the_same_bytes_from_both_providers(void **) {
    if (!ag::sodium_provider().available()) skip();  // nothing to compare against on this CPU
    assert_true(ag::openssl_provider().available());
    auto sodium = ag::sodium_provider().make_key(kKey);
    auto openssl = ag::openssl_provider().make_key(kKey);
    const size_t sizes[] = {0, 1, 15, 16, 17, 255, 1024, 4096 + 7, 70000};
    const size_t aad_sizes[] = {0, 1, 16, 43, 300};
    uint32_t seed = 1;
    for (size_t n : sizes) {
        for (size_t a : aad_sizes) {
            const std::string pt = bytes_of(n, seed++), aad = bytes_of(a, seed++), nonce = bytes_of(12, seed++);
            const std::string c1 = seal_with(*sodium, u8(nonce), aad, pt);
            const std::string c2 = seal_with(*openssl, u8(nonce), aad, pt);
            assert_true(c1 == c2);
            std::string back;
            assert_true(open_with(*openssl, u8(nonce), aad, c1, back));  // each opens the other's
            assert_true(back == pt);
            assert_true(open_with(*sodium, u8(nonce), aad, c2, back));
            assert_true(back == pt);
        }
    }
}

// A flipped bit anywhere (ciphertext, tag, AAD, nonce) or a wrong key fails
// to open on both providers, and a good message still opens afterwards.
void test_both_providers_refuse_what_was_tampered(void **) {
    std::vector<const ag::Provider *> providers{&ag::openssl_provider()};
    if (ag::sodium_provider().available()) providers.push_back(&ag::sodium_provider());
    uint8_t other[32];
    std::memcpy(other, kKey, 32);
    other[31] ^= 1;
    for (const ag::Provider *p : providers) {
        auto k = p->make_key(kKey);
        auto wrong = p->make_key(other);
        const std::string pt = bytes_of(100, 7), aad = bytes_of(40, 8), nonce = bytes_of(12, 9);
        const std::string ct = seal_with(*k, u8(nonce), aad, pt);
        std::string out;
        for (size_t i = 0; i < ct.size(); i += 13) {
            std::string bad = ct;
            bad[i] ^= 0x01;
            assert_false(open_with(*k, u8(nonce), aad, bad, out));
        }
        std::string bad_tag = ct;
        bad_tag.back() ^= 0x80;
        assert_false(open_with(*k, u8(nonce), aad, bad_tag, out));
        std::string bad_aad = aad;
        bad_aad[0] ^= 0x01;
        assert_false(open_with(*k, u8(nonce), bad_aad, ct, out));
        std::string bad_nonce = nonce;
        bad_nonce[11] ^= 0x01;
        assert_false(open_with(*k, u8(bad_nonce), aad, ct, out));
        assert_false(open_with(*wrong, u8(nonce), aad, ct, out));
        assert_true(open_with(*k, u8(nonce), aad, ct, out));
        assert_true(out == pt);
    }
}

// Through AesKey (the layer every caller uses): a short ciphertext is
// ECIPHERTEXT, a bad tag is a false open with an empty output, on both paths.
void test_aes_key_errors_are_the_providers_own(void **) {
    cachekit::crypto::Key key;
    std::memcpy(key.data(), kKey, 32);
    cachekit::crypto::AesKey aes(key);
    cachekit::crypto::Nonce n{};
    cachekit_buf ct = CACHEKIT_BUF_INIT, pt = CACHEKIT_BUF_INIT;
    aes.seal(n, "aad", 3, "hello", 5, &ct);
    assert_int_equal(ct.size, 5 + 28);
    assert_true(aes.open("aad", 3, ct.ptr, ct.size, &pt));
    assert_int_equal(pt.size, 5);
    assert_memory_equal(pt.ptr, "hello", 5);
    ct.ptr[ct.size - 1] ^= 1;
    assert_false(aes.open("aad", 3, ct.ptr, ct.size, &pt));
    assert_int_equal(pt.size, 0);
    int code = 0;
    try {
        aes.open("aad", 3, ct.ptr, 27, &pt);
    } catch (const cachekit::Error &e) {
        code = e.code();
    }
    assert_int_equal(code, CACHEKIT_ECIPHERTEXT);
    cachekit::buf_release(&ct);
    cachekit::buf_release(&pt);
}

// One OpenSSL key used by four threads at once (more than share one context
// at a time): every message opens to what was sealed.
void test_one_openssl_key_from_many_threads(void **) {
    auto k = ag::openssl_provider().make_key(kKey);
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 12; ++t) {
        threads.emplace_back([&, t] {
            for (int i = 0; i < 300; ++i) {
                const std::string pt = bytes_of(size_t(64 + (i % 7) * 100), uint32_t(t * 1000 + i));
                const std::string aad = bytes_of(20, uint32_t(i)), nonce = bytes_of(12, uint32_t(t * 7 + i));
                const std::string ct = seal_with(*k, u8(nonce), aad, pt);
                std::string back;
                if (!open_with(*k, u8(nonce), aad, ct, back) || back != pt) ++failures;
            }
        });
    }
    for (auto &th : threads) th.join();
    assert_int_equal(failures.load(), 0);
}

// A child forked while the parent's key has idle contexts seals and opens
// with the same key, and gets the parent's bytes for the same nonce.
void test_an_openssl_key_works_in_a_forked_child(void **) {
    auto k = ag::openssl_provider().make_key(kKey);
    const std::string pt = bytes_of(500, 3), aad = bytes_of(10, 4), nonce = bytes_of(12, 5);
    const std::string parent_ct = seal_with(*k, u8(nonce), aad, pt);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        std::string back;
        const bool ok = seal_with(*k, u8(nonce), aad, pt) == parent_ct && open_with(*k, u8(nonce), aad, parent_ct, back) &&
                        back == pt;
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

// Every block OpenSSL frees, the key's contexts included, holds no key bytes.
void test_openssl_frees_no_key_bytes(void **) {
    const size_t before = openssl_frees.load();
    {
        auto k = ag::openssl_provider().make_key(kKey);
        const std::string pt = bytes_of(300, 11), aad = bytes_of(30, 12), nonce = bytes_of(12, 13);
        std::vector<std::thread> threads;  // several contexts in the slots, and some freed past them
        for (int t = 0; t < 12; ++t)
            threads.emplace_back([&] {
                for (int i = 0; i < 50; ++i) {
                    std::string back;
                    (void)open_with(*k, u8(nonce), aad, seal_with(*k, u8(nonce), aad, pt), back);
                }
            });
        for (auto &th : threads) th.join();
    }
    assert_true(openssl_frees.load() > before);  // the check saw the key's blocks go
    assert_int_equal(frees_with_key.load(), 0);
}

void test_the_setting_is_parsed_with_clear_errors(void **) {
    const ag::Choice forced = ag::choose("openssl");
    assert_non_null(forced.provider);
    assert_true(forced.provider->name == "openssl");
    const ag::Choice automatic = ag::choose("");
    assert_non_null(automatic.provider);
    assert_true(automatic.provider->name == (ag::sodium_provider().available() ? "sodium" : "openssl"));
    assert_true(ag::choose("auto").provider == automatic.provider);
    const ag::Choice sodium = ag::choose("sodium");
    if (ag::sodium_provider().available()) {
        assert_non_null(sodium.provider);
    } else {
        assert_null(sodium.provider);
        assert_int_equal(sodium.error, CACHEKIT_ECRYPTO_UNAVAILABLE);
    }
    const ag::Choice bad = ag::choose("OpenSSL\n");
    assert_null(bad.provider);
    assert_int_equal(bad.error, CACHEKIT_EINVAL);
    assert_true(bad.reason.find("expected auto, sodium or openssl") != std::string::npos);
    assert_true(bad.reason.find('\n') == std::string::npos);
}

bool yes() { return true; }
bool no() { return false; }

// A CPU without AES-NI/PCLMUL, played by a libsodium stand-in that is not
// available: auto falls back to OpenSSL, a forced sodium is
// ECRYPTO_UNAVAILABLE, and with neither there is a reason, never a crash.
void test_auto_falls_back_to_openssl_without_aes_ni(void **) {
    const ag::Provider no_sodium{"sodium", no, nullptr};
    const ag::Provider openssl{"openssl", yes, nullptr};
    const ag::Provider no_openssl{"openssl", no, nullptr};
    assert_true(ag::choose("auto", no_sodium, openssl).provider == &openssl);
    assert_true(ag::choose("", no_sodium, openssl).provider == &openssl);
    assert_true(ag::choose("openssl", no_sodium, openssl).provider == &openssl);
    const ag::Choice forced = ag::choose("sodium", no_sodium, openssl);
    assert_null(forced.provider);
    assert_int_equal(forced.error, CACHEKIT_ECRYPTO_UNAVAILABLE);
    assert_true(forced.reason.find("AES-NI") != std::string::npos);
    const ag::Choice neither = ag::choose("auto", no_sodium, no_openssl);
    assert_null(neither.provider);
    assert_int_equal(neither.error, CACHEKIT_ECRYPTO_UNAVAILABLE);
    assert_false(neither.reason.empty());
}

// The process's choice follows CACHEKIT_AES_GCM_PROVIDER (meson runs this
// program with it unset and with openssl).
void test_the_process_follows_the_environment(void **) {
    const char *v = std::getenv("CACHEKIT_AES_GCM_PROVIDER");
    const ag::Choice expected = ag::choose(v ? v : "");
    assert_true(ag::active().provider == expected.provider);
    assert_true(cachekit::crypto::aes_gcm_available());
    if (v && std::string_view(v) == "openssl") assert_true(cachekit::crypto::aes_gcm_provider() == "openssl");
}

}  // namespace

int main(void) {
    // Before OpenSSL allocates anything: route its allocations through the check.
    if (!CRYPTO_set_mem_functions(checking_malloc, checking_realloc, checking_free)) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_same_bytes_from_both_providers),
        cmocka_unit_test(test_both_providers_refuse_what_was_tampered),
        cmocka_unit_test(test_aes_key_errors_are_the_providers_own),
        cmocka_unit_test(test_one_openssl_key_from_many_threads),
        cmocka_unit_test(test_an_openssl_key_works_in_a_forked_child),
        cmocka_unit_test(test_openssl_frees_no_key_bytes),
        cmocka_unit_test(test_the_setting_is_parsed_with_clear_errors),
        cmocka_unit_test(test_auto_falls_back_to_openssl_without_aes_ni),
        cmocka_unit_test(test_the_process_follows_the_environment),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
