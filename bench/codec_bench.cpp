// E1 (envelope) and E2 (AES-256-GCM) through the public C API, each beside
// the raw library calls on the same bytes in the same run. bench/run pairs
// "<case>/cachekit" with "<case>/anchor". E2evp is E2 on the OpenSSL provider:
// run with CACHEKIT_AES_GCM_PROVIDER=openssl (bench/run sets it for those
// cases), beside raw OpenSSL EVP.
#include <benchmark/benchmark.h>
#include <lz4.h>
#include <openssl/evp.h>
#include <sodium.h>
#define XXH_INLINE_ALL  // the same inlined XXH3 the library uses
#include <xxhash.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "cachekit/cachekit.h"
#include "payloads.hpp"

namespace {

void envelope_roundtrip(benchmark::State &state) {
    const std::string data = cachekit::bench::json_records(size_t(state.range(0)));
    cachekit_buf env = CACHEKIT_BUF_INIT, out = CACHEKIT_BUF_INIT;
    for (auto _ : state) {
        if (cachekit_envelope_wrap(&env, data.data(), data.size(), "msgpack") != 0 ||
            cachekit_envelope_unwrap(&out, nullptr, env.ptr, env.size) != 0) {
            state.SkipWithError("envelope failed");
            break;
        }
        benchmark::DoNotOptimize(out.ptr);
    }
    state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(data.size()));
    cachekit_buf_dispose(&env);
    cachekit_buf_dispose(&out);
}

// The work an envelope cannot avoid: compress + hash, decompress + hash.
void raw_lz4_xxh3_roundtrip(benchmark::State &state) {
    const std::string data = cachekit::bench::json_records(size_t(state.range(0)));
    std::vector<char> compressed(size_t(LZ4_compressBound(int(data.size()))));
    std::vector<char> restored(data.size());
    for (auto _ : state) {
        uint64_t h1 = XXH3_64bits(data.data(), data.size());
        int n = LZ4_compress_default(data.data(), compressed.data(), int(data.size()), int(compressed.size()));
        int m = LZ4_decompress_safe(compressed.data(), restored.data(), n, int(restored.size()));
        uint64_t h2 = XXH3_64bits(restored.data(), size_t(m));
        if (h1 != h2) {
            state.SkipWithError("round trip mismatch");
            break;
        }
        benchmark::DoNotOptimize(h2);
    }
    state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(data.size()));
}

bool openssl_forced() {
    const char *v = std::getenv("CACHEKIT_AES_GCM_PROVIDER");
    return v && std::string_view(v) == "openssl";
}

// want_openssl: the figure of E2evp (the process must run the OpenSSL provider)
// or of E2 (it must not be forced onto it).
void aead_roundtrip(benchmark::State &state, bool want_openssl) {
    if (openssl_forced() != want_openssl) {
        state.SkipWithError(want_openssl ? "E2evp needs CACHEKIT_AES_GCM_PROVIDER=openssl"
                                         : "E2 measures the default provider: unset CACHEKIT_AES_GCM_PROVIDER");
        return;
    }
    if (!cachekit_crypto_available()) {
        state.SkipWithError("AES-GCM unavailable");
        return;
    }
    const std::string data = cachekit::bench::json_records(size_t(state.range(0)));
    cachekit_keyring *ring = nullptr;
    cachekit_keyring_new(&ring, "6161616161616161616161616161616161616161616161616161616161616161", nullptr);
    cachekit_buf aad = CACHEKIT_BUF_INIT, ct = CACHEKIT_BUF_INIT, pt = CACHEKIT_BUF_INIT;
    cachekit_crypto_aad(&aad, "default", "users:get_user:0123", "msgpack", 0, nullptr);
    for (auto _ : state) {
        if (cachekit_keyring_encrypt(ring, &ct, nullptr, aad.ptr, aad.size, data.data(), data.size()) != 0 ||
            cachekit_keyring_decrypt(ring, &pt, nullptr, nullptr, nullptr, aad.ptr, aad.size, ct.ptr, ct.size) != 0) {
            state.SkipWithError("aead failed");
            break;
        }
        benchmark::DoNotOptimize(pt.ptr);
    }
    state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(data.size()));
    cachekit_keyring_free(ring);
    cachekit_buf_dispose(&aad);
    cachekit_buf_dispose(&ct);
    cachekit_buf_dispose(&pt);
}

// Raw libsodium with a precomputed key schedule, the fastest it offers.
void raw_sodium_roundtrip(benchmark::State &state) {
    if (sodium_init() < 0 || !crypto_aead_aes256gcm_is_available()) {
        state.SkipWithError("AES-GCM unavailable");
        return;
    }
    const std::string data = cachekit::bench::json_records(size_t(state.range(0)));
    unsigned char key[32], nonce[12] = {0};
    std::memset(key, 0x61, sizeof key);
    alignas(16) crypto_aead_aes256gcm_state ctx;
    crypto_aead_aes256gcm_beforenm(&ctx, key);
    const std::string aad = "aad-of-a-typical-length-with-tenant-and-key";
    std::vector<unsigned char> ct(data.size() + 16), pt(data.size());
    uint32_t counter = 0;
    for (auto _ : state) {
        std::memcpy(nonce + 8, &++counter, 4);
        unsigned long long clen = 0, mlen = 0;
        crypto_aead_aes256gcm_encrypt_afternm(ct.data(), &clen, reinterpret_cast<const unsigned char *>(data.data()),
                                              data.size(), reinterpret_cast<const unsigned char *>(aad.data()),
                                              aad.size(), nullptr, nonce, &ctx);
        if (crypto_aead_aes256gcm_decrypt_afternm(pt.data(), &mlen, nullptr, ct.data(), clen,
                                                  reinterpret_cast<const unsigned char *>(aad.data()), aad.size(),
                                                  nonce, &ctx) != 0) {
            state.SkipWithError("raw open failed");
            break;
        }
        benchmark::DoNotOptimize(pt.data());
    }
    state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(data.size()));
}

