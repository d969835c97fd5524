// White-box: a keyring whose nonce counter reaches its end (2^32) keeps
// sealing under a fresh random prefix, restarting the counter, instead of
// failing with ENONCE; concurrent sealers across the roll never share a
// nonce; separate keyrings start with different prefixes.
#include <algorithm>
#include <array>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "codec/keyring.hpp"
#include "util/buffer.hpp"

#include "../l1/cmocka_cpp.hpp"  // last: it defines a fail() macro

namespace {

using cachekit::Buffer;
using cachekit::crypto::Keyring;
using cachekit::crypto::Nonce;
using cachekit::crypto::NonceCounter;

constexpr const char *kKey = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

uint64_t prefix_of(const Nonce &n) {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = v << 8 | n[size_t(i)];
    return v;
}

uint32_t counter_of(const Nonce &n) {
    uint32_t v = 0;
    for (int i = 8; i < 12; ++i) v = v << 8 | n[size_t(i)];
    return v;
}

// Seal through the keyring; the nonce is the ciphertext's first 12 bytes.
Nonce seal(const Keyring &ring, const std::string &msg, Buffer &ct) {
    ring.seal("default", "aad", 3, msg.data(), msg.size(), ct.get());
    Nonce n;
    std::copy_n(reinterpret_cast<const uint8_t *>(ct.data()), n.size(), n.begin());
    return n;
}

void test_counter_end_rolls_to_a_fresh_prefix(void **) {
    auto ring = Keyring::from_hex(kKey, "");
    NonceCounter &counter = ring->nonces_for_testing();
    counter.set_counter_for_testing(NonceCounter::kCounterLimit - 3);
    Buffer ct, back;
    std::vector<Nonce> seen;
    for (int i = 0; i < 10; ++i) {
        const std::string msg = "message " + std::to_string(i);
        seen.push_back(seal(*ring, msg, ct));
        // Every ciphertext still opens.
        ring->open("default", nullptr, "aad", 3, ct.data(), ct.size(), back.get());
        assert_true(back.view() == msg);
    }
    const uint64_t first = prefix_of(seen[0]);
    for (int i = 0; i < 3; ++i) {
        assert_int_equal(prefix_of(seen[size_t(i)]), first);
        assert_int_equal(counter_of(seen[size_t(i)]), 0xfffffffdu + uint32_t(i));
    }
    const uint64_t second = prefix_of(seen[3]);
    assert_true(second != first);
    for (int i = 3; i < 10; ++i) {
        assert_int_equal(prefix_of(seen[size_t(i)]), second);
        assert_int_equal(counter_of(seen[size_t(i)]), uint32_t(i - 3));
    }
}

void test_concurrent_sealers_across_the_roll_share_no_nonce(void **) {
    auto ring = Keyring::from_hex(kKey, "");
    ring->nonces_for_testing().set_counter_for_testing(NonceCounter::kCounterLimit - 2000);
    constexpr int kThreads = 4, kEach = 1500;
    std::vector<std::vector<Nonce>> got(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&, t] {
            Buffer ct;
            for (int i = 0; i < kEach; ++i) got[size_t(t)].push_back(seal(*ring, "m", ct));
        });
    for (auto &th : threads) th.join();
    std::vector<Nonce> all;
    for (auto &g : got) all.insert(all.end(), g.begin(), g.end());
    std::sort(all.begin(), all.end());
    assert_true(std::adjacent_find(all.begin(), all.end()) == all.end());
    // 6000 seals from 2000 before the end: the prefix rolled exactly once.
    std::vector<uint64_t> prefixes;
    for (const Nonce &n : all) prefixes.push_back(prefix_of(n));
    std::sort(prefixes.begin(), prefixes.end());
    prefixes.erase(std::unique(prefixes.begin(), prefixes.end()), prefixes.end());
    assert_int_equal(prefixes.size(), 2);
}

void test_each_keyring_draws_its_own_prefix(void **) {
    auto a = Keyring::from_hex(kKey, "");
    auto b = Keyring::from_hex(kKey, "");
    Buffer ct;
    const Nonce na = seal(*a, "x", ct), nb = seal(*b, "x", ct);
    assert_true(prefix_of(na) != prefix_of(nb));
    // Not consecutive either: no shared process-wide seed.
    assert_true(prefix_of(nb) - prefix_of(na) != 1);
}

}  // namespace

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counter_end_rolls_to_a_fresh_prefix),
        cmocka_unit_test(test_concurrent_sealers_across_the_roll_share_no_nonce),
        cmocka_unit_test(test_each_keyring_draws_its_own_prefix),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
