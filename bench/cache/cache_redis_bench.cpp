// Cache handle over Redis (issue 5), against a raw hiredis GET.
//
//   B8c-100/cachekit  cachekit_cache_get of a 100-byte payload through the C
//                     API, L1 off, so every call is an L2 read plus the
//                     entry's checks (CK frame, envelope: LZ4 + XXH3, the
//                     MessagePack bound check)
//   B8c-100/anchor    raw hiredis: redisCommand("GET %b") of the same stored
//                     bytes on its own connection, reply copied into a buffer
//   B8c-14k/...       the same with a 14 KiB payload
//   KR1/registry      cachekit_cache_put of a 100-byte payload for a function
//                     declared for the key registry (docs/redis.md "Key
//                     registry"): SET + SADD + EXPIRE in one round trip
//   KR1/plain         the same put for an undeclared function: SET alone
// Real time (UseRealTime): the calls wait on the socket. Target <= 1.2x.
// Starts its own redis-server on a free 127.0.0.1 port (the test harness)
// and exits 77 when none is installed.
#include <benchmark/benchmark.h>
#include <hiredis/hiredis.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "../../tests/redis/redis_server.hpp"
#include "cachekit/cachekit.h"

namespace {

constexpr size_t kKeys = 64;
constexpr size_t kSequence = 1024;
constexpr int kWarmup = 200;

cachekit_cache *cache = nullptr;
redisContext *raw = nullptr;

struct Set {
    std::string tag;
    size_t payload_size = 0;
    size_t stored_size = 0;               // mean over the keys (the payloads differ, so do their compressed forms)
    std::vector<std::string> keys;
    std::vector<size_t> stored_sizes;     // per key
    std::vector<uint32_t> sequence;
};
Set small_set, large_set;

// One MessagePack str document of exactly `total` bytes (> 257), pseudo-random letters.
std::string msgpack_str(size_t total, uint32_t seed) {
    std::mt19937 rng(seed);
    std::string out;
    const size_t body = total <= 257 ? total - 2 : total - 3;
    if (total <= 257) {
        out.push_back(char(0xd9));
        out.push_back(char(body));
    } else {
        out.push_back(char(0xda));
        out.push_back(char(body >> 8));
        out.push_back(char(body & 0xff));
    }
    for (size_t i = 0; i < body; ++i) out.push_back(char('a' + rng() % 26));
    return out;
}

void prepare(Set &s, const char *tag, size_t payload_size) {
    s.tag = tag;
    s.payload_size = payload_size;
    for (size_t i = 0; i < kKeys; ++i) {
        s.keys.push_back(std::string("ns:b8c:func:bench.f:args:") + tag + ":" + std::to_string(i));
        const std::string value = msgpack_str(payload_size, uint32_t(i + 1));
        if (cachekit_cache_put(cache, "b8c", s.keys.back().data(), s.keys.back().size(), value.data(), value.size(), 0) !=
            CACHEKIT_OK)
            throw std::runtime_error(std::string("put: ") + cachekit_error_last_message());
    }
    std::mt19937 rng(7);
    for (size_t i = 0; i < kSequence; ++i) s.sequence.push_back(uint32_t(rng() % kKeys));
    size_t total = 0;
    for (const std::string &k : s.keys) {
        auto *reply = static_cast<redisReply *>(redisCommand(raw, "STRLEN %b", k.data(), k.size()));
        if (!reply || reply->type != REDIS_REPLY_INTEGER) throw std::runtime_error("STRLEN failed");
        s.stored_sizes.push_back(size_t(reply->integer));
        total += size_t(reply->integer);
        freeReplyObject(reply);
    }
    s.stored_size = total / kKeys;
}

void cache_get(const std::string &key, cachekit_buf *out) {
    int rc = cachekit_cache_get(cache, out, nullptr, "b8c", key.data(), key.size());
    if (rc != CACHEKIT_OK) {
        std::fprintf(stderr, "cachekit_cache_get: %d %s\n", rc, cachekit_error_last_message());
        std::abort();
    }
}

void anchor_get(const std::string &key, cachekit_buf *out) {
    auto *reply = static_cast<redisReply *>(redisCommand(raw, "GET %b", key.data(), key.size()));
    if (reply == nullptr || reply->type != REDIS_REPLY_STRING) {
        std::fprintf(stderr, "anchor GET failed\n");
        std::abort();
    }
    if (cachekit_buf_reserve(out, reply->len) != CACHEKIT_OK) std::abort();
    std::memcpy(out->ptr, reply->str, reply->len);
    out->size = reply->len;
    freeReplyObject(reply);
}

// `stored`: the anchor reads the stored bytes, the cache the payload.
template <void (*Get)(const std::string &, cachekit_buf *)>
void run(benchmark::State &state, const Set *s, bool stored) {
    cachekit_buf out = CACHEKIT_BUF_INIT;
    bool sizes_ok = true;
    for (int i = 0; i < kWarmup; ++i) {
        const uint32_t k = s->sequence[size_t(i) % kSequence];
        Get(s->keys[k], &out);
        sizes_ok = sizes_ok && out.size == (stored ? s->stored_sizes[k] : s->payload_size);
    }
    if (!sizes_ok) {
        state.SkipWithError("wrong value size");
        cachekit_buf_dispose(&out);
        return;
    }
    size_t i = 0;
    for (auto _ : state) {
        Get(s->keys[s->sequence[i++ % kSequence]], &out);
        benchmark::DoNotOptimize(out.ptr);
    }
    state.SetBytesProcessed(int64_t(state.iterations() * s->payload_size));
    state.counters["stored_bytes"] = double(s->stored_size);
    cachekit_buf_dispose(&out);
}

// Puts cycling over kKeys keys of one function (`fn`: "reg" is declared for the registry).
void KR1_put(benchmark::State &state, const char *fn) {
    std::vector<std::string> keys;
    for (size_t i = 0; i < kKeys; ++i) keys.push_back(std::string("ns:b8c:func:bench.") + fn + ":args:r1:" + std::to_string(i));
    const std::string value = msgpack_str(100, 1);
    size_t i = 0;
    auto put = [&] {
        const std::string &k = keys[i++ % kKeys];
        if (cachekit_cache_put(cache, "b8c", k.data(), k.size(), value.data(), value.size(), 600) != CACHEKIT_OK) {
            std::fprintf(stderr, "cachekit_cache_put: %s\n", cachekit_error_last_message());
            std::abort();
        }
    };
    for (int w = 0; w < kWarmup; ++w) put();
    for (auto _ : state) put();
}

void B8c_cachekit(benchmark::State &state, const Set *s) { run<cache_get>(state, s, false); }
void B8c_anchor(benchmark::State &state, const Set *s) { run<anchor_get>(state, s, true); }

}  // namespace