// Raw OpenSSL EVP, keyed once: per message only the nonce is set, the
// fastest EVP use (one context, used by this thread only).
void raw_evp_roundtrip(benchmark::State &state) {
    const std::string data = cachekit::bench::json_records(size_t(state.range(0)));
    unsigned char key[32], nonce[12] = {0}, tag[16];
    std::memset(key, 0x61, sizeof key);
    EVP_CIPHER *cipher = EVP_CIPHER_fetch(nullptr, "AES-256-GCM", nullptr);
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    if (!cipher || !ctx || EVP_EncryptInit_ex(ctx, cipher, nullptr, key, nullptr) != 1) {
        state.SkipWithError("OpenSSL AES-256-GCM unavailable");
        EVP_CIPHER_CTX_free(ctx);
        EVP_CIPHER_free(cipher);
        return;
    }
    const std::string aad = "aad-of-a-typical-length-with-tenant-and-key";
    const auto *a = reinterpret_cast<const unsigned char *>(aad.data());
    std::vector<unsigned char> ct(data.size() + 16), pt(data.size());
    uint32_t counter = 0;
    const int n = int(data.size());
    for (auto _ : state) {
        std::memcpy(nonce + 8, &++counter, 4);
        int len = 0;
        bool ok = EVP_EncryptInit_ex(ctx, nullptr, nullptr, nullptr, nonce) == 1 &&
                  EVP_EncryptUpdate(ctx, nullptr, &len, a, int(aad.size())) == 1 &&
                  EVP_EncryptUpdate(ctx, ct.data(), &len, reinterpret_cast<const unsigned char *>(data.data()), n) == 1 &&
                  EVP_EncryptFinal_ex(ctx, ct.data() + n, &len) == 1 &&
                  EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, 16, ct.data() + n) == 1;
        std::memcpy(tag, ct.data() + n, 16);
        ok = ok && EVP_DecryptInit_ex(ctx, nullptr, nullptr, nullptr, nonce) == 1 &&
             EVP_DecryptUpdate(ctx, nullptr, &len, a, int(aad.size())) == 1 &&
             EVP_DecryptUpdate(ctx, pt.data(), &len, ct.data(), n) == 1 &&
             EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, 16, tag) == 1 &&
             EVP_DecryptFinal_ex(ctx, pt.data() + n, &len) == 1;
        if (!ok) {
            state.SkipWithError("raw EVP seal/open failed");
            break;
        }
        benchmark::DoNotOptimize(pt.data());
    }
    state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(data.size()));
    EVP_CIPHER_CTX_free(ctx);
    EVP_CIPHER_free(cipher);
}

}  // namespace

BENCHMARK(envelope_roundtrip)->Name("E1-1k/cachekit")->Arg(1024);
BENCHMARK(raw_lz4_xxh3_roundtrip)->Name("E1-1k/anchor")->Arg(1024);
BENCHMARK(envelope_roundtrip)->Name("E1-14k/cachekit")->Arg(14 * 1024);
BENCHMARK(raw_lz4_xxh3_roundtrip)->Name("E1-14k/anchor")->Arg(14 * 1024);
BENCHMARK(envelope_roundtrip)->Name("E1-1m/cachekit")->Arg(1024 * 1024)->Unit(benchmark::kMicrosecond);
BENCHMARK(raw_lz4_xxh3_roundtrip)->Name("E1-1m/anchor")->Arg(1024 * 1024)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(aead_roundtrip, sodium, false)->Name("E2-1k/cachekit")->Arg(1024);
BENCHMARK(raw_sodium_roundtrip)->Name("E2-1k/anchor")->Arg(1024);
BENCHMARK_CAPTURE(aead_roundtrip, sodium, false)->Name("E2-1m/cachekit")->Arg(1024 * 1024)->Unit(benchmark::kMicrosecond);
BENCHMARK(raw_sodium_roundtrip)->Name("E2-1m/anchor")->Arg(1024 * 1024)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(aead_roundtrip, openssl, true)->Name("E2evp-1k/cachekit")->Arg(1024);
BENCHMARK(raw_evp_roundtrip)->Name("E2evp-1k/anchor")->Arg(1024);
BENCHMARK_CAPTURE(aead_roundtrip, openssl, true)->Name("E2evp-1m/cachekit")->Arg(1024 * 1024)->Unit(benchmark::kMicrosecond);
BENCHMARK(raw_evp_roundtrip)->Name("E2evp-1m/anchor")->Arg(1024 * 1024)->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
