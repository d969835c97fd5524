// The C3 cases (issue 17), for one Redis (coherence_bench) and a cluster
// (bench/cluster/cluster_bench, names with "-cluster"):
//
//   C3hit<sfx>/tracking  cachekit_cache_get L1 hit of a 100-byte payload on a
//                        cache whose backend URL has ?l1_coherence=tracking
//   C3hit<sfx>/off       the same on a cache without coherence (the anchor);
//                        target <= 1.05 (cpu time)
//   C3lag<sfx>           propagation lag: a raw hiredis SET (sent to the node
//                        that owns the key) of a key cache A holds in L1,
//                        then A's L1 polled (cachekit_cache_peek) until the
//                        key is gone; counters lag_p50_us / lag_p99_us over
//                        the run's updates, from the SET's send. Anchor
//                        counter rtt_p99_us: the raw SET's own round trip in
//                        the same run. Target: lag_p99_us < 2000 (absolute;
//                        the ratio is reported only). 10,000 updates.
#pragma once

#include <benchmark/benchmark.h>
#include <hiredis/hiredis.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

#include "cachekit/cachekit.h"

namespace cachekit::bench::c3 {

inline const std::string kPrefix = "c3:";
inline const std::string kKey = "ns:c3:func:bench.f:args:hit";
// The key as stored (what the raw SET writes and the owner is found by).
inline const std::string kStoredKey = kPrefix + kKey;
inline const std::string kValue = std::string(1, char(0xd9)) + char(98) + std::string(98, 'v');  // 100-byte msgpack str

struct Target {
    cachekit_cache *tracked = nullptr;  // ?l1_coherence=tracking
    cachekit_cache *plain = nullptr;    // no coherence
    redisContext *raw = nullptr;        // connected to the node that owns kStoredKey
};

inline cachekit_cache *open_cache(const std::string &url) {
    cachekit_cache_options o;
    cachekit_cache_options_init(&o, sizeof o);
    o.backend_url = url.c_str();
    o.key_prefix = kPrefix.c_str();
    cachekit_cache *c = nullptr;
    if (cachekit_cache_new(&c, &o) != CACHEKIT_OK) throw std::runtime_error(cachekit_error_last_message());
    return c;
}

// Until `c` holds kKey in L1 (a put's own message drops its copy: read it back).
inline void hold_in_l1(cachekit_cache *c) {
    cachekit_buf out = CACHEKIT_BUF_INIT;
    for (int i = 0; i < 100000; ++i) {
        if (cachekit_cache_peek(c, &out, nullptr, "c3", kKey.data(), kKey.size()) == CACHEKIT_OK) break;
        cachekit_cache_get(c, &out, nullptr, "c3", kKey.data(), kKey.size());
    }
    cachekit_buf_dispose(&out);
}

inline void hit(benchmark::State &state, cachekit_cache *c) {
    hold_in_l1(c);
    cachekit_buf out = CACHEKIT_BUF_INIT;
    for (auto _ : state) {
        if (cachekit_cache_get(c, &out, nullptr, "c3", kKey.data(), kKey.size()) != CACHEKIT_OK)
            state.SkipWithError("miss");
        benchmark::DoNotOptimize(out.ptr);
    }
    cachekit_buf_dispose(&out);
}

inline double percentile(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, size_t(double(v.size()) * p))];
}

inline void lag(benchmark::State &state, const Target *t) {
    using Clock = std::chrono::steady_clock;
    auto *r = static_cast<redisReply *>(redisCommand(t->raw, "GET %b", kStoredKey.data(), kStoredKey.size()));
    if (r == nullptr || r->type != REDIS_REPLY_STRING) {
        if (r) freeReplyObject(r);
        state.SkipWithError("the raw connection does not see the stored key");
        return;
    }
    const std::string stored(r->str, r->len);
    freeReplyObject(r);
    std::vector<double> lags, rtt;
    cachekit_buf out = CACHEKIT_BUF_INIT;
    for (auto _ : state) {
        state.PauseTiming();
        hold_in_l1(t->tracked);
        state.ResumeTiming();
        const auto sent = Clock::now();
        freeReplyObject(
            redisCommand(t->raw, "SET %b %b", kStoredKey.data(), kStoredKey.size(), stored.data(), stored.size()));
        const auto acked = Clock::now();
        while (cachekit_cache_peek(t->tracked, &out, nullptr, "c3", kKey.data(), kKey.size()) == CACHEKIT_OK) {
        }
        lags.push_back(std::chrono::duration<double, std::micro>(Clock::now() - sent).count());
        rtt.push_back(std::chrono::duration<double, std::micro>(acked - sent).count());
    }
    cachekit_buf_dispose(&out);
    state.counters["lag_p50_us"] = percentile(lags, 0.5);
    state.counters["lag_p99_us"] = percentile(lags, 0.99);
    state.counters["rtt_p99_us"] = percentile(rtt, 0.99);
    state.counters["updates"] = double(lags.size());
}

// Opens the two caches on `url` (a query string is added), puts the value,
// and registers the three cases named with `suffix`. `raw_for` connects to
// the node that owns kStoredKey. `t` must outlive the run.
template <typename RawFor>
void setup_and_register(Target *t, const std::string &url, const std::string &suffix, RawFor raw_for) {
    const char *sep = url.find('?') == std::string::npos ? "?" : "&";
    t->tracked = open_cache(url + sep + "l1_coherence=tracking");
    t->plain = open_cache(url);
    if (cachekit_cache_put(t->tracked, "c3", kKey.data(), kKey.size(), kValue.data(), kValue.size(), 0) != CACHEKIT_OK)
        throw std::runtime_error(cachekit_error_last_message());
    t->raw = raw_for();
    benchmark::RegisterBenchmark(("C3hit" + suffix + "/tracking").c_str(), hit, t->tracked);
    benchmark::RegisterBenchmark(("C3hit" + suffix + "/off").c_str(), hit, t->plain);
    benchmark::RegisterBenchmark(("C3lag" + suffix).c_str(), lag, t)->Iterations(10000)->UseRealTime();
}

inline void close(Target *t) {
    cachekit_cache_free(t->tracked);
    cachekit_cache_free(t->plain);
    *t = Target{};
}

}  // namespace cachekit::bench::c3
