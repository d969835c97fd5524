// Cache handle benchmarks without a server (issue 5).
//
//   B3/cachekit   cachekit_cache_get L1 hit through the public C API: 100-byte
//                 values, L1 only (backend_url "none"), 10,000 keys
//   B3/anchor     the raw L1 engine hit: cachekit::l1::L1Cache::get of the
//                 same keys and values, in the same binary (target <= 1.2x)
//   E3/encrypted  an encrypted L1 hit through the C API: 1 KiB payload, the
//                 L1 holds the CK frame with AES-256-GCM ciphertext, so a hit
//                 opens it (and unwraps the envelope) every time
//   E3/plain      the plaintext L1 hit of the same payload (ratio only, no target)
//
// Key sequences are precomputed from a fixed seed (no RNG in the timed
// loops); every read is a hit (checked before timing).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cachekit/cachekit.h"
#include "l1/l1_cache.hpp"
#include "util/buffer.hpp"

namespace {

constexpr size_t kKeys = 10000;
constexpr size_t kSequence = 1 << 16;

const char *const kMasterKeyHex = "6161616161616161616161616161616161616161616161616161616161616161";

// One MessagePack str document of exactly `total` bytes (34 .. 65538).
std::string msgpack_str(size_t total, uint32_t seed) {
    std::string out;
    std::mt19937 rng(seed);
    const size_t body = total <= 257 ? total - 2 : total - 3;
    if (total <= 257) {
        out.push_back(char(0xd9));
        out.push_back(char(body));
    } else {
        out.push_back(char(0xda));
        out.push_back(char(body >> 8));
        out.push_back(char(body & 0xff));
    }
    static const char alphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ,.";
    for (size_t i = 0; i < body; ++i) out.push_back(alphabet[rng() % (sizeof alphabet - 1)]);
    return out;
}

struct Data {
    std::vector<std::string> keys;
    std::vector<uint32_t> sequence;
    explicit Data(const char *ns_tag) {
        keys.reserve(kKeys);
        for (size_t i = 0; i < kKeys; ++i)
            keys.push_back(std::string("ns:") + ns_tag + ":func:bench.f:args:" + std::to_string(i * 2654435761u % 1000003u));
        std::mt19937 rng(42);
        sequence.resize(kSequence);
        for (auto &s : sequence) s = uint32_t(rng() % kKeys);
    }
};

[[noreturn]] void die(const char *what, int rc) {
    std::fprintf(stderr, "%s: %d %s\n", what, rc, cachekit_error_last_message());
    std::exit(1);
}

cachekit_cache *l1_only_cache(bool encrypted) {
    cachekit_cache_options o;
    cachekit_cache_options_init(&o, sizeof o);
    o.backend_url = "none";
    if (encrypted) {
        o.encryption = CACHEKIT_ON;
        o.master_key_hex = kMasterKeyHex;
    }
    cachekit_cache *c = nullptr;
    if (int rc = cachekit_cache_new(&c, &o); rc != CACHEKIT_OK) die("cachekit_cache_new", rc);
    return c;
}

void fill(cachekit_cache *c, const char *ns, const Data &d, const std::string &value) {
    for (const std::string &k : d.keys)
        if (int rc = cachekit_cache_put(c, ns, k.data(), k.size(), value.data(), value.size(), CACHEKIT_TTL_DEFAULT);
            rc != CACHEKIT_OK)
            die("cachekit_cache_put", rc);
}

void run_cache_hits(benchmark::State &state, cachekit_cache *c, const char *ns, const Data &d, size_t value_size) {
    cachekit_buf out = CACHEKIT_BUF_INIT;
    for (const std::string &k : d.keys)  // every read is a hit of the right size
        if (cachekit_cache_get(c, &out, nullptr, ns, k.data(), k.size()) != CACHEKIT_OK || out.size != value_size)
            die("warm-up get", -1);
    size_t i = 0;
    for (auto _ : state) {
        const std::string &k = d.keys[d.sequence[i++ & (kSequence - 1)]];
        int rc = cachekit_cache_get(c, &out, nullptr, ns, k.data(), k.size());
        benchmark::DoNotOptimize(rc);
        benchmark::DoNotOptimize(out.ptr);
    }
    state.SetItemsProcessed(int64_t(state.iterations()));
    state.SetBytesProcessed(int64_t(state.iterations() * value_size));
    cachekit_buf_dispose(&out);
}

// ---------------------------------------------------------------- B3

void B3_cachekit(benchmark::State &state) {
    static const Data d("b3");
    const std::string value = msgpack_str(100, 1);
    cachekit_cache *c = l1_only_cache(false);
    fill(c, "b3", d, value);
    run_cache_hits(state, c, "b3", d, value.size());
    cachekit_cache_free(c);
}

void B3_anchor(benchmark::State &state) {
    static const Data d("b3");
    const std::string value = msgpack_str(100, 1);
    // The options the cache handle gives its L1 by default.
    cachekit::l1::Options opts;
    opts.max_bytes = uint64_t(100) << 20;
    opts.sweep_interval_ms = 30000;
    cachekit::l1::L1Cache l1(opts);
    for (const std::string &k : d.keys) l1.put("b3", k, value, 0);
    cachekit::Buffer out;
    for (const std::string &k : d.keys)
        if (!l1.get(k, out.get()) || out.size() != value.size()) die("warm-up L1 get", -1);
    size_t i = 0;
    for (auto _ : state) {
        const std::string &k = d.keys[d.sequence[i++ & (kSequence - 1)]];
        bool hit = l1.get(k, out.get());
        benchmark::DoNotOptimize(hit);
        benchmark::DoNotOptimize(out.data());
    }
    state.SetItemsProcessed(int64_t(state.iterations()));
    state.SetBytesProcessed(int64_t(state.iterations() * value.size()));
}

// ---------------------------------------------------------------- E3

void E3_encrypted(benchmark::State &state) {
    if (!cachekit_crypto_available()) {
        state.SkipWithError("AES-256-GCM unavailable on this CPU");
        return;
    }
    static const Data d("e3");
    const std::string value = msgpack_str(1024, 3);
    cachekit_cache *c = l1_only_cache(true);
    fill(c, "e3", d, value);
    run_cache_hits(state, c, "e3", d, value.size());
    cachekit_cache_free(c);
}

void E3_plain(benchmark::State &state) {
    static const Data d("e3");
    const std::string value = msgpack_str(1024, 3);
    cachekit_cache *c = l1_only_cache(false);
    fill(c, "e3", d, value);
    run_cache_hits(state, c, "e3", d, value.size());
    cachekit_cache_free(c);
}

}  // namespace

BENCHMARK(B3_cachekit)->Name("B3/cachekit");
BENCHMARK(B3_anchor)->Name("B3/anchor");
BENCHMARK(E3_encrypted)->Name("E3/encrypted");
BENCHMARK(E3_plain)->Name("E3/plain");

BENCHMARK_MAIN();
