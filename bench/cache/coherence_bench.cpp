// C3 (issue 17): L1 coherence on one Redis.
//
//   C3hit/tracking  cachekit_cache_get L1 hit of a 100-byte payload on a
//                   cache whose backend URL has ?l1_coherence=tracking
//   C3hit/off       the same on a cache without coherence (the anchor);
//                   target <= 1.05 (cpu time)
//   C3lag           propagation lag: a raw hiredis SET of a key cache A holds
//                   in L1, then A's L1 polled (cachekit_cache_peek) until the
//                   key is gone; counters lag_p50_us / lag_p99_us over the
//                   run's updates, from the SET's send. Anchor counter
//                   rtt_p99_us: the raw SET's own round trip in the same
//                   run. Target: lag_p99_us < 2000 (absolute; the ratio is
//                   reported only).
// Starts its own redis-server on a free 127.0.0.1 port (the test harness)
// and exits 77 when none is installed.
#include <benchmark/benchmark.h>
#include <hiredis/hiredis.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "../../tests/redis/redis_server.hpp"
#include "cachekit/cachekit.h"

namespace {

using Clock = std::chrono::steady_clock;

cachekit_cache *tracked = nullptr;
cachekit_cache *plain = nullptr;
redisContext *raw = nullptr;
const std::string kKey = "ns:c3:func:bench.f:args:hit";
const std::string kValue = std::string(1, char(0xd9)) + char(98) + std::string(98, 'v');  // 100-byte msgpack str

cachekit_cache *open_cache(const std::string &url) {
    cachekit_cache_options o;
    cachekit_cache_options_init(&o, sizeof o);
    o.backend_url = url.c_str();
    o.key_prefix = "c3:";
    cachekit_cache *c = nullptr;
    if (cachekit_cache_new(&c, &o) != CACHEKIT_OK) throw std::runtime_error(cachekit_error_last_message());
    return c;
}

// Until `c` holds kKey in L1 (a put's own message drops its copy: read it back).
void hold_in_l1(cachekit_cache *c) {
    cachekit_buf out = CACHEKIT_BUF_INIT;
    for (int i = 0; i < 100000; ++i) {
        if (cachekit_cache_peek(c, &out, nullptr, "c3", kKey.data(), kKey.size()) == CACHEKIT_OK) break;
        cachekit_cache_get(c, &out, nullptr, "c3", kKey.data(), kKey.size());
    }
    cachekit_buf_dispose(&out);
}

void hit(benchmark::State &state, cachekit_cache *c) {
    hold_in_l1(c);
    cachekit_buf out = CACHEKIT_BUF_INIT;
    for (auto _ : state) {
        if (cachekit_cache_get(c, &out, nullptr, "c3", kKey.data(), kKey.size()) != CACHEKIT_OK)
            state.SkipWithError("miss");
        benchmark::DoNotOptimize(out.ptr);
    }
    cachekit_buf_dispose(&out);
}
void C3hit_tracking(benchmark::State &state) { hit(state, tracked); }
void C3hit_off(benchmark::State &state) { hit(state, plain); }
BENCHMARK(C3hit_tracking)->Name("C3hit/tracking");
BENCHMARK(C3hit_off)->Name("C3hit/off");

double percentile(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, size_t(double(v.size()) * p))];
}

void C3lag(benchmark::State &state) {
    const std::string stored_key = "c3:" + kKey;
    auto *r = static_cast<redisReply *>(redisCommand(raw, "GET %b", stored_key.data(), stored_key.size()));
    const std::string stored(r->str, r->len);
    freeReplyObject(r);
    std::vector<double> lag, rtt;
    cachekit_buf out = CACHEKIT_BUF_INIT;
    for (auto _ : state) {
        state.PauseTiming();
        hold_in_l1(tracked);
        state.ResumeTiming();
        const auto sent = Clock::now();
        freeReplyObject(redisCommand(raw, "SET %b %b", stored_key.data(), stored_key.size(), stored.data(), stored.size()));
        const auto acked = Clock::now();
        while (cachekit_cache_peek(tracked, &out, nullptr, "c3", kKey.data(), kKey.size()) == CACHEKIT_OK) {
        }
        lag.push_back(std::chrono::duration<double, std::micro>(Clock::now() - sent).count());
        rtt.push_back(std::chrono::duration<double, std::micro>(acked - sent).count());
    }
    cachekit_buf_dispose(&out);
    state.counters["lag_p50_us"] = percentile(lag, 0.5);
    state.counters["lag_p99_us"] = percentile(lag, 0.99);
    state.counters["rtt_p99_us"] = percentile(rtt, 0.99);
    state.counters["updates"] = double(lag.size());
}
BENCHMARK(C3lag)->Iterations(10000)->UseRealTime();

}  // namespace

int main(int argc, char **argv) {
    cachekit::testing::RedisServer::require_or_skip("coherence_bench");
    cachekit::testing::RedisServer server;
    raw = redisConnect("127.0.0.1", server.port());
    tracked = open_cache(server.url() + "?l1_coherence=tracking");
    plain = open_cache(server.url());
    if (cachekit_cache_put(tracked, "c3", kKey.data(), kKey.size(), kValue.data(), kValue.size(), 0) != CACHEKIT_OK)
        throw std::runtime_error(cachekit_error_last_message());
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    cachekit_cache_free(tracked);
    cachekit_cache_free(plain);
    redisFree(raw);
    return 0;
}
