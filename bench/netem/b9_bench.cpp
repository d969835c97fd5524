// B9 (issue 18): synchronous Redis gets across a link with 250 us added to every round
// trip (bench/netem/b9.py makes the link: netem, or its userspace delay relay). The Redis
// server is at CACHEKIT_B9_REDIS (host:port); the values are set here. One benchmark,
// B9/round (real time, as a round trip is mostly waiting), calls in turn in one loop:
//   a raw hiredis GET of the 100 B key on its own connection: the round trip, whose
//     inverse is the ceiling of synchronous gets per second,
//   Backend::get of the same key through the Redis backend,
//   Backend::get_many of 100 such keys (one MGET),
// and times each call. Alternating them puts the figures and the anchor under the same
// conditions (on a loaded machine, the same scheduling stalls). Counters: the mean and
// the median of each (rtt_us, get_us, many_us; rtt_p50_us, get_p50_us, many_p50_us).
#include <benchmark/benchmark.h>
#include <hiredis/hiredis.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "l2/redis/redis_backend.hpp"
#include "util/buffer.hpp"

namespace {

using cachekit::Buffer;
using cachekit::l2::Deadline;
using namespace std::chrono_literals;

constexpr size_t kBatch = 100;
std::unique_ptr<cachekit::l2::Backend> backend;
redisContext *raw = nullptr;
std::vector<std::string> keys;
std::vector<std::string_view> views;

struct Samples {
    std::vector<double> ns;
    double mean_us() const {
        double sum = 0;
        for (double v : ns) sum += v;
        return ns.empty() ? 0 : sum / static_cast<double>(ns.size()) / 1000.0;
    }
    double median_us() {
        if (ns.empty()) return 0;
        std::nth_element(ns.begin(), ns.begin() + static_cast<std::ptrdiff_t>(ns.size() / 2), ns.end());
        return ns[ns.size() / 2] / 1000.0;
    }
};

void B9_round(benchmark::State &state) {
    using Clock = std::chrono::steady_clock;
    auto since = [](Clock::time_point a, Clock::time_point b) {
        return static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(b - a).count());
    };
    Buffer out;
    std::vector<cachekit_buf> outs(kBatch, cachekit_buf CACHEKIT_BUF_INIT);
    std::vector<bool> found;
    Samples rtt, get, many;
    for (auto _ : state) {
        const auto t0 = Clock::now();
        auto *reply = static_cast<redisReply *>(redisCommand(raw, "GET %s", "b9:0"));
        const auto t1 = Clock::now();
        if (reply == nullptr || reply->type != REDIS_REPLY_STRING) {
            state.SkipWithError("anchor GET failed");
            break;
        }
        freeReplyObject(reply);
        benchmark::DoNotOptimize(backend->get("b9:0", out.get(), Deadline::after(5000ms)));
        const auto t2 = Clock::now();
        backend->get_many(views, outs.data(), found, Deadline::after(5000ms));
        const auto t3 = Clock::now();
        rtt.ns.push_back(since(t0, t1));
        get.ns.push_back(since(t1, t2));
        many.ns.push_back(since(t2, t3));
    }
    if (out.size() != 100) state.SkipWithError("wrong value size");
    for (size_t i = 0; i < kBatch; ++i) {
        if (found.size() != kBatch || !found[i]) state.SkipWithError("batch key missing");
        cachekit::buf_release(&outs[i]);
    }
    state.counters["rtt_us"] = rtt.mean_us();
    state.counters["get_us"] = get.mean_us();
    state.counters["many_us"] = many.mean_us();
    state.counters["rtt_p50_us"] = rtt.median_us();
    state.counters["get_p50_us"] = get.median_us();
    state.counters["many_p50_us"] = many.median_us();
}

}  // namespace

int main(int argc, char **argv) {
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    const char *where = std::getenv("CACHEKIT_B9_REDIS");
    if (where == nullptr) {
        std::fprintf(stderr, "b9_bench: set CACHEKIT_B9_REDIS=host:port (bench/netem/b9.py does)\n");
        return 2;
    }
    std::string host(where);
    int port = std::atoi(host.substr(host.rfind(':') + 1).c_str());
    host.resize(host.rfind(':'));
    try {
        backend = cachekit::l2::open_redis(cachekit::l2::parse_redis_url("redis://" + std::string(where) + "/0"));
        timeval tv{5, 0};
        raw = redisConnectWithTimeout(host.c_str(), port, tv);
        if (raw == nullptr || raw->err) throw std::runtime_error("cannot connect the anchor");
        redisSetTimeout(raw, tv);
        std::vector<cachekit::l2::KeyValue> entries;
        const std::string value(100, 'v');
        for (size_t i = 0; i < kBatch; ++i) keys.push_back("b9:" + std::to_string(i));
        for (auto &k : keys) {
            views.push_back(k);
            entries.push_back({k, value});
        }
        backend->set_many(entries, std::nullopt, Deadline::after(5000ms));
        benchmark::RegisterBenchmark("B9/round", B9_round)->UseRealTime();
        benchmark::RunSpecifiedBenchmarks();
        benchmark::Shutdown();
    } catch (const std::exception &e) {
        std::fprintf(stderr, "b9_bench: %s\n", e.what());
        return 1;
    }
    redisFree(raw);
    return 0;
}
