// E1 (envelope) and E2 (AES-256-GCM) through the public C API, each beside
// the raw library calls on the same bytes in the same run. bench/run pairs
// "<case>/cachekit" with "<case>/anchor".
#include <benchmark/benchmark.h>
#include <lz4.h>
#include <sodium.h>
#define XXH_INLINE_ALL  // the same inlined XXH3 the library uses
#include <xxhash.h>

#include <cstring>
#include <string>
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

void aead_roundtrip(benchmark::State &state) {
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

}  // namespace

BENCHMARK(envelope_roundtrip)->Name("E1-1k/cachekit")->Arg(1024);
BENCHMARK(raw_lz4_xxh3_roundtrip)->Name("E1-1k/anchor")->Arg(1024);
BENCHMARK(envelope_roundtrip)->Name("E1-14k/cachekit")->Arg(14 * 1024);
BENCHMARK(raw_lz4_xxh3_roundtrip)->Name("E1-14k/anchor")->Arg(14 * 1024);
BENCHMARK(envelope_roundtrip)->Name("E1-1m/cachekit")->Arg(1024 * 1024)->Unit(benchmark::kMicrosecond);
BENCHMARK(raw_lz4_xxh3_roundtrip)->Name("E1-1m/anchor")->Arg(1024 * 1024)->Unit(benchmark::kMicrosecond);
BENCHMARK(aead_roundtrip)->Name("E2-1k/cachekit")->Arg(1024);
BENCHMARK(raw_sodium_roundtrip)->Name("E2-1k/anchor")->Arg(1024);
BENCHMARK(aead_roundtrip)->Name("E2-1m/cachekit")->Arg(1024 * 1024)->Unit(benchmark::kMicrosecond);
BENCHMARK(raw_sodium_roundtrip)->Name("E2-1m/anchor")->Arg(1024 * 1024)->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
