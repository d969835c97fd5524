// B8: Backend::get through the Redis backend vs a raw hiredis GET of the same
// key (redisCommand "GET %b" on its own connection + copying the reply into a
// buffer), for 100 B and 14 KiB values. B10: get_many of 100 keys (one MGET)
// vs 100 sequential Backend::get calls, in keys per second.
// Starts its own redis-server on a free loopback port and stops it at exit.
#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "l2/redis/redis_backend.hpp"
#include "redis_bench_main.hpp"

namespace {

using cachekit::Buffer;
using cachekit::bench::payload;
using cachekit::l2::Deadline;
using namespace std::chrono_literals;

constexpr int kWarmup = 200;  // untimed calls before every timed run
constexpr size_t kBatch = 100;

std::unique_ptr<cachekit::l2::Backend> backend;
std::unique_ptr<cachekit::bench::RawConnection> raw;
std::vector<std::string> batch_keys;
std::vector<std::string_view> batch_views;

void B8_cachekit(benchmark::State &state, std::string key, size_t size) {
    cachekit::bench::time_gets(state, size, kWarmup,
                               [&](Buffer &out) { backend->get(key, out.get(), Deadline::after(5000ms)); });
}

void B8_anchor(benchmark::State &state, std::string key, size_t size) {
    cachekit::bench::time_gets(state, size, kWarmup, [&](Buffer &out) { raw->get(key, out); });
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
    return cachekit::bench::redis_bench_main(argc, argv, "redis_bench", [] {
        cachekit::testing::RedisServer server;
        backend = cachekit::l2::open_redis(cachekit::l2::parse_redis_url(server.url()));
        raw = std::make_unique<cachekit::bench::RawConnection>(server.port());

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
        cachekit::bench::run_registered();
        raw.reset();
        backend.reset();
    });
}
