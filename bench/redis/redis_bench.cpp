// B8: Backend::get through the Redis backend vs a raw hiredis GET of the same
// key (redisCommand "GET %b" on its own connection + copying the reply into a
// buffer), for 100 B and 14 KiB values. B10: get_many of 100 keys (one MGET)
// vs 100 sequential Backend::get calls, in keys per second.
// Starts its own redis-server on a free loopback port and stops it at exit.
#include <benchmark/benchmark.h>
#include <hiredis/hiredis.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "../../tests/redis/redis_server.hpp"
#include "l2/redis_backend.hpp"
#include "util/buffer.hpp"

namespace {

using cachekit::Buffer;
using cachekit::l2::Deadline;
using namespace std::chrono_literals;

constexpr int kWarmup = 200;  // untimed calls before every timed run
constexpr size_t kBatch = 100;

std::unique_ptr<cachekit::l2::Backend> backend;
redisContext *raw = nullptr;
std::vector<std::string> batch_keys;
std::vector<std::string_view> batch_views;

std::string payload(size_t n) {
    std::mt19937 rng(42);
    std::string out(n, '\0');
    for (auto &c : out) c = static_cast<char>('a' + rng() % 26);
    return out;
}

void anchor_get(std::string_view key, Buffer &out) {
    auto *reply = static_cast<redisReply *>(redisCommand(raw, "GET %b", key.data(), key.size()));
    if (reply == nullptr || reply->type != REDIS_REPLY_STRING) {
        std::fprintf(stderr, "anchor GET failed\n");
        std::abort();
    }
    cachekit::buf_assign(out.get(), reply->str, reply->len);
    freeReplyObject(reply);
}

void B8_cachekit(benchmark::State &state, std::string key, size_t size) {
    Buffer out;
    for (int i = 0; i < kWarmup; ++i) backend->get(key, out.get(), Deadline::after(5000ms));
    for (auto _ : state) {
        bool hit = backend->get(key, out.get(), Deadline::after(5000ms));
        benchmark::DoNotOptimize(hit);
    }
    if (out.size() != size) state.SkipWithError("wrong value size");
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * size));
}

void B8_anchor(benchmark::State &state, std::string key, size_t size) {
    Buffer out;
    for (int i = 0; i < kWarmup; ++i) anchor_get(key, out);
    for (auto _ : state) {
        anchor_get(key, out);
        benchmark::DoNotOptimize(out.data());
    }
    if (out.size() != size) state.SkipWithError("wrong value size");
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * size));
}

void B10_batch(benchmark::State &state) {
    std::vector<cachekit_buf> outs(kBatch, cachekit_buf CACHEKIT_BUF_INIT);
    std::vector<bool> found;
    for (int i = 0; i < kWarmup / 10; ++i) backend->get_many(batch_views, outs.data(), found, Deadline::after(5000ms));
    for (auto _ : state) {
        backend->get_many(batch_views, outs.data(), found, Deadline::after(5000ms));
        benchmark::DoNotOptimize(outs.data());
    }
    for (size_t i = 0; i < kBatch; ++i) {
        if (!found[i]) state.SkipWithError("batch key missing");
        cachekit::buf_release(&outs[i]);
    }
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * kBatch));
}

void B10_sequential(benchmark::State &state) {
    Buffer out;
    for (int i = 0; i < kWarmup / 10; ++i)
        for (auto key : batch_views) backend->get(key, out.get(), Deadline::after(5000ms));
    for (auto _ : state) {
        for (auto key : batch_views) {
            bool hit = backend->get(key, out.get(), Deadline::after(5000ms));
            benchmark::DoNotOptimize(hit);
        }
    }
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * kBatch));
}

}  // namespace

int main(int argc, char **argv) {
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    if (cachekit::testing::RedisServer::find_binary().empty()) {
        std::fprintf(stderr, "redis_bench: redis-server is not installed; skipping\n");
        return 77;
    }
    int status = 0;
    try {
        cachekit::testing::RedisServer server;
        backend = cachekit::l2::open_redis(cachekit::l2::parse_redis_url(server.url()));
        timeval tv{5, 0};
        raw = redisConnectWithTimeout("127.0.0.1", server.port(), tv);
        if (raw == nullptr || raw->err) throw std::runtime_error("cannot connect the anchor");
        redisSetTimeout(raw, tv);

        const std::string small = payload(100), large = payload(14 * 1024);
        backend->set("b8:100", small, std::nullopt, Deadline::after(5000ms));
        backend->set("b8:14k", large, std::nullopt, Deadline::after(5000ms));
        std::vector<cachekit::l2::KeyValue> entries;
        for (size_t i = 0; i < kBatch; ++i) batch_keys.push_back("b10:" + std::to_string(i));
        for (auto &k : batch_keys) {
            batch_views.push_back(k);
            entries.push_back({k, small});
        }
        backend->set_many(entries, std::nullopt, Deadline::after(5000ms));

        benchmark::RegisterBenchmark("B8-100/cachekit", B8_cachekit, std::string("b8:100"), small.size())->UseRealTime();
        benchmark::RegisterBenchmark("B8-100/anchor", B8_anchor, std::string("b8:100"), small.size())->UseRealTime();
        benchmark::RegisterBenchmark("B8-14k/cachekit", B8_cachekit, std::string("b8:14k"), large.size())->UseRealTime();
        benchmark::RegisterBenchmark("B8-14k/anchor", B8_anchor, std::string("b8:14k"), large.size())->UseRealTime();
        benchmark::RegisterBenchmark("B10/batch", B10_batch)->UseRealTime();
        benchmark::RegisterBenchmark("B10/sequential", B10_sequential)->UseRealTime();
        benchmark::RunSpecifiedBenchmarks();
        benchmark::Shutdown();
    } catch (const std::exception &e) {
        std::fprintf(stderr, "redis_bench: %s\n", e.what());
        status = 1;
    }
    if (raw) redisFree(raw);
    backend.reset();
    return status;
}
