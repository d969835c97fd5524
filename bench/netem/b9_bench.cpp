// B9 (issue 18): synchronous Redis gets across a link with 250 us added to every round
// trip (netem; bench/netem/b9.py builds the network namespace and runs this inside the
// host side of it). The Redis server is at CACHEKIT_B9_REDIS (host:port); the values
// are set here. Benchmarks (real time, as a round trip is mostly waiting):
//   B9/rtt       a raw hiredis GET of the 100 B key on its own connection: the round
//                trip, whose inverse is the ceiling of synchronous gets per second
//   B9/get       Backend::get of the same key through the Redis backend
//   B9/get_many  Backend::get_many of 100 such keys (one MGET), items = keys
#include <benchmark/benchmark.h>
#include <hiredis/hiredis.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "l2/redis_backend.hpp"
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

void B9_rtt(benchmark::State &state) {
    for (auto _ : state) {
        auto *reply = static_cast<redisReply *>(redisCommand(raw, "GET %s", "b9:0"));
        if (reply == nullptr || reply->type != REDIS_REPLY_STRING) {
            state.SkipWithError("anchor GET failed");
            break;
        }
        freeReplyObject(reply);
    }
}

void B9_get(benchmark::State &state) {
    Buffer out;
    for (auto _ : state) benchmark::DoNotOptimize(backend->get("b9:0", out.get(), Deadline::after(5000ms)));
    if (out.size() != 100) state.SkipWithError("wrong value size");
}

void B9_get_many(benchmark::State &state) {
    std::vector<cachekit_buf> outs(kBatch, cachekit_buf CACHEKIT_BUF_INIT);
    std::vector<bool> found;
    for (auto _ : state) backend->get_many(views, outs.data(), found, Deadline::after(5000ms));
    for (size_t i = 0; i < kBatch; ++i) {
        if (found.size() != kBatch || !found[i]) state.SkipWithError("batch key missing");
        cachekit::buf_release(&outs[i]);
    }
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * kBatch));
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
        benchmark::RegisterBenchmark("B9/rtt", B9_rtt)->UseRealTime();
        benchmark::RegisterBenchmark("B9/get", B9_get)->UseRealTime();
        benchmark::RegisterBenchmark("B9/get_many", B9_get_many)->UseRealTime();
        benchmark::RunSpecifiedBenchmarks();
        benchmark::Shutdown();
    } catch (const std::exception &e) {
        std::fprintf(stderr, "b9_bench: %s\n", e.what());
        return 1;
    }
    redisFree(raw);
    return 0;
}
