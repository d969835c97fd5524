// B8-TLS: Backend::get over rediss:// vs over redis:// on the same
// redis-server (one process with both ports), for 100 B and 14 KiB values:
// the price of TLS on a hit, read as the ratio of the two. Makes throwaway
// certificates (tests/redis/tls_certs.hpp) and its own server.
#include <chrono>
#include <memory>
#include <string>

#include "l2/redis/redis_backend.hpp"
#include "redis_bench_main.hpp"
#include "tls_certs.hpp"

namespace {

using cachekit::Buffer;
using cachekit::l2::Deadline;
using namespace std::chrono_literals;

constexpr int kWarmup = 200;

std::unique_ptr<cachekit::l2::Backend> plain, secure;

void hit(benchmark::State &state, cachekit::l2::Backend *b, std::string key, size_t size) {
    Buffer out;
    for (int i = 0; i < kWarmup; ++i) b->get(key, out.get(), Deadline::after(5000ms));
    for (auto _ : state) {
        bool found = b->get(key, out.get(), Deadline::after(5000ms));
        benchmark::DoNotOptimize(found);
    }
    if (out.size() != size) state.SkipWithError("wrong value size");
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * size));
}

}  // namespace

int main(int argc, char **argv) {
    return cachekit::bench::redis_bench_main(argc, argv, "redis_tls_bench", [] {
        const std::string dir = cachekit::testing::make_tls_certs();
        if (dir.empty()) throw std::runtime_error("cannot make certificates with the openssl CLI");
        {
            cachekit::testing::TlsServer server = cachekit::testing::start_tls_server(dir, "server", false);
            plain = cachekit::l2::open_redis(cachekit::l2::parse_redis_url(server.server->url()));
            secure = cachekit::l2::open_redis(cachekit::l2::parse_redis_url(
                "rediss://127.0.0.1:" + std::to_string(server.tls_port) + "?ssl_ca_certs=" + dir + "/ca.crt"));
            const std::string small = cachekit::bench::payload(100), large = cachekit::bench::payload(14 * 1024);
            plain->set("b8:100", small, std::nullopt, Deadline::after(5000ms));
            plain->set("b8:14k", large, std::nullopt, Deadline::after(5000ms));

            benchmark::RegisterBenchmark("B8TLS-100/plain", hit, plain.get(), std::string("b8:100"), small.size())
                ->UseRealTime();
            benchmark::RegisterBenchmark("B8TLS-100/tls", hit, secure.get(), std::string("b8:100"), small.size())
                ->UseRealTime();
            benchmark::RegisterBenchmark("B8TLS-14k/plain", hit, plain.get(), std::string("b8:14k"), large.size())
                ->UseRealTime();
            benchmark::RegisterBenchmark("B8TLS-14k/tls", hit, secure.get(), std::string("b8:14k"), large.size())
                ->UseRealTime();
            cachekit::bench::run_registered();
            secure.reset();
            plain.reset();
        }
        cachekit::testing::run_shell("rm -rf " + dir);
    });
}
