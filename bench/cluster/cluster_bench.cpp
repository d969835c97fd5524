// C1: Backend::get through the Redis Cluster backend (100 B hit) vs a raw
// hiredis GET of the same key sent straight to the node that owns it (its
// own connection + copying the reply into a buffer).
// C2: get_many of 100 keys spread over the 3 primaries vs get_many of 100
// keys that all live on one node (one hash tag), both through the cluster
// backend, in keys per second: what pipelining to the nodes in parallel buys.
// C3-cluster: the C3 cases (bench/cache/coherence_cases.hpp) on the
// cluster: an L1 hit with tracking on beside off, and the propagation lag
// of a raw SET sent to the key's primary (one feed per primary).
// Builds its own 6-node cluster on loopback and stops it at exit.
#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "cluster_harness.hpp"
#include "coherence_cases.hpp"
#include "l2/cluster/cluster_slots.hpp"
#include "l2/cluster/redis_cluster_backend.hpp"
#include "redis_bench_main.hpp"

namespace {

using cachekit::Buffer;
using cachekit::bench::payload;
using cachekit::l2::Deadline;
using namespace std::chrono_literals;

constexpr int kWarmup = 200;
constexpr size_t kBatch = 100;

std::unique_ptr<cachekit::l2::Backend> backend;
std::unique_ptr<cachekit::bench::RawConnection> raw;
std::vector<std::string> spread_keys, one_node_keys;
std::vector<std::string_view> spread_views, one_node_views;

void C1_cachekit(benchmark::State &state) {
    Buffer out;
    for (int i = 0; i < kWarmup; ++i) backend->get("c1:100", out.get(), Deadline::after(5000ms));
    for (auto _ : state) {
        bool hit = backend->get("c1:100", out.get(), Deadline::after(5000ms));
        benchmark::DoNotOptimize(hit);
    }
    if (out.size() != 100) state.SkipWithError("wrong value size");
}

void C1_anchor(benchmark::State &state) {
    Buffer out;
    for (int i = 0; i < kWarmup; ++i) raw->get("c1:100", out);
    for (auto _ : state) {
        raw->get("c1:100", out);
        benchmark::DoNotOptimize(out.data());
    }
    if (out.size() != 100) state.SkipWithError("wrong value size");
}

void C2(benchmark::State &state, const std::vector<std::string_view> *keys) {
    std::vector<cachekit_buf> outs(kBatch, cachekit_buf CACHEKIT_BUF_INIT);
    std::vector<bool> found;
    for (int i = 0; i < kWarmup / 10; ++i) backend->get_many(*keys, outs.data(), found, Deadline::after(5000ms));
    for (auto _ : state) {
        backend->get_many(*keys, outs.data(), found, Deadline::after(5000ms));
        benchmark::DoNotOptimize(outs.data());
    }
    for (size_t i = 0; i < kBatch; ++i) {
        if (!found[i]) state.SkipWithError("batch key missing");
        cachekit::buf_release(&outs[i]);
    }
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * kBatch));
}

}  // namespace

int main(int argc, char **argv) {
    return cachekit::bench::redis_bench_main(argc, argv, "cluster_bench", [] {
        namespace c3 = cachekit::bench::c3;
        cachekit::testing::RedisCluster cluster;
        backend = cachekit::l2::open_redis_cluster(cachekit::l2::parse_cluster_url(cluster.url()));
        raw = std::make_unique<cachekit::bench::RawConnection>(
            cluster.owner_of(cachekit::l2::cluster::key_slot("c1:100")));

        const std::string small = payload(100);
        backend->set("c1:100", small, std::nullopt, Deadline::after(5000ms));
        std::set<int> owners;
        for (size_t i = 0; i < kBatch; ++i) {
            spread_keys.push_back("c2:" + std::to_string(i));
            one_node_keys.push_back("{c2}:" + std::to_string(i));
            owners.insert(cluster.owner_of(cachekit::l2::cluster::key_slot(spread_keys.back())));
        }
        if (owners.size() != 3) throw std::runtime_error("the spread keys do not cover 3 primaries");
        std::vector<cachekit::l2::KeyValue> entries;
        for (size_t i = 0; i < kBatch; ++i) {
            spread_views.push_back(spread_keys[i]);
            one_node_views.push_back(one_node_keys[i]);
            entries.push_back({spread_keys[i], small});
            entries.push_back({one_node_keys[i], small});
        }
        backend->set_many(entries, std::nullopt, Deadline::after(5000ms));

        benchmark::RegisterBenchmark("C1/cachekit", C1_cachekit)->UseRealTime();
        benchmark::RegisterBenchmark("C1/anchor", C1_anchor)->UseRealTime();
        benchmark::RegisterBenchmark("C2/spread", C2, &spread_views)->UseRealTime();
        benchmark::RegisterBenchmark("C2/one-node", C2, &one_node_views)->UseRealTime();
        // C3 on the cluster: the raw SET goes to the primary that owns the stored key.
        std::unique_ptr<cachekit::bench::RawConnection> c3_raw;
        c3::Target c3_target;
        c3::setup_and_register(&c3_target, cluster.url(), "-cluster", [&] {
            c3_raw = std::make_unique<cachekit::bench::RawConnection>(
                cluster.owner_of(cachekit::l2::cluster::key_slot(c3::kStoredKey)));
            return c3_raw->get();
        });
        cachekit::bench::run_registered();
        c3::close(&c3_target);
        raw.reset();
        backend.reset();
    });
}