int main(int argc, char **argv) {
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    if (cachekit::testing::RedisServer::find_binary().empty()) {
        std::fprintf(stderr, "cache_redis_bench: redis-server is not installed; skipping\n");
        return 77;
    }
    int status = 0;
    try {
        cachekit::testing::RedisServer server;
        const std::string url = server.url();
        cachekit_cache_options o;
        cachekit_cache_options_init(&o, sizeof o);
        o.backend_url = url.c_str();
        o.l1 = CACHEKIT_OFF;
        if (cachekit_cache_new(&cache, &o) != CACHEKIT_OK)
            throw std::runtime_error(std::string("cachekit_cache_new: ") + cachekit_error_last_message());
        timeval tv{5, 0};
        raw = redisConnectWithTimeout("127.0.0.1", server.port(), tv);
        if (raw == nullptr || raw->err) throw std::runtime_error("cannot connect the anchor");
        redisSetTimeout(raw, tv);

        prepare(small_set, "100", 100);
        prepare(large_set, "14k", 14 * 1024);

        const std::string head = "ns:b8c:func:bench.reg:args:";
        int kept = 0;
        if (cachekit_cache_track_function(cache, "b8c", "bench.reg", head.data(), head.size(), &kept) != CACHEKIT_OK ||
            kept != 1)
            throw std::runtime_error("track_function failed");
        benchmark::RegisterBenchmark("KR1/registry", KR1_put, "reg")->UseRealTime();
        benchmark::RegisterBenchmark("KR1/plain", KR1_put, "plain")->UseRealTime();
        benchmark::RegisterBenchmark("B8c-100/cachekit", B8c_cachekit, &small_set)->UseRealTime();
        benchmark::RegisterBenchmark("B8c-100/anchor", B8c_anchor, &small_set)->UseRealTime();
        benchmark::RegisterBenchmark("B8c-14k/cachekit", B8c_cachekit, &large_set)->UseRealTime();
        benchmark::RegisterBenchmark("B8c-14k/anchor", B8c_anchor, &large_set)->UseRealTime();
        benchmark::RunSpecifiedBenchmarks();
        benchmark::Shutdown();
        cachekit_cache_stats st;
        std::memset(&st, 0, sizeof st);
        st.struct_size = sizeof st;
        cachekit_cache_stats_get(cache, &st, nullptr);
        if (st.misses + st.corrupt + st.backend_errors + st.timeouts != 0) {
            std::fprintf(stderr, "cache_redis_bench: unexpected misses/errors during the run\n");
            status = 1;
        }
    } catch (const std::exception &e) {
        std::fprintf(stderr, "cache_redis_bench: %s\n", e.what());
        status = 1;
    }
    if (raw) redisFree(raw);
    cachekit_cache_free(cache);
    return status;
}
